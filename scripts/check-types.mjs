// Fails when worker-configuration.d.ts is stale against wrangler.toml (run `npm run types` to refresh it).
import { spawnSync } from "node:child_process";

const result = spawnSync("wrangler", ["types", "--env-file", ".dev.vars.example", "--check"], {
  stdio: "inherit",
  shell: false,
});
if (result.status !== 0) {
  console.error("worker-configuration.d.ts is out of date: run `npm run types` and commit the result.");
  process.exit(result.status ?? 1);
}
