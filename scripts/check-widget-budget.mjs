// Part of `npm test`: fails when the built loader, widget or an on-demand widget module exceeds its gzip budget, or
// when the widget source or bundles contain an HTML-string sink (innerHTML and friends) or ship zod. Prints the sizes.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { gzipSync } from "node:zlib";
import { CliError, runMain } from "./lib/cli.mjs";
import { filesUnder, root } from "./lib/paths.mjs";

export const LOADER_BUDGET_BYTES = 2 * 1024;
export const WIDGET_BUDGET_BYTES = 20 * 1024;
/** Each module the widget imports on demand (the past conversations list): small, so the click answers at once. */
export const LAZY_BUDGET_BYTES = 2 * 1024;
/**
 * The message controls (retry, edit, feedback) load in the background once the conversation has a message, and the
 * attachments module once the agent offers attachments, before anyone can click them: larger budgets than a module
 * fetched on a click.
 */
const LAZY_BUDGETS = {
  actionsView: 3 * 1024,
  // Attachments load in the background once the agent's presentation offers them (docs/widget.md#attachments).
  attachView: 5 * 1024,
};

/** Ways to turn a string into markup or code; none may appear in the widget. */
const FORBIDDEN = [
  /\binnerHTML\b/,
  /\bouterHTML\b/,
  /\binsertAdjacentHTML\b/,
  /\bdocument\.write/,
  /\bcreateContextualFragment\b/,
  /\bsetHTMLUnsafe\b/,
  /\beval\s*\(/,
  /\bnew Function\b/,
];

async function main() {
  const manifestPath = join(root, "public", "widget", "manifest.json");
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  } catch {
    throw new CliError(`${relative(root, manifestPath)} is missing: run \`npm run build:widget\` first.`);
  }
  const problems = [];
  const measured = [];
  const bundles = [
    ["loader", manifest.loader.path, LOADER_BUDGET_BYTES],
    ["widget", manifest.widget.path, WIDGET_BUDGET_BYTES],
    ...Object.entries(manifest.lazy ?? {}).map(([name, { path }]) => [
      name,
      path,
      LAZY_BUDGETS[name] ?? LAZY_BUDGET_BYTES,
    ]),
  ];
  for (const [name, file, budget] of bundles) {
    const path = join(root, "public", file);
    const bytes = readFileSync(path);
    const gzip = gzipSync(bytes, { level: 9 }).length;
    measured.push(`${name} ${(gzip / 1024).toFixed(2)} KB gzip of ${(budget / 1024).toFixed(0)} KB`);
    if (gzip > budget) problems.push(`${name} is ${gzip} bytes gzip, over its ${budget}-byte budget`);
    const text = bytes.toString("utf8");
    for (const pattern of FORBIDDEN)
      if (pattern.test(text)) problems.push(`${name} bundle contains ${pattern}`);
    if (/ZodError|\$ZodType|zod\.dev/.test(text)) problems.push(`${name} bundle ships zod`);
  }
  for (const file of filesUnder(join(root, "src", "widget")).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(file, "utf8");
    for (const pattern of FORBIDDEN) {
      if (pattern.test(text)) problems.push(`${relative(root, file)} contains ${pattern}`);
    }
  }
  console.log(`widget budget: ${measured.join(", ")}`);
  if (problems.length > 0) throw new CliError(problems.join("; "));
  return 0;
}

await runMain(main);
