// Starts the throwaway `wrangler dev` servers a bench run measures (the product Worker and the bench-only echo and
// peer Workers), on loopback ports with fresh secrets and state, and stops their whole process groups afterwards.
import { spawn } from "node:child_process";
import { appendFileSync, createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { D1_BINDINGS } from "../../scripts/lib/d1-bindings.mjs";
import { childEnv, root, wranglerBin } from "../../scripts/lib/paths.mjs";
import { freePort, stopProcessGroup, writeThrowawayVars } from "../../scripts/lib/process-group.mjs";
import { waitForHealth } from "../../scripts/lib/wait-for-health.mjs";

export const ECHO_CONFIG = join(root, "bench", "echo-worker", "wrangler.toml");
export const D1_DELAY_ENTRY = join(root, "bench", "d1-delay-worker", "src", "index.ts");
export const PEER_CONFIG = join(root, "bench", "peer-worker", "wrangler.toml");

/** Every child this module started, so a failure or Ctrl-C anywhere still stops them all. */
const started = new Set();

export async function stopAll() {
  await Promise.all([...started].map(stopProcessGroup));
  started.clear();
}

/**
 * Applies the product's D1 migrations to each of a Worker's throwaway databases (the product's: every shard); output
 * goes to a log, shown only on failure.
 */
async function migrate(args, dir, name, bindings = D1_BINDINGS) {
  for (const binding of bindings) await migrateOne(binding, args, dir, name);
}

async function migrateOne(binding, args, dir, name) {
  const logFile = join(dir, `${name.replace(/\W+/g, "-")}-${binding}-migrations.log`);
  const child = spawn(wranglerBin(), ["d1", "migrations", "apply", binding, "--local", ...args], {
    cwd: root,
    env: childEnv({ CI: "true", WRANGLER_SEND_METRICS: "false" }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = createWriteStream(logFile);
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  const code = await new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (exitCode) => resolve(exitCode ?? 1));
  });
  await new Promise((resolve) => out.end(resolve));
  if (code !== 0) {
    const tail = readFileSync(logFile, "utf8").split("\n").slice(-20).join("\n");
    throw new Error(`applying D1 migrations for the ${name} failed (exit ${code})\n${tail}`);
  }
}

async function startWrangler({ name, args, dir, log }) {
  const port = await freePort();
  const inspector = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const logFile = join(dir, `${name}.log`);
  let child;
  const spawnWrangler = async () => {
    const out = createWriteStream(logFile, { flags: "a" });
    // detached: wrangler and its workerd children form one process group that stop() ends as a whole.
    child = spawn(
      wranglerBin(),
      [
        "dev",
        ...args,
        "--ip",
        "127.0.0.1",
        "--port",
        String(port),
        "--inspector-port",
        String(inspector),
        "--show-interactive-dev-session=false",
        "--log-level",
        "warn",
      ],
      { cwd: root, env: childEnv({ CI: "true", WRANGLER_SEND_METRICS: "false" }), detached: true },
    );
    started.add(child);
    child.stdout.pipe(out);
    child.stderr.pipe(out);
    log(`starting ${name} on ${baseUrl}…`);
    const running = child;
    try {
      await waitForHealth(baseUrl, {
        stillRunning: () => running.exitCode === null,
        timeoutMs: 120_000,
      });
    } catch (error) {
      await new Promise((resolve) => out.end(resolve));
      const tail = readFileSync(logFile, "utf8").split("\n").slice(-30).join("\n");
      throw new Error(`${error instanceof Error ? error.message : error}\n--- ${name} output ---\n${tail}`);
    }
  };
  await spawnWrangler();
  return {
    baseUrl,
    port,
    inspectorPort: inspector,
    get child() {
      return child;
    },
    logFile,
    stop: () => stopProcessGroup(child),
    /** Stops wrangler and starts it again on the same port and persisted state (a redeploy, as threads see it). */
    restart: async () => {
      await stopProcessGroup(child);
      started.delete(child);
      await spawnWrangler();
    },
  };
}

/**
 * The product Worker exactly as `npm run dev` runs it (wrangler.toml, development environment), with throwaway
 * secrets, D1 and Durable Object state in a temporary directory. `minify: false` keeps function names for profiles;
 * `projectionWindowMs` overrides `PROJECTION_WINDOW_MS`.
 */
export async function startProductWorker({
  log = () => {},
  minify = true,
  projectionWindowMs,
  extraArgs = [],
} = {}) {
  const dir = mkdtempSync(join(tmpdir(), "agent-threads-bench-"));
  const state = join(dir, "state");
  const { varsFile, vars } = writeThrowawayVars(dir, "bench.vars");
  // A window other than wrangler.toml's, to see what coalescing buys at B2's pace (`--projection-window`).
  if (projectionWindowMs !== undefined)
    appendFileSync(varsFile, `PROJECTION_WINDOW_MS=${projectionWindowMs}\n`);
  log("applying D1 migrations to a throwaway local database…");
  await migrate(["--persist-to", state], dir, "product worker");
  const server = await startWrangler({
    name: "product worker",
    args: [
      "--persist-to",
      state,
      "--env-file",
      varsFile,
      ...(minify ? [] : ["--minify=false"]),
      ...extraArgs,
    ],
    dir,
    log,
  });
  return {
    ...server,
    dir,
    state,
    operatorToken: vars.OPERATOR_TOKEN,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The bench-only Worker (bench/echo-worker): bare echo Agent, entry-store and turn-cost objects. */
export async function startEchoWorker({ log = () => {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "agent-threads-bench-echo-"));
  const state = join(dir, "state");
  // The echo Worker has one D1 (`DB`, the turn-cost object's projection), so it takes the control plane's shard.
  await migrate(["-c", ECHO_CONFIG, "--persist-to", state], dir, "echo worker", ["DB"]);
  const server = await startWrangler({
    name: "echo worker",
    args: ["-c", ECHO_CONFIG, "--persist-to", state],
    dir,
    log,
  });
  return {
    ...server,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The product's wrangler.toml (its local environment only) with the B7 entry as `main` and every path made absolute,
 * written into `dir`: the delayed Worker has exactly the product's bindings, whatever they become.
 */
function delayedConfig(dir) {
  const product = readFileSync(join(root, "wrangler.toml"), "utf8");
  const local = product.slice(0, product.search(/^\[env\./m));
  const abs = (path) => JSON.stringify(join(root, path));
  const config = local
    .replace(/^name = ".*"$/m, 'name = "agent-threads-bench-d1-delay"')
    .replace(/^main = ".*"$/m, `main = ${JSON.stringify(D1_DELAY_ENTRY)}`)
    // Every alias (the shims, the absent Hyperdrive control plane) names a file under src/.
    .replace(/"\.\/(src\/[^"]+)"/g, (_m, path) => abs(path))
    // Every D1 binding (the control plane and each shard) names the migrations folder.
    .replace(/^migrations_dir = "(.*)"$/gm, (_m, path) => `migrations_dir = ${abs(path)}`)
    .replace(/^directory = "(.*)"$/gm, (_m, path) => `directory = ${abs(path)}`)
    .replace(/^\[triggers\][^[]*/m, "");
  const file = join(dir, "wrangler.toml");
  writeFileSync(file, config);
  return file;
}

/**
 * B7's server: the product Worker behind bench/d1-delay-worker, whose every D1 call (the Worker's and its objects')
 * first waits the delay the bench sets (POST /__bench/d1-delay?ms=N). Throwaway secrets, D1 and object state.
 */
export async function startDelayedProductWorker({ log = () => {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "agent-threads-bench-d1-delay-"));
  const state = join(dir, "state");
  const config = delayedConfig(dir);
  const { varsFile, vars } = writeThrowawayVars(dir, "bench.vars");
  await migrate(["-c", config, "--persist-to", state], dir, "D1-delay worker");
  const server = await startWrangler({
    name: "D1-delay worker",
    args: ["-c", config, "--persist-to", state, "--env-file", varsFile],
    dir,
    log,
  });
  return {
    ...server,
    dir,
    state,
    operatorToken: vars.OPERATOR_TOKEN,
    /** Sets the simulated D1 round trip, in ms, for every later D1 call. */
    setD1Delay: async (ms) => {
      const res = await fetch(`${server.baseUrl}/__bench/d1-delay?ms=${ms}`, { method: "POST" });
      if (!res.ok) throw new Error(`setting the D1 delay answered ${res.status}`);
    },
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The bench-only peer Worker (bench/peer-worker): a chat turn built on the `agents` SDK and AI SDK `streamText`. */
export async function startPeerWorker({ log = () => {} } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "agent-threads-bench-peer-"));
  const state = join(dir, "state");
  const server = await startWrangler({
    name: "peer worker",
    args: ["-c", PEER_CONFIG, "--persist-to", state],
    dir,
    log,
  });
  return {
    ...server,
    stop: async () => {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
