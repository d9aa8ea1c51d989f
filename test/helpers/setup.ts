// Applies the D1 migrations once per test file's storage (to every D1 shard: they share one list), and warms the
// module graph.
import { applyD1Migrations } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS ?? []);
await applyD1Migrations(env.DB_SHARD_1, env.TEST_MIGRATIONS ?? []);
await exports.default.fetch("http://warmup.test/v1/health");
