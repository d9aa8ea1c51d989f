// `npm run deploy [-- --env staging|production]`: checks the configuration and secrets, then remote D1 migrations,
// then `wrangler deploy`, stopping at the first failure (the steps: scripts/lib/deploy-checks.mjs).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { runDeploy } from "./lib/deploy-checks.mjs";
import { parseDevVars } from "./lib/dev-vars.mjs";
import { childEnv, devVarsExamplePath, root, wranglerBin, wranglerToml } from "./lib/paths.mjs";
import { runCommand } from "./lib/run-command.mjs";
import { migrationNamesFresh } from "./migration-names.mjs";

const ENVIRONMENTS = ["staging", "production"];

const HELP = `Usage: npm run deploy [-- --env staging|production] [--dry-run]

Deploys agent-threads to one environment (default: production):
  0. checks wrangler.toml (the environment's D1 database id and PUBLIC_HOSTS), that the build lists every
     migration, and that every secret of .dev.vars.example is set (wrangler secret list --env <env>)
  1. wrangler d1 migrations apply <binding> --remote --env <env>, for DB and every projection shard (DB_SHARD_1, …)
  2. wrangler deploy --env <env>
Stops at the first step that fails. Needs \`wrangler login\` (or CLOUDFLARE_API_TOKEN), the environment's D1
database id and PUBLIC_HOSTS in wrangler.toml and its secrets set with \`wrangler secret put NAME --env <env>\`
(see README).

  --env <name>   staging or production (default production)
  --dry-run      check the configuration (not the secrets) and print the commands without running them
  -h, --help     this text`;

/** `wrangler secret list --env <env> --format json`'s stdout; a failure (not logged in, no Worker) throws. */
function listSecretsWithWrangler(env) {
  return new Promise((resolve, reject) => {
    const args = ["secret", "list", "--env", env, "--format", "json"];
    const child = spawn(wranglerBin(), args, {
      cwd: root,
      env: childEnv(),
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) resolve(stdout);
      else
        reject(new Error(`\`wrangler ${args.join(" ")}\` failed (exit ${code}): cannot check the secrets.`));
    });
  });
}

async function main() {
  const { values } = parseArgs({
    options: {
      env: { type: "string", default: "production" },
      "dry-run": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const env = values.env;
  if (!ENVIRONMENTS.includes(env))
    throw new CliError(`--env must be one of ${ENVIRONMENTS.join(", ")} (got "${env}").`);
  try {
    await runDeploy({
      env,
      dryRun: values["dry-run"] === true,
      tomlText: readFileSync(wranglerToml, "utf8"),
      migrationsFresh: migrationNamesFresh(),
      // Every Worker secret: the names in .dev.vars.example, the file `npm run types` reads.
      required: Object.keys(parseDevVars(readFileSync(devVarsExamplePath, "utf8"))),
      listSecrets: listSecretsWithWrangler,
      run: (args) => runCommand(wranglerBin(), args),
      log: (line) => console.log(line),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new CliError(message, typeof error?.exitCode === "number" ? error.exitCode : 1);
  }
  return 0;
}

if (isMain(import.meta.url)) await runMain(main);
