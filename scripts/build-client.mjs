// `npm run build:client`: builds `agent-threads/client` (src/client/) into plain ESM under dist/client/ that node runs
// without a TypeScript loader, plus its .d.ts files for TypeScript consumers (package.json `exports`).
import { join } from "node:path";
import { build } from "esbuild";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { binDir, root } from "./lib/paths.mjs";
import { runCommand } from "./lib/run-command.mjs";

export const clientDir = join(root, "dist", "client");

/** One bundle per subpath export; a new entry (say `ai-transport.ts`) is one line here and one in `exports`. */
const ENTRIES = ["index"];

/**
 * Bundles the entries (dependencies such as zod stay imports, resolved from node_modules at run time) and, unless
 * `types` is false, emits declarations with `tsc -p src/client/tsconfig.json` (about 2 s; the bundle alone is ms).
 */
export async function buildClient({ types = true } = {}) {
  await build({
    entryPoints: ENTRIES.map((name) => join(root, "src", "client", `${name}.ts`)),
    outdir: clientDir,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    packages: "external",
    sourcemap: true,
    logLevel: "warning",
  });
  if (types) {
    const code = await runCommand(join(binDir, "tsc"), ["-p", join(root, "src", "client", "tsconfig.json")]);
    if (code !== 0) throw new CliError(`tsc -p src/client/tsconfig.json failed (exit ${code}).`);
  }
  return clientDir;
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const dir = await buildClient({ types: !process.argv.includes("--no-types") });
    console.log(`built agent-threads/client into ${dir}`);
    return 0;
  });
}
