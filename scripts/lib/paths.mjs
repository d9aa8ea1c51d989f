// Where the project's scripts find things, independent of the directory they were started from.
import { existsSync, readdirSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../..", import.meta.url));
export const binDir = join(root, "node_modules", ".bin");
export const devVarsPath = join(root, ".dev.vars");
export const devVarsExamplePath = join(root, ".dev.vars.example");
export const wranglerToml = join(root, "wrangler.toml");
/** Local demo credentials live under .wrangler/ so that wiping local state also forgets them. */
export const demoStatePath = join(root, ".wrangler", "demo.json");

/**
 * The environment for child processes, with node_modules/.bin first on PATH: wrangler needs the Node 22 that the
 * `node` devDependency puts there, also when a script is started with `node scripts/…` instead of `npm run`.
 */
export function childEnv(extra = {}) {
  const path = process.env.PATH ?? "";
  const onPath = path.split(delimiter)[0] === binDir;
  return { ...process.env, PATH: onPath ? path : `${binDir}${delimiter}${path}`, ...extra };
}

/** The wrangler executable of this project, so a global install of another version is never used. */
export function wranglerBin() {
  const local = join(binDir, "wrangler");
  if (!existsSync(local)) {
    throw new Error("wrangler is not installed in node_modules: run `npm install` first.");
  }
  return local;
}

/** Every file below `dir`, subfolders included. */
export function filesUnder(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}
