// `npm run dev`: local secrets, local D1 migrations, `wrangler dev`, a seeded demo agent — one command on a fresh clone.
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { dirname, join, relative } from "node:path";
import { parseArgs } from "node:util";
import { launchPublic, ThreadConnection } from "agent-threads/client";
import pg from "pg";
import { writeHyperdriveConfig } from "./build-hyperdrive-config.mjs";
import { buildControlPlane } from "./control-plane.mjs";
import { loadMigration } from "./control-plane-sql.mjs";
import { CliError, runMain } from "./lib/cli.mjs";
import { D1_BINDINGS } from "./lib/d1-bindings.mjs";
import { ensureDevVars, readDevVars } from "./lib/dev-vars.mjs";
import { describeClientError } from "./lib/http-client.mjs";
import { ensureLocalPostgres } from "./lib/local-postgres.mjs";
import { DEFAULT_PORT, forgetDevServer, recordDevServer } from "./lib/local-server.mjs";
import { childEnv, demoStatePath, devVarsExamplePath, devVarsPath, root, wranglerBin } from "./lib/paths.mjs";
import { freePort } from "./lib/process-group.mjs";
import { randomSecret } from "./lib/random-secret.mjs";
import { runQuiet, signalNumber } from "./lib/run-command.mjs";
import { waitForHealth } from "./lib/wait-for-health.mjs";
import { seedDemo } from "./seed-demo.mjs";

const HELP = `Usage: npm run dev [-- --port 8787 --no-seed --check --control-plane d1|postgres|hyperdrive]

Creates .dev.vars with random secrets when it is missing, applies the local D1 migrations, starts
\`wrangler dev\` on 127.0.0.1:<port> (PORT env or --port, default 8787), waits for /v1/health and seeds a
demo tenant and public demo agent. Ctrl-C stops everything.

  --port <n>   port (default PORT or 8787)
  --no-seed    start without seeding the demo
  --check      start, seed, launch the demo agent once, then stop: exit 0 only if all of it worked (CI)
  --control-plane postgres
               keep agents, versions, releases and pins in a local PostgreSQL (.tmp/postgres, started if not
               running) behind the control-plane service; the Worker runs with CONTROL_PLANE=http
               (docs/control-plane.md). Default: d1.
  --control-plane hyperdrive
               the same local PostgreSQL (migrated here), reached from the Worker itself through a local Hyperdrive
               binding: the Worker runs from wrangler.hyperdrive.toml (npm run build:hyperdrive-config) with
               CONTROL_PLANE=hyperdrive and localConnectionString set to that database.`;

