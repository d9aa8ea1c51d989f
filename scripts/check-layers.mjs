#!/usr/bin/env node
// Fails when a file in src/ imports a layer above its own (docs/architecture.md); the layer order lives only here.
//
// Every `import … from`, `export … from`, side-effect `import "…"` and `import("…")` with a string literal counts,
// `import type` included: a type import still couples the folders. All violations are printed, not just the first.
// `node scripts/check-layers.mjs --picture` prints the order as docs/architecture.md shows it.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * Top to bottom: a unit may import units on lower lines, never a higher line nor another unit on its own line.
 * A unit is a folder (trailing slash, subfolders included) or a file; a bracketed group is one unit.
 */
const LAYERS = [
  [["src/index.ts", "src/app.ts"]],
  ["src/routes/", "src/jobs/", "src/objects/"],
  ["src/services/"],
  ["src/http/"],
  ["src/thread/"],
  ["src/events/"],
  ["src/auth/"],
  ["src/models/", "src/tools/"],
  ["src/storage/"],
  ["src/control/"],
  ["src/errors.ts"],
  ["src/shared/", "src/shims/"],
];

/** The browser widget is its own program: it shares only the wire formats, and the Worker never imports it. */
const WIDGET = "src/widget/";
/** The typed client (`agent-threads/client`) likewise: it runs in the tenant's code, beside the wire formats only. */
const CLIENT = "src/client/";
/** The console (/console/) too: a browser program that speaks to the API through the typed client and nothing else. */
const CONSOLE = "src/console/";
const PROGRAMS = [WIDGET, CLIENT, CONSOLE];
/** What each program may import besides itself and src/shared/. */
const PROGRAM_IMPORTS = { [CONSOLE]: [CLIENT] };
const SHARED = "src/shared/";
const ROUTES = "src/routes/";

/** Route files that other route files may import. Empty on purpose: what routes share lives in src/http/. */
const ROUTE_HELPERS = [];

function unitName(unit) {
  return Array.isArray(unit) ? unit.join(" + ") : unit;
}

function owns(unit, file) {
  if (Array.isArray(unit)) return unit.some((u) => owns(u, file));
  return unit.endsWith("/") ? file.startsWith(unit) : file === unit;
}

/** The unit a file belongs to and its line (0 = top), or null when no layer names it. */
function placeOf(file) {
  for (const program of PROGRAMS) if (file.startsWith(program)) return { unit: program, line: -1 };
  for (const [line, units] of LAYERS.entries()) {
    for (const unit of units) if (owns(unit, file)) return { unit: unitName(unit), line };
  }
  return null;
}

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

const IMPORTS = [
  // import x from "…", import type { x } from "…", export { x } from "…", export * from "…"
  /^[ \t]*(?:import|export)[ \t]+[\w$\s,{}*]*?from[ \t]*["']([^"']+)["']/gm,
  // import "…"
  /^[ \t]*import[ \t]*["']([^"']+)["']/gm,
  // await import("…")
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
];

/** Relative imports of one file: the specifier, the 1-based line it is on, and the repo path it resolves to. */
function importsOf(file, text) {
  const found = [];
  for (const pattern of IMPORTS) {
    for (const match of text.matchAll(pattern)) {
      const specifier = match[1];
      if (!specifier.startsWith(".")) continue;
      const at = match.index + match[0].lastIndexOf(specifier);
      const line = text.slice(0, at).split("\n").length;
      const target = posix.normalize(posix.join(posix.dirname(file), specifier));
      // A package's own file, reached by path where its exports map offers no name (src/shims/zod): not a layer.
      if (target.startsWith("node_modules/")) continue;
      found.push({ specifier, line, target: /\.\w+$/.test(target) ? target : `${target}.ts` });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/** Why an import breaks the rule, or null when it is allowed. */
function ruleBroken(file, target) {
  const from = placeOf(file);
  const to = placeOf(target);
  if (from === null) return `${file} is in no layer: add its folder to LAYERS in scripts/check-layers.mjs`;
  if (to === null) return `${target} is in no layer`;
  const program = PROGRAMS.find((p) => from.unit === p || to.unit === p);
  if (program !== undefined) {
    const allowed = [program, SHARED, ...(PROGRAM_IMPORTS[program] ?? [])];
    if (from.unit === program && allowed.includes(to.unit)) return null;
    if (from.unit !== program && PROGRAM_IMPORTS[from.unit]?.includes(to.unit)) return null;
    return from.unit === program
      ? `${program} is a separate program: it imports only ${allowed.slice(1).join(", ")} and itself, not ${to.unit}`
      : `nothing imports ${to.unit}: it is a separate program`;
  }
  if (from.unit === SHARED && to.unit !== SHARED) {
    return "src/shared/ imports nothing from the product: it is the wire format the widget shares";
  }
  if (from.unit === to.unit) {
    const routeToRoute = from.unit === ROUTES && !ROUTE_HELPERS.includes(target);
    return routeToRoute
      ? "a route file never imports another route file: shared route helpers live in src/http/"
      : null;
  }
  if (to.line < from.line) return `${from.unit} may not import ${to.unit}: ${to.unit} is above it`;
  if (to.line === from.line) return `${from.unit} may not import ${to.unit}: they are on the same line`;
  return null;
}

function picture() {
  const lines = LAYERS.map((units) => `  ${units.map(unitName).join(", ")}`);
  return [
    "top: may import any line below it, never a line above nor a neighbour on its own line",
    ...lines,
    "bottom",
    "",
    `apart: ${WIDGET} (the browser widget) imports only ${SHARED} and itself; nothing imports it`,
    `apart: ${CLIENT} (agent-threads/client) imports only ${SHARED} and itself; nothing imports it`,
    `apart: ${CONSOLE} (the console) imports only ${CLIENT}, ${SHARED} and itself; nothing imports it`,
    `and: ${SHARED} imports only itself; a file in ${ROUTES} never imports another file in ${ROUTES}`,
  ].join("\n");
}

if (process.argv.includes("--picture")) {
  console.log(picture());
  process.exit(0);
}

const violations = [];
let checked = 0;
for (const path of sourceFiles(join(root, "src"))) {
  const file = relative(root, path).split(sep).join("/");
  const text = readFileSync(path, "utf8");
  for (const { specifier, line, target } of importsOf(file, text)) {
    checked++;
    const why = ruleBroken(file, target);
    if (why !== null) violations.push(`${file}:${line}  import "${specifier}"\n    ${why}`);
  }
}

if (violations.length > 0) {
  console.error(
    `${violations.join("\n")}\n\ncheck-layers: ${violations.length} of ${checked} relative imports break the order:`,
  );
  console.error(picture());
  process.exit(1);
}
console.log(`check-layers: ${checked} relative imports in src/ follow the layer order`);
