// `npm run build:client`: builds `agent-threads/client` (src/client/) into plain ESM under dist/client/ that node runs
// without a TypeScript loader, plus its .d.ts files for TypeScript consumers (package.json `exports`).
import { readFileSync, writeFileSync } from "node:fs";
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
  writeFileSync(join(clientDir, "package.json"), `${JSON.stringify(clientPackage(), null, 2)}\n`);
  return clientDir;
}

/**
 * dist/client/ is also a package of its own, so another project can install the client without this repository:
 * `npm pack ./dist/client`, then `npm install` the tarball (docs/client.md#install-it-in-another-project). The bundle
 * has no runtime imports; its declarations name zod's types, and the AI SDK's for the optional transport.
 */
function clientPackage() {
  const project = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  return {
    name: "@agent-threads/client",
    version: project.version,
    description:
      "Typed client for agent-threads: admin, operator and launch APIs, and the thread connection.",
    type: "module",
    exports: { ".": { types: "./types/client/index.d.ts", default: "./index.js" } },
    types: "./types/client/index.d.ts",
    files: ["index.js", "index.js.map", "types"],
    engines: { node: ">=20" },
    dependencies: { zod: project.dependencies.zod },
    peerDependencies: project.peerDependencies,
    peerDependenciesMeta: project.peerDependenciesMeta,
  };
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const dir = await buildClient({ types: !process.argv.includes("--no-types") });
    console.log(`built agent-threads/client into ${dir}`);
    return 0;
  });
}