function portIsFree(port) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: "string" },
      "no-seed": { type: "boolean" },
      check: { type: "boolean" },
      "control-plane": { type: "string", default: "d1" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const port = Number(values.port ?? process.env.PORT ?? String(DEFAULT_PORT));
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new CliError("the port must be 1–65535.");
  const wrangler = wranglerBin();
  if (!(await portIsFree(port))) {
    throw new CliError(
      `port ${port} is already in use: stop the other server or run \`PORT=8788 npm run dev\`.`,
    );
  }

  const vars = ensureDevVars(devVarsPath, devVarsExamplePath);
  if (vars.created) console.log("Created .dev.vars with fresh random secrets (mode 0600).");
  else if (vars.added.length > 0) console.log(`Added new secrets to .dev.vars: ${vars.added.join(", ")}.`);

  console.log("Applying local D1 migrations…");
  // The control plane and every projection shard take the same list (docs/decisions.md). CI=true keeps wrangler
  // from asking for confirmation. Wrangler prints a table per migration; one line per database says the same.
  for (const binding of D1_BINDINGS) {
    const migrated = await runQuiet(wrangler, ["d1", "migrations", "apply", binding, "--local"], {
      env: { CI: "true" },
    });
    if (migrated.code !== 0) {
      console.error(migrated.output);
      throw new CliError(`applying local D1 migrations to ${binding} failed (exit ${migrated.code}).`);
    }
    console.log(`  ${binding}: ${describeMigrations(migrated.output)}`);
  }

  const controlPlane = values["control-plane"];
  if (controlPlane !== "d1" && controlPlane !== "postgres" && controlPlane !== "hyperdrive") {
    throw new CliError(`--control-plane must be d1, postgres or hyperdrive, not ${controlPlane}.`);
  }
  const service =
    controlPlane === "postgres"
      ? await startPostgresControlPlane()
      : controlPlane === "hyperdrive"
        ? await startHyperdriveControlPlane()
        : null;

  const child = spawn(
    wrangler,
    [
      "dev",
      "--port",
      String(port),
      "--ip",
      "127.0.0.1",
      "--show-interactive-dev-session=false",
      ...(service?.wranglerArgs ?? []),
    ],
    // No fetch of the `Request.cf` sample from the internet: offline it only prints a stack trace, and the local
    // placeholder serves the same purpose.
    { cwd: root, env: childEnv({ CLOUDFLARE_CF_FETCH_ENABLED: "false" }), stdio: "inherit" },
  );
  // The other scripts (tenant:create, the demos) find this server's port here while it runs.
  recordDevServer(port);
  let exited = false;
  const done = new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      exited = true;
      forgetDevServer();
      service?.stop();
      resolve(code ?? (signal ? 128 + signalNumber(signal) : 1));
    });
  });
  child.on("error", (error) => console.error(`error: could not start wrangler dev: ${error.message}`));
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => {
      if (!exited) child.kill(signal);
    });
  }

  const baseUrl = `http://127.0.0.1:${port}`;
  const shownUrl = `http://localhost:${port}`;
  let ok = true;
  try {
    const health = await waitForHealth(baseUrl, { stillRunning: () => !exited });
    const environment = typeof health?.environment === "string" ? health.environment : "development";
    if (values["no-seed"]) {
      printSummary({
        shownUrl,
        publicKey: undefined,
        note: "seeding skipped (--no-seed)",
        check: values.check,
      });
    } else {
      try {
        const { state } = await seedDemo({
          // Each control plane keeps its own demo tenant: one seeded into PostgreSQL is unknown to D1's releases.
          ...(service !== null ? { statePath: join(dirname(demoStatePath), "demo-postgres.json") } : {}),
          baseUrl,
          operatorToken: readDevVars(devVarsPath)?.OPERATOR_TOKEN,
          port,
          environment,
        });
        if (values.check) await launchDemo(baseUrl, shownUrl, state.publicKey);
        if (values.check && service?.stopService) {
          await pinnedThreadOutlivesControlPlane(baseUrl, shownUrl, state.publicKey, service);
        } else if (values.check && service !== null) {
          const launch = await launchPublic({ baseUrl, agentKey: state.publicKey, origin: shownUrl });
          const answer = await demoTurn(launch, shownUrl, "Hello.");
          await service.pinStored(launch.threadId);
          console.log(
            `Demo turn over ${controlPlane}: answered (${JSON.stringify(answer.slice(0, 40))}), its pin is in PostgreSQL.`,
          );
        }
        printSummary({ shownUrl, publicKey: state.publicKey, check: values.check });
      } catch (error) {
        ok = false;
        const message = error instanceof Error ? error.message : String(error);
        printSummary({
          shownUrl,
          publicKey: undefined,
          note: `seeding the demo failed: ${message}`,
          check: values.check,
        });
      }
    }
  } catch (error) {
    if (!exited) child.kill("SIGTERM");
    await done;
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
  if (values.check) {
    if (!exited) child.kill("SIGTERM");
    await done;
    if (!ok) throw new CliError("`npm run dev` check failed: the server started but the demo is not usable.");
    console.log("`npm run dev` check passed: server healthy, demo seeded, demo agent launches.");
    return 0;
  }
  return done;
}

/**
 * `--control-plane postgres`: a local PostgreSQL, the control-plane service on a free port (migrating its own
 * dedicated database), and the Worker's arguments to reach it over HTTP with a fresh workload key set.
 */
async function startPostgresControlPlane() {
  let database;
  try {
    database = await ensureLocalPostgres();
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
  const keys = JSON.stringify({ current: "w1", keys: { w1: randomSecret() } });
  const servicePort = await freePort();
  const bundle = await buildControlPlane();
  const service = spawn(process.execPath, [bundle], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      CONTROL_PLANE_KEYS: keys,
      PORT: String(servicePort),
      CONTROL_PLANE_MIGRATE: "1",
    },
    stdio: "inherit",
  });
  let stopped = false;
  const stopService = () => {
    if (service.exitCode === null) service.kill("SIGTERM");
    return new Promise((resolve) => (service.exitCode !== null ? resolve() : service.once("exit", resolve)));
  };
  const stop = () => {
    if (stopped) return;
    stopped = true;
    if (service.exitCode === null) service.kill("SIGTERM");
    database.stop();
  };
  process.on("exit", stop);
  const serviceUrl = `http://127.0.0.1:${servicePort}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await fetch(`${serviceUrl}/ready`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (service.exitCode !== null || Date.now() > deadline) {
      stop();
      throw new CliError(`the control-plane service did not become ready on ${serviceUrl}.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  console.log(`Control plane: ${serviceUrl} over ${database.url} (CONTROL_PLANE=http).`);
  return {
    stop,
    stopService,
    serviceUrl,
    wranglerArgs: [
      "--var",
      "CONTROL_PLANE:http",
      "--var",
      `CONTROL_PLANE_URL:${serviceUrl}`,
      "--var",
      `CONTROL_PLANE_TOKEN:${keys}`,
    ],
  };
}

