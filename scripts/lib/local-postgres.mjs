// A local PostgreSQL for `npm run dev -- --control-plane postgres`: data in .tmp/postgres (initdb once), started with
// pg_ctl unless already running, stopped by `stop()` only when this process started it (docs/control-plane.md).
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { root } from "./paths.mjs";

export const LOCAL_PG_DIR = join(root, ".tmp", "postgres");
export const LOCAL_PG_PORT = 54329;
export const LOCAL_PG_DATABASE = "agent_threads";

const INSTALL_HINT =
  "PostgreSQL's initdb and pg_ctl were found neither on PATH nor in /usr/lib/postgresql/*/bin. Install them " +
  "(Debian/Ubuntu: `sudo apt-get install postgresql`; macOS: `brew install postgresql`) or set PG_BIN to their folder.";

/** The directory holding initdb and pg_ctl: $PG_BIN, PATH, then Debian's versioned folders, newest first. */
export function findPostgresBin() {
  const candidates = [];
  if (process.env.PG_BIN) candidates.push(process.env.PG_BIN);
  const onPath = spawnSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" });
  if (onPath.status === 0 && onPath.stdout.trim() !== "") {
    const real = spawnSync("readlink", ["-f", onPath.stdout.trim()], { encoding: "utf8" }).stdout.trim();
    candidates.push(join(real || onPath.stdout.trim(), ".."));
  }
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => /^\d+(\.\d+)?$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(debian, v, "bin")));
  }
  candidates.push("/usr/local/pgsql/bin", "/opt/homebrew/bin", "/usr/local/bin", "/usr/bin");
  return candidates.find((dir) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) ?? null;
}

/** initdb refuses to run as root: then the server runs as the `postgres` user (Debian's package creates it). */
export function serverUser() {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) return null;
  const id = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  if (id.status !== 0)
    throw new Error("running as root and there is no `postgres` user to run PostgreSQL as.");
  const gid = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
  return { name: "postgres", uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/**
 * Makes sure a local server runs on `port` with database LOCAL_PG_DATABASE; returns its URL and a `stop()` that
 * stops it only if it was started here.
 */
export async function ensureLocalPostgres({ port = LOCAL_PG_PORT, log = console.log } = {}) {
  const bin = findPostgresBin();
  if (bin === null) throw new Error(INSTALL_HINT);
  const user = serverUser();
  const data = join(LOCAL_PG_DIR, "data");
  const serverLog = join(LOCAL_PG_DIR, "server.log");
  const tool = (name, args, { check = true } = {}) => {
    const path = join(bin, name);
    const [command, argv] =
      user === null ? [path, args] : ["runuser", ["-u", user.name, "--", path, ...args]];
    const result = spawnSync(command, argv, { encoding: "utf8", cwd: LOCAL_PG_DIR });
    if (check && result.status !== 0) {
      throw new Error(
        `${name} failed (${result.status}): ${result.stdout}${result.stderr} (log: ${serverLog})`,
      );
    }
    return result;
  };
  mkdirSync(LOCAL_PG_DIR, { recursive: true });
  if (user !== null) chownSync(LOCAL_PG_DIR, user.uid, user.gid);
  if (!existsSync(join(data, "PG_VERSION"))) {
    log(`Creating a local PostgreSQL in ${data}…`);
    tool("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"]);
  }
  let started = false;
  if (tool("pg_ctl", ["-D", data, "status"], { check: false }).status !== 0) {
    const options = `-p ${port} -k ${LOCAL_PG_DIR} -c listen_addresses=127.0.0.1`;
    tool("pg_ctl", ["-D", data, "-l", serverLog, "-o", options, "-w", "-t", "60", "start"]);
    started = true;
    log(`Started PostgreSQL on 127.0.0.1:${port} (data in ${data}).`);
  } else {
    log(`PostgreSQL already running from ${data}.`);
  }
  const admin = new pg.Client({ host: "127.0.0.1", port, user: "postgres", database: "postgres" });
  await admin.connect();
  try {
    const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [LOCAL_PG_DATABASE]);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${LOCAL_PG_DATABASE}`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/${LOCAL_PG_DATABASE}`,
    stop() {
      if (started) tool("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"], { check: false });
    },
  };
}
