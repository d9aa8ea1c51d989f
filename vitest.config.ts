import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Tests run inside workerd with the Worker's real bindings (D1, Durable Objects), plus test-only secrets.
export default defineConfig(async () => {
  const migrations = await readD1Migrations("migrations");
  return {
    plugins: [
      cloudflareTest({
        // Production's entry with ThreadAgent swapped for a subclass whose clock and timers tests drive.
        main: "./test/helpers/test-worker.ts",
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            LAUNCH_TOKEN_KEYS: JSON.stringify({
              current: "k2",
              keys: {
                k1: "dGVzdC1sYXVuY2gta2V5LW9uZS0wMTIzNDU2Nzg5YWJjZGVm",
                k2: "dGVzdC1sYXVuY2gta2V5LXR3by0wMTIzNDU2Nzg5YWJjZGVm",
              },
            }),
            VISITOR_TOKEN_KEY: JSON.stringify({
              current: "v2",
              keys: {
                v1: "dGVzdC12aXNpdG9yLWtleS0wMTIzNDU2Nzg5YWJjZGVmZ2g",
                v2: "dGVzdC12aXNpdG9yLWtleS10d28tMDEyMzQ1Njc4OWFiY2Q",
              },
            }),
            DO_NAME_KEY: "dGVzdC1kby1uYW1lLWtleS0wMTIzNDU2Nzg5YWJjZGVmZ2g",
            API_KEY_PEPPER: "dGVzdC1hcGkta2V5LXBlcHBlci0wMTIzNDU2Nzg5YWJjZGVm",
            SECRETS_KEY: "dGVzdC1zZWNyZXRzLWtleS0wMTIzNDU2Nzg5YWJjZGVmZ2g",
            OPERATOR_TOKEN: "test-operator-token-0123456789abcdef",
            RECEIPT_SIGNING_KEYS: JSON.stringify({
              current: "r2",
              keys: {
                r1: "dGVzdC1yZWNlaXB0LWtleS1vbmUtMDEyMzQ1Njc4OWFiY2RlZg",
                r2: "dGVzdC1yZWNlaXB0LWtleS10d28tMDEyMzQ1Njc4OWFiY2RlZg",
              },
            }),
            // Tests read D1 right after a turn: every turn drains at once, as with a window of 0 in production.
            // test/integration/projection-window.test.ts sets a window per object.
            PROJECTION_WINDOW_MS: "0",
            // A shard move's steps follow each other at once; every request reads the shard map afresh.
            SHARD_MAP_CACHE_MS: "0",
            SHARD_MOVE_GRACE_MS: "0",
          },
        },
      }),
    ],
    // As in wrangler.toml: the default build has no Hyperdrive adapter (docs/control-plane.md#hyperdrive).
    resolve: { alias: { "control-plane-hyperdrive": "./src/storage/postgres/hyperdrive-absent.ts" } },
    test: {
      include: ["test/unit/**/*.test.ts", "test/integration/**/*.test.ts"],
      setupFiles: ["./test/helpers/setup.ts"],
      testTimeout: 20_000,
      hookTimeout: 60_000,
      teardownTimeout: 60_000,
      reporters: process.env.CI
        ? ["default", ["json", { outputFile: "test-results/vitest.json" }]]
        : ["default"],
    },
  };
});
