// `npm run build:console`: bundles the console (src/console/, Preact + signals) into content-hashed files under
// public/console/assets/ and writes public/console/index.html, which loads them. Screens are split into chunks the
// shell imports on demand, so the first screen carries only the shell. Writes public/console/manifest.json with the
// gzip sizes the budget check and the bench report.
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { root } from "./lib/paths.mjs";

const consoleDir = join(root, "public", "console");
const assetsDir = join(consoleDir, "assets");
const gzipSize = (bytes) => gzipSync(bytes, { level: 9 }).length;
const hash = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 10);

export async function buildConsole() {
  const result = await build({
    entryPoints: {
      main: join(root, "src", "console", "main.tsx"),
      styles: join(root, "src", "console", "styles.css"),
    },
    outdir: assetsDir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    minify: true,
    jsx: "automatic",
    jsxImportSource: "preact",
    entryNames: "[name]-[hash]",
    chunkNames: "chunk-[hash]",
    assetNames: "[name]-[hash]",
    legalComments: "none",
    charset: "utf8",
    metafile: true,
    write: false,
    logLevel: "warning",
  });
  rmSync(consoleDir, { recursive: true, force: true });
  mkdirSync(assetsDir, { recursive: true });
  const files = {};
  let entry;
  let styles;
  for (const file of result.outputFiles) {
    writeFileSync(file.path, file.contents);
    const path = `/console/assets/${basename(file.path)}`;
    files[path] = { bytes: file.contents.length, gzipBytes: gzipSize(file.contents) };
    if (/\/main-[^/]+\.js$/.test(file.path)) entry = path;
    if (/\/styles-[^/]+\.css$/.test(file.path)) styles = path;
  }
  if (entry === undefined || styles === undefined)
    throw new CliError("esbuild produced no console entry or styles.");

  // The first screen: the entry, the chunks it imports statically, and the stylesheet.
  const outputs = result.metafile.outputs;
  const first = new Set();
  const visit = (out) => {
    if (first.has(out)) return;
    first.add(out);
    for (const imp of outputs[out]?.imports ?? []) if (imp.kind === "import-statement") visit(imp.path);
  };
  const entryKey = Object.keys(outputs).find((key) => `/console/assets/${basename(key)}` === entry);
  visit(entryKey);
  const firstScreen = [...first].map((key) => `/console/assets/${basename(key)}`).concat(styles);
  const preload = [...first]
    .filter((key) => key !== entryKey)
    .map((key) => `    <link rel="modulepreload" href="/console/assets/${basename(key)}" />`)
    .join("\n");

  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="color-scheme" content="light dark" />
    <title>agent-threads console</title>
    <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
    <link rel="stylesheet" href="${styles}" />
${preload ? `${preload}\n` : ""}    <script type="module" src="${entry}"></script>
  </head>
  <body>
    <div id="app"></div>
    <noscript>The console needs JavaScript.</noscript>
  </body>
</html>
`;
  writeFileSync(join(consoleDir, "index.html"), html);
  // The playground's widget frames (src/routes/assets.ts serves it at /console/playground-frame).
  copyFileSync(
    join(root, "src", "console", "playground-frame.html"),
    join(consoleDir, "playground-frame.html"),
  );
  const manifest = {
    entry,
    styles,
    html: {
      bytes: Buffer.byteLength(html),
      gzipBytes: gzipSize(Buffer.from(html)),
      hash: hash(Buffer.from(html)),
    },
    firstScreen: {
      files: firstScreen,
      gzipBytes: firstScreen.reduce((sum, path) => sum + files[path].gzipBytes, gzipSize(Buffer.from(html))),
    },
    files,
  };
  writeFileSync(join(consoleDir, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const manifest = await buildConsole();
    const kb = (n) => `${(n / 1024).toFixed(2)} KB`;
    const lazy = Object.entries(manifest.files).filter(
      ([path]) => !manifest.firstScreen.files.includes(path),
    );
    console.log(`console → ${relative(root, consoleDir)}/`);
    console.log(
      `  first screen ${kb(manifest.firstScreen.gzipBytes)} gzip (${manifest.firstScreen.files.length} files + html)`,
    );
    console.log(
      `  on demand    ${kb(lazy.reduce((sum, [, f]) => sum + f.gzipBytes, 0))} gzip in ${lazy.length} chunks`,
    );
    return 0;
  });
}
