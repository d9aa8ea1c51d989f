// `npm run build:deploy-assets` (run by `npm run deploy`): copies public/ into dist/deploy-assets/ without the
// development-only pages (the demo, the browser tests' pages), so a staging or production deploy never uploads them
// (docs/security.md#console-isolation).
import { cpSync, existsSync, readdirSync, rmSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { root } from "./lib/paths.mjs";

const publicDir = join(root, "public");
export const deployAssetsDir = join(root, "dist", "deploy-assets");

/** Paths under public/ (with "/" separators) that only `development` serves, and the placeholder index. */
export function developmentOnly(path) {
  return (
    path === "demo.html" ||
    path === "index.html" ||
    path === "demo" ||
    path.startsWith("demo/") ||
    path === "test" ||
    path.startsWith("test/")
  );
}

/** Rebuilds dist/deploy-assets/ and returns the paths it holds. */
export function buildDeployAssets() {
  if (!existsSync(join(publicDir, "embed.js")) || !existsSync(join(publicDir, "console", "index.html"))) {
    throw new CliError(
      "public/ has no widget or console build: run `npm run build:widget && npm run build:console`.",
    );
  }
  rmSync(deployAssetsDir, { recursive: true, force: true });
  cpSync(publicDir, deployAssetsDir, {
    recursive: true,
    filter: (source) => {
      const path = relative(publicDir, source).split(sep).join("/");
      return path === "" || !developmentOnly(path);
    },
  });
  return readdirSync(deployAssetsDir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(deployAssetsDir, join(entry.parentPath, entry.name)).split(sep).join("/"));
}

if (isMain(import.meta.url)) {
  await runMain(() => {
    const files = buildDeployAssets();
    console.log(
      `deploy assets → ${relative(root, deployAssetsDir)}/ (${files.length} files, no demo or test pages)`,
    );
    return 0;
  });
}
