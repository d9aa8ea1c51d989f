#!/usr/bin/env node
// `npm run test:control-plane`: the control-plane tests that need a real PostgreSQL. Starts a throwaway server (initdb
// into a temp dir, a free port, its socket in that dir), runs vitest.control-plane.config.ts in Node against it,
// writes test-results/control-plane.json, prints which adapters ran, and always stops the server and removes the dir.
//
//   npm run test:control-plane                 everything under test/control-plane/
//   npm run test:control-plane -- <filter>     vitest's file filter, passed through
import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { findPostgresBin, serverUser } from "./lib/local-postgres.mjs";
import { binDir, childEnv, root } from "./lib/paths.mjs";
import { freePort } from "./lib/process-group.mjs";

const REPORT = join(root, "test-results", "control-plane.json");
const DATABASE = "agent_threads_control_plane";

const bin = findPostgresBin();
if (bin === null) {
  console.error(
    "test:control-plane needs PostgreSQL's initdb and pg_ctl, and found neither on PATH nor in /usr/lib/postgresql/*/bin.\n" +
      "Install it (Debian/Ubuntu: `sudo apt-get install postgresql`; macOS: `brew install postgresql`) or set PG_BIN.",
  );
  process.exit(1);
}

const user = serverUser();
const dir = mkdtempSync(join(tmpdir(), "agent-threads-pg-"));
const data = join(dir, "data");
const log = join(dir, "server.log");
if (user !== null) chownSync(dir, user.uid, user.gid);

/** Runs a PostgreSQL tool (as the server's user when we are root); throws with its output when it fails. */
function tool(name, args) {
  const path = join(bin, name);
  const [command, argv] = user === null ? [path, args] : ["runuser", ["-u", user.name, "--", path, ...args]];
  const result = spawnSync(command, argv, { encoding: "utf8", cwd: dir });
  if (result.status !== 0) {
    const serverLog = existsSync(log) ? readFileSync(log, "utf8") : "";
    throw new Error(`${name} failed (${result.status}):\n${result.stdout}${result.stderr}${serverLog}`);
  }
  return result.stdout;
}

let started = false;
let cleaned = false;
/** Stops the server and removes the temp dir; safe to call more than once and from a signal handler. */
function cleanup() {
  if (cleaned) return;
  cleaned = true;
  if (started) {
    try {
      tool("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    } catch (error) {
      console.error(`test:control-plane: could not stop PostgreSQL: ${error.message}`);
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

let child = null;
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    child?.kill(signal);
    cleanup();
    process.exit(130);
  });
}
process.on("exit", cleanup);

async function main() {
  const port = await freePort();
  tool("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
  const options = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses=127.0.0.1",
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=200",
  ].join(" ");
  started = true;
  tool("pg_ctl", ["-D", data, "-l", log, "-o", options, "-w", "-t", "60", "start"]);
  const version = spawnSync(join(bin, "postgres"), ["--version"], { encoding: "utf8" }).stdout.trim();
  console.log(`test:control-plane: ${version || "PostgreSQL"} on 127.0.0.1:${port} (data in ${dir})`);

  const admin = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DATABASE}`);
  await admin.end();

  rmSync(REPORT, { force: true });
  const args = ["run", "--config", "vitest.control-plane.config.ts", ...process.argv.slice(2)];
  const env = childEnv({
    CONTROL_PLANE_TEST_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/${DATABASE}`,
  });
  const code = await new Promise((resolve) => {
    child = spawn(join(binDir, "vitest"), args, { cwd: root, env, stdio: "inherit" });
    child.on("exit", (status, signal) => resolve(status ?? (signal ? 1 : 0)));
  });
  printAdapters();
  return code;
}

/** "adapters: memory (62 passed), postgres (62 passed)": which conformance runs the report holds, and how they did. */
function printAdapters() {
  if (!existsSync(REPORT)) {
    console.log("adapters: none (vitest wrote no report)");
    return;
  }
  const report = JSON.parse(readFileSync(REPORT, "utf8"));
  const adapters = new Map();
  for (const file of report.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      const suite = (test.ancestorTitles ?? []).find((t) => t.startsWith("DeploymentStore conformance: "));
      if (suite === undefined) continue;
      const name = suite.slice("DeploymentStore conformance: ".length);
      const counts = adapters.get(name) ?? { passed: 0, failed: 0 };
      if (test.status === "passed") counts.passed += 1;
      else if (test.status === "failed") counts.failed += 1;
      adapters.set(name, counts);
    }
  }
  const list = [...adapters].map(
    ([name, c]) => `${name} (${c.passed} passed${c.failed ? `, ${c.failed} failed` : ""})`,
  );
  console.log(`adapters: ${list.length === 0 ? "none" : list.join(", ")}`);
}

main()
  .then((code) => {
    cleanup();
    process.exit(code);
  })
  .catch((error) => {
    console.error(`test:control-plane: ${error instanceof Error ? error.message : error}`);
    cleanup();
    process.exit(1);
  });
