// What `npm run deploy` does, in order, with every outside effect injected (reading secrets, running wrangler):
// pure functions over text, so tests need neither an account nor wrangler.

/**
 * The required secrets that `wrangler secret list --format json` does not list. `listOutput` is that command's
 * stdout; anything but a JSON array of `{name}` is an error, never "nothing is missing".
 */
export function missingSecrets(required, listOutput) {
  let listed;
  try {
    listed = JSON.parse(listOutput);
  } catch {
    throw new Error("`wrangler secret list` did not print JSON.");
  }
  if (!Array.isArray(listed) || !listed.every((s) => typeof s?.name === "string")) {
    throw new Error("`wrangler secret list` printed something other than a list of secrets.");
  }
  const names = new Set(listed.map((s) => s.name));
  return required.filter((name) => !names.has(name));
}

/** A string value `key = "…"` of one wrangler.toml section (`[name]` or `[[name]]`), or null when it is not there. */
export function tomlValue(tomlText, section, key) {
  return tomlValues(tomlText, section, key)[0] ?? null;
}

/** Every value `key = "…"` of a repeated wrangler.toml section (`[[name]]`), in order. */
export function tomlValues(tomlText, section, key) {
  const values = [];
  let inSection = false;
  for (const line of tomlText.split(/\r?\n/)) {
    const header = /^\s*\[\[?([^\]]+)\]\]?\s*(#.*)?$/.exec(line);
    if (header) {
      inSection = header[1].trim() === section;
      continue;
    }
    const match = inSection ? /^\s*([A-Za-z0-9_]+)\s*=\s*"([^"]*)"/.exec(line) : null;
    if (match && match[1] === key) values.push(match[2]);
  }
  return values;
}

/** The environment's D1 bindings (the control plane `DB` and each projection shard), each migrated on deploy. */
export function d1Bindings(tomlText, env) {
  const bindings = tomlValues(tomlText, `env.${env}.d1_databases`, "binding");
  return bindings.length === 0 ? ["DB"] : bindings;
}

const PLACEHOLDER_ID = /^0{8}-0{4}-4000-8000-0{10}\d\d$/;

/** The checks that need no account: the environment's D1 id and PUBLIC_HOSTS, and a current migration list. */
export function configurationProblem({ env, tomlText, migrationsFresh }) {
  const databaseId = tomlValue(tomlText, `env.${env}.d1_databases`, "database_id");
  if (databaseId === null) return `wrangler.toml has no [[env.${env}.d1_databases]] database_id.`;
  if (tomlValues(tomlText, `env.${env}.d1_databases`, "database_id").some((id) => PLACEHOLDER_ID.test(id))) {
    return (
      `wrangler.toml still has the placeholder D1 id for ${env}: run \`npx wrangler d1 create agent-threads-${env}\` ` +
      `and paste its database_id into [[env.${env}.d1_databases]] (README, "Deploy for real").`
    );
  }
  if ((tomlValue(tomlText, `env.${env}.vars`, "PUBLIC_HOSTS") ?? "").trim() === "") {
    return (
      `wrangler.toml has no PUBLIC_HOSTS for ${env}: set [env.${env}.vars] PUBLIC_HOSTS to the host(s) the Worker ` +
      `is served on, e.g. "agents.example.com" (README, "Configuration").`
    );
  }
  const buckets = tomlValues(tomlText, `env.${env}.r2_buckets`, "binding");
  const bucketNames = tomlValues(tomlText, `env.${env}.r2_buckets`, "bucket_name");
  const attachments = buckets.indexOf("ATTACHMENTS");
  if (attachments === -1 || (bucketNames[attachments] ?? "").trim() === "") {
    return (
      `wrangler.toml has no attachments bucket for ${env}: add [[env.${env}.r2_buckets]] binding = "ATTACHMENTS" ` +
      `with its bucket_name, created by \`npx wrangler r2 bucket create <name>\` (README, "Deploy for real").`
    );
  }
  if (!migrationsFresh) {
    return "src/storage/d1/migration-names.ts is stale: run `npm run migrations:names` and commit it.";
  }
  return null;
}

/**
 * The deploy: configuration, then the secrets (`listSecrets(env)` resolves with the stdout of
 * `wrangler secret list --env <env> --format json`), then each wrangler step through `run(args)` → exit code.
 * Throws at the first problem, before anything after it ran; `log` prints progress.
 */
export async function runDeploy({ env, dryRun, tomlText, migrationsFresh, required, listSecrets, run, log }) {
  const problem = configurationProblem({ env, tomlText, migrationsFresh });
  if (problem !== null) throw new Error(problem);
  // The control plane and every projection shard: one migration list for all (docs/decisions.md).
  const steps = [
    ...d1Bindings(tomlText, env).map((binding) => [
      "d1",
      "migrations",
      "apply",
      binding,
      "--remote",
      "--env",
      env,
    ]),
    ["deploy", "--env", env],
  ];
  if (dryRun) {
    log(`wrangler secret list --env ${env} --format json   # must list: ${required.join(", ")}`);
    for (const args of steps) log(`wrangler ${args.join(" ")}`);
    return;
  }
  const missing = missingSecrets(required, await listSecrets(env));
  if (missing.length > 0) {
    throw new Error(
      `${env} is missing ${missing.length === 1 ? "a secret" : "secrets"}: ${missing.join(", ")}. Set each with ` +
        `\`npx wrangler secret put NAME --env ${env}\` (README, "Deploy for real"); nothing was deployed.`,
    );
  }
  log(`All ${required.length} secrets are set for ${env}.`);
  for (const args of steps) {
    log(`\n$ wrangler ${args.join(" ")}`);
    const code = await run(args);
    if (code !== 0) {
      const error = new Error(`\`wrangler ${args.join(" ")}\` failed (exit ${code}); nothing after it ran.`);
      error.exitCode = code;
      throw error;
    }
  }
  log(`\nDeployed to ${env}.`);
}
