#!/usr/bin/env node
// Fails when a file in src/ imports a layer above its own, when a folder of src/ has no line saying what it holds, or
// when the maps in README.md and docs/architecture.md differ from the rules (docs/architecture.md). The rules and the
// maps' renderer live in scripts/lib/layers.mjs; this is the command line over the tree.
//
// Every `import … from`, `export … from`, side-effect `import "…"` and `import("…")` with a string literal counts,
// `import type` included: a type import still couples the folders. All violations are printed, not just the first.
//   node scripts/check-layers.mjs               check (part of `npm test`)
//   node scripts/check-layers.mjs --picture     print the layer picture docs/architecture.md shows
//   node scripts/check-layers.mjs --write-docs  rewrite the generated sections of README.md and docs/architecture.md
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import {
  generatedSections,
  importsOf,
  onlyInBroken,
  picture,
  ruleBroken,
  tooLong,
  undescribed,
  withSection,
} from "./lib/layers.mjs";
import { root } from "./lib/paths.mjs";

const repoPath = (path) => relative(root, path).split(sep).join("/");

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Every folder under src/ ("src/http/") and every file directly in it ("src/app.ts"): what the maps show. */
function srcTree(dir = join(root, "src")) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(`${repoPath(path)}/`, ...srcTree(path));
    else if (dir === join(root, "src")) out.push(repoPath(path));
  }
  return out;
}

const tree = srcTree();

if (process.argv.includes("--picture")) {
  console.log(picture(tree));
  process.exit(0);
}

/** Each generated section: its doc, its name, the text it should have, and whether the doc has its markers. */
function sections() {
  return generatedSections(tree).map(({ doc, name, body }) => {
    const text = readFileSync(join(root, doc), "utf8");
    return { doc, name, text, next: withSection(text, name, body) };
  });
}

if (process.argv.includes("--write-docs")) {
  for (const { doc, name, text, next } of sections()) {
    if (next === null) {
      console.error(`check-layers: ${doc} has no markers for the generated "${name}"`);
      process.exit(1);
    }
    if (next !== text) writeFileSync(join(root, doc), next);
    console.log(`check-layers: ${doc} "${name}" ${next === text ? "already up to date" : "rewritten"}`);
  }
  process.exit(0);
}

const violations = [];
let checked = 0;
const exists = (path) => existsSync(join(root, path));
for (const path of sourceFiles(join(root, "src"))) {
  const file = repoPath(path);
  const text = readFileSync(path, "utf8");
  const long = tooLong(file, text);
  if (long !== null) violations.push(long);
  for (const { found, line, folder } of onlyInBroken(file, text)) {
    violations.push(`${file}:${line}  "${found}"\n    only ${folder} may hold this`);
  }
  for (const { specifier, line, target } of importsOf(file, text, exists)) {
    checked++;
    const why = ruleBroken(file, target);
    if (why !== null) violations.push(`${file}:${line}  import "${specifier}"\n    ${why}`);
  }
}

if (violations.length > 0) {
  console.error(
    `${violations.join("\n")}\n\ncheck-layers: ${violations.length} of ${checked} relative imports break the order:`,
  );
  console.error(picture(tree));
  process.exit(1);
}

const problems = [];
for (const unit of undescribed(tree)) {
  problems.push(`${unit} has no line saying what it holds: add { unit: "${unit}", says: "…" } to units`);
}
for (const { doc, name, text, next } of sections()) {
  if (next === null) problems.push(`${doc} has no markers for the generated "${name}"`);
  else if (next !== text) problems.push(`${doc}: the generated "${name}" differs from the rules`);
}
if (problems.length > 0) {
  console.error(
    `${problems.map((p) => `check-layers: ${p}`).join("\n")}\n` +
      "fix: describe any new folder in RULES.units in scripts/lib/layers.mjs, then run " +
      "`node scripts/check-layers.mjs --write-docs` and commit the docs it rewrites",
  );
  process.exit(1);
}
console.log(
  `check-layers: ${checked} relative imports in src/ follow the layer order; ${tree.length} folders and top files described; the maps in README.md and docs/architecture.md match`,
);
