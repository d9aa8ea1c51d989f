// Part of `npm test`: fails when the console's first screen (the page, the entry, the chunks it imports statically
// and the stylesheet, as public/console/manifest.json lists them) exceeds 80 KB gzip, or when a console source turns
// a string into markup or code. Prints the first-screen and on-demand sizes.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { CliError, isMain, runMain } from "./lib/cli.mjs";
import { filesUnder, root } from "./lib/paths.mjs";

/** DESIGN.md: the console's first screen ≤ 80 KB gzip. */
export const FIRST_SCREEN_BUDGET_BYTES = 80 * 1024;

/**
 * Ways to turn a string into markup or code. The console renders API data as text through Preact only; its pages
 * run under Trusted Types `'none'`, so any of these would also fail in the browser, but here it fails in review.
 * (Preact's own runtime keeps its markup path for the first of these props; no console source ever reaches it.)
 */
export const FORBIDDEN = [
  /\bdangerouslySetInnerHTML\b/,
  /\binnerHTML\b/,
  /\bouterHTML\b/,
  /\binsertAdjacentHTML\b/,
  /\bdocument\.write/,
  /\bcreateContextualFragment\b/,
  /\bsetHTMLUnsafe\b/,
  /\bsrcdoc\b/,
  /\beval\s*\(/,
  /\bnew\s+Function\b/,
  /\bFunction\s*\(\s*["'`]/,
  /\bset(?:Timeout|Interval)\s*\(\s*["'`]/,
];

export function readManifest() {
  const path = join(root, "public", "console", "manifest.json");
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw new CliError(`${relative(root, path)} is missing: run \`npm run build:console\` first.`);
  }
}

/** First screen and on-demand totals from the build's manifest (gzip -9 bytes). */
export function consoleSizes(manifest = readManifest()) {
  const lazy = Object.entries(manifest.files).filter(([path]) => !manifest.firstScreen.files.includes(path));
  const largest = lazy.reduce(
    (max, [path, f]) => (f.gzipBytes > (max?.gzipBytes ?? -1) ? { path, ...f } : max),
    null,
  );
  return {
    firstScreen: {
      gzipBytes: manifest.firstScreen.gzipBytes,
      files: manifest.firstScreen.files.length,
      budgetBytes: FIRST_SCREEN_BUDGET_BYTES,
    },
    lazy: {
      gzipBytes: lazy.reduce((sum, [, f]) => sum + f.gzipBytes, 0),
      chunks: lazy.length,
      largest,
    },
  };
}

/** Every forbidden sink in src/console/ as `file:line contains /pattern/`. */
export function forbiddenSinks(dir = join(root, "src", "console")) {
  const found = [];
  for (const file of filesUnder(dir).filter((f) => /\.(ts|tsx|js|mjs)$/.test(f))) {
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      for (const pattern of FORBIDDEN) {
        if (pattern.test(line)) found.push(`${relative(root, file)}:${i + 1} contains ${pattern}`);
      }
    });
  }
  return found;
}

async function main() {
  const sizes = consoleSizes();
  const kb = (n) => `${(n / 1024).toFixed(2)} KB`;
  const problems = forbiddenSinks();
  if (sizes.firstScreen.gzipBytes > FIRST_SCREEN_BUDGET_BYTES) {
    problems.push(
      `the first screen is ${sizes.firstScreen.gzipBytes} bytes gzip, over its ${FIRST_SCREEN_BUDGET_BYTES}-byte budget`,
    );
  }
  console.log(
    `console budget: first screen ${kb(sizes.firstScreen.gzipBytes)} gzip of ${kb(FIRST_SCREEN_BUDGET_BYTES)} ` +
      `(${sizes.firstScreen.files} files + page), on demand ${kb(sizes.lazy.gzipBytes)} gzip in ${sizes.lazy.chunks} chunks` +
      (sizes.lazy.largest ? ` (largest ${kb(sizes.lazy.largest.gzipBytes)})` : ""),
  );
  if (problems.length > 0) throw new CliError(problems.join("; "));
  return 0;
}

if (isMain(import.meta.url)) await runMain(main);
