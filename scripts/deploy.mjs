// `npm run deploy [-- --env staging|production]`: remote D1 migrations first, then `wrangler deploy`, stopping at the first failure.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { CliError, runMain } from "./lib/cli.mjs";
import { wranglerBin, wranglerToml } from "./lib/paths.mjs";
import { runCommand } from "./lib/run-command.mjs";

const ENVIRONMENTS = ["staging", "production"];

const HELP = `Usage: npm run deploy [-- --env staging|production] [--dry-run]

Deploys agent-threads to one environment (default: production):
  1. wrangler d1 migrations apply DB --remote --env <env>
  2. wrangler deploy --env <env>
Stops at the first step that fails. Needs \`wrangler login\` (or CLOUDFLARE_API_TOKEN), the environment's D1
database id in wrangler.toml and its secrets set with \`wrangler secret put NAME --env <env>\` (see README).

  --env <name>   staging or production (default production)
  --dry-run      check the configuration and print the commands without running them
  -h, --help     this text`;

/** The database_id of `[[env.<env>.d1_databases]]`, read line by line (wrangler.toml keeps one per section). */
export function databaseIdFor(tomlText, env) {
  let inSection = false;
  for (const line of tomlText.split(/\r?\n/)) {
    const header = /^\s*\[\[?([^\]]+)\]\]?\s*(#.*)?$/.exec(line);
    if (header) {
      inSection = header[1].trim() === `env.${env}.d1_databases`;
      continue;
    }
    const id = inSection ? /^\s*database_id\s*=\s*"([^"]*)"/.exec(line) : null;
    if (id) return id[1];
  }
  return null;
}

const PLACEHOLDER_ID = /^0{8}-0{4}-4000-8000-0{11}\d$/;

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

  const databaseId = databaseIdFor(readFileSync(wranglerToml, "utf8"), env);
  if (databaseId === null)
    throw new CliError(`wrangler.toml has no [[env.${env}.d1_databases]] database_id.`);
  if (PLACEHOLDER_ID.test(databaseId)) {
    throw new CliError(
      `wrangler.toml still has the placeholder D1 id for ${env}: run \`npx wrangler d1 create agent-threads-${env}\` ` +
        `and paste its database_id into [[env.${env}.d1_databases]] (README, "Deploy for real").`,
    );
  }

  const steps = [
    ["d1", "migrations", "apply", "DB", "--remote", "--env", env],
    ["deploy", "--env", env],
  ];
  if (values["dry-run"]) {
    for (const args of steps) console.log(`wrangler ${args.join(" ")}`);
    return 0;
  }
  const wrangler = wranglerBin();
  for (const args of steps) {
    console.log(`\n$ wrangler ${args.join(" ")}`);
    const code = await runCommand(wrangler, args);
    if (code !== 0)
      throw new CliError(`\`wrangler ${args.join(" ")}\` failed (exit ${code}); nothing after it ran.`, code);
  }
  console.log(`\nDeployed to ${env}.`);
  return 0;
}

await runMain(main);
