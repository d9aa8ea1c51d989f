// Which port the local server runs on, so every script finds `npm run dev` wherever it was started.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { root } from "./paths.mjs";

/** Written by `npm run dev` while it runs, removed when it stops; under .wrangler/ with the rest of local state. */
export const devServerPath = join(root, ".wrangler", "dev-server.json");

export const DEFAULT_PORT = 8787;

/**
 * The port of the local server: PORT when set, else the one a running `npm run dev` recorded, else 8787. A record
 * left by a server that died (its process is gone) is ignored. The file and process checks are passed in so this
 * can be tested without either.
 */
export function localPort({
  env = process.env,
  readRecord = () => readFileSync(devServerPath, "utf8"),
  isRunning = processIsRunning,
} = {}) {
  if (env.PORT !== undefined && env.PORT !== "") return Number(env.PORT);
  let record;
  try {
    record = JSON.parse(readRecord());
  } catch {
    return DEFAULT_PORT;
  }
  const { port, pid } = record ?? {};
  if (!Number.isInteger(port) || !Number.isInteger(pid) || !isRunning(pid)) return DEFAULT_PORT;
  return port;
}

/** The local server's base URL as the scripts and docs show it. */
export function localBaseUrl(options) {
  return `http://localhost:${localPort(options)}`;
}

export function recordDevServer(port) {
  mkdirSync(dirname(devServerPath), { recursive: true });
  writeFileSync(
    devServerPath,
    `${JSON.stringify({ port, pid: process.pid, url: `http://localhost:${port}` })}\n`,
  );
}

export function forgetDevServer() {
  rmSync(devServerPath, { force: true });
}

function processIsRunning(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error?.code === "EPERM";
  }
}
