// Tests that need a real PostgreSQL run in Node, not workerd: `npm run test:control-plane` starts a throwaway server
// and runs this config with its address in CONTROL_PLANE_TEST_DATABASE_URL (docs/control-plane.md#owning-the-migration).
import { defineConfig } from "vitest/config";

const databaseUrl = process.env.CONTROL_PLANE_TEST_DATABASE_URL;
if (databaseUrl === undefined || databaseUrl === "") {
  throw new Error(
    "CONTROL_PLANE_TEST_DATABASE_URL is not set: run `npm run test:control-plane`, which starts a PostgreSQL for these tests.",
  );
}

export default defineConfig({
  test: {
    environment: "node",
    include: ["test/control-plane/**/*.test.ts"],
    provide: { databaseUrl },
    testTimeout: 20_000,
    hookTimeout: 60_000,
    reporters: ["default", ["json", { outputFile: "test-results/control-plane.json" }]],
  },
});