/**
 * `--control-plane hyperdrive`: the local PostgreSQL of the postgres mode, migrated here with the canonical SQL
 * (docs/control-plane.md#owning-the-migration), and the Worker run from the generated Hyperdrive config whose
 * localConnectionString points at it (docs/control-plane.md#hyperdrive). No service: the Worker holds the driver.
 */
async function startHyperdriveControlPlane() {
  let database;
  try {
    database = await ensureLocalPostgres();
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
  process.on("exit", () => database.stop());
  const migration = await loadMigration();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query(migration.postgresMigrationSql(migration.DEFAULT_PREFIX));
    await client.query("COMMIT");
  } finally {
    await client.end();
  }
  // wrangler refuses a localConnectionString without a password; the local server trusts 127.0.0.1 and ignores it.
  const local = new URL(database.url);
  local.password = "local";
  const config = writeHyperdriveConfig({ localConnectionString: local.toString() });
  console.log(
    `Control plane: ${database.url} through a local Hyperdrive binding (CONTROL_PLANE=hyperdrive).`,
  );
  /** The check's proof that the Worker wrote through Hyperdrive: the thread's pin row is in PostgreSQL, not D1. */
  const pinStored = async (threadId) => {
    const reader = new pg.Client({ connectionString: database.url });
    await reader.connect();
    try {
      const pins = `${migration.DEFAULT_PREFIX}_thread_pins`;
      const found = await reader.query(`SELECT 1 FROM ${pins} WHERE thread_id = $1`, [threadId]);
      if (found.rowCount !== 1) throw new Error(`no pin for ${threadId} in PostgreSQL's ${pins}.`);
    } finally {
      await reader.end();
    }
  };
  return { stop: () => database.stop(), pinStored, wranglerArgs: ["--config", config] };
}

/** One line for wrangler's migration output: how many it applied, from its one "Executing" line per migration. */
function describeMigrations(output) {
  const applied = output.match(/Executing on local database/g)?.length ?? 0;
  if (applied === 0) return "up to date";
  return `${applied} migration${applied === 1 ? "" : "s"} applied`;
}

/**
 * The check mode's proof that pins live in the thread object (docs/control-plane.md#when-the-control-plane-is-down):
 * a thread answers a turn, the control-plane service stops, and the same thread (same launch) answers another.
 */
async function pinnedThreadOutlivesControlPlane(baseUrl, origin, agentKey, service) {
  const launch = await launchPublic({ baseUrl, agentKey, origin });
  await demoTurn(launch, origin, "Hello.");
  await service.stopService();
  const down = await fetch(`${service.serviceUrl}/health`).then(
    () => false,
    () => true,
  );
  if (!down) throw new Error("the control-plane service still answers after it was stopped.");
  const answer = await demoTurn(launch, origin, "Are you still there?");
  console.log(
    `Control plane stopped: the pinned thread still answered (${JSON.stringify(answer.slice(0, 40))}).`,
  );
}

/** One turn of the demo agent on `launch`'s thread: resolves with the assistant's reply. */
async function demoTurn(launch, origin, text) {
  const connection = new ThreadConnection({ launch, origin });
  await connection.connect();
  const reply = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no reply to "${text}" within 15 s`)), 15_000);
    const off = connection.on("entry", (frame) => {
      if (frame.entry.role !== "assistant") return;
      clearTimeout(timer);
      off();
      resolve(frame.entry.text);
    });
  });
  connection.send({ text });
  const answer = await reply;
  connection.close();
  return answer;
}

/** The check mode's proof that the seeded agent works: a browser-style launch from an allowed origin. */
async function launchDemo(baseUrl, origin, agentKey) {
  try {
    await launchPublic({ baseUrl, agentKey, origin });
  } catch (error) {
    throw new Error(`launching the demo agent failed: ${describeClientError(error)}`);
  }
}

function printSummary({ shownUrl, publicKey, note, check }) {
  const lines = [
    "",
    "agent-threads is running (local development).",
    `  Health:          ${shownUrl}/v1/health`,
    `  Demo agent key:  ${publicKey ?? "(not seeded)"}`,
    `  Demo page:       ${shownUrl}/demo.html${publicKey ? `?key=${publicKey}` : ""}`,
    `  Tenant API key:  ${relative(root, demoStatePath)}  (apiKey; the demo tenant's admin key)`,
    `  Console:         ${shownUrl}/console/  (sign in with that API key)`,
    `  Operator token:  ${relative(root, devVarsPath)}  (OPERATOR_TOKEN; \`npm run tenant:create -- <name>\`)`,
  ];
  if (note) lines.push(`  Note: ${note}`);
  lines.push(check ? "Stopping (--check)." : "Press Ctrl-C to stop.", "");
  console.log(lines.join("\n"));
}

await runMain(main);
