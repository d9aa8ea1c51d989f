#!/usr/bin/env node
// Fails when a file in src/ imports a layer above its own (docs/architecture.md); the layer order lives only here.
//
// Every `import … from`, `export … from`, side-effect `import "…"` and `import("…")` with a string literal counts,
// `import type` included: a type import still couples the folders. All violations are printed, not just the first.
// `node scripts/check-layers.mjs --picture` prints the order as docs/architecture.md shows it.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
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

/**
 * Folders whose layers are ordered inside too, top to bottom, by the same rule: the thread's rooms (the object's parts
 * above the conversation above the run above the Worker↔object contract).
 */
const INNER_LAYERS = {
  "src/thread/": [
    ["src/thread/object/"],
    ["src/thread/conversation/"],
    ["src/thread/run/"],
    ["src/thread/contract/"],
  ],
};

/** Folders entered only by their index.ts: a file outside one imports its index, never a file behind it. */
const FACED = ["src/thread/object/", "src/thread/conversation/", "src/thread/run/", "src/thread/contract/"];

/**
 * What of a folder the rest of src/ may import: only its door, except the units named (src/objects/ assembles the
 * thread object from all of src/thread/).
 */
const DOORS = { "src/thread/": { door: "src/thread/contract/", except: ["src/objects/"] } };

/** Text only one folder may hold: the thread namespace binding is reached through the contract's `threadStub`. */
const ONLY_IN = [
  { pattern: /\bTHREAD\.(?:get|idFromName|getByName|newUniqueId)\b/, folder: "src/thread/contract/" },
];

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

/** The file an extensionless specifier names: `x.ts`, `x.tsx`, or a folder's `x/index.ts`. */
function resolved(target) {
  if (/\.\w+$/.test(target)) return target;
  for (const candidate of [`${target}.ts`, `${target}.tsx`, `${target}/index.ts`]) {
    if (existsSync(join(root, candidate))) return candidate;
  }
  return `${target}.ts`;
}

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
      found.push({ specifier, line, target: resolved(target) });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/** The inner unit of a file within a folder that has inner layers, and its line, or null. */
function innerPlaceOf(file) {
  for (const [outer, lines] of Object.entries(INNER_LAYERS)) {
    if (!file.startsWith(outer)) continue;
    for (const [line, units] of lines.entries()) {
      for (const unit of units) if (file.startsWith(unit)) return { outer, unit, line };
    }
    return { outer, unit: null, line: -1 };
  }
  return null;
}

/** Why an import breaks the rule of faces, doors and inner layers, or null when it keeps them. */
function innerRuleBroken(file, target) {
  for (const [outer, { door, except }] of Object.entries(DOORS)) {
    if (
      target.startsWith(outer) &&
      !file.startsWith(outer) &&
      !except.some((unit) => file.startsWith(unit))
    ) {
      if (!target.startsWith(door)) return `${outer} is entered only through ${door}index.ts`;
    }
  }
  for (const face of FACED) {
    if (target.startsWith(face) && !file.startsWith(face) && target !== `${face}index.ts`) {
      return `${face} is entered only through its index.ts`;
    }
  }
  const from = innerPlaceOf(file);
  const to = innerPlaceOf(target);
  if (from === null || to === null || from.outer !== to.outer) return null;
  if (from.unit === null) return `${file} is in no inner layer of ${from.outer}: add it to INNER_LAYERS`;
  if (to.unit === null) return `${target} is in no inner layer of ${to.outer}`;
  if (from.unit === to.unit) return null;
  if (to.line < from.line) return `${from.unit} may not import ${to.unit}: ${to.unit} is above it`;
  if (to.line === from.line) return `${from.unit} may not import ${to.unit}: they are on the same line`;
  return null;
}

/** Why an import breaks the rule, or null when it is allowed. */
function ruleBroken(file, target) {
  const inner = innerRuleBroken(file, target);
  if (inner !== null) return inner;
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
    ...Object.entries(INNER_LAYERS).map(
      ([outer, lines]) =>
        `inside ${outer}, top to bottom: ${lines.map((units) => units.join(", ")).join(" > ")}`,
    ),
    ...Object.entries(DOORS).map(
      ([outer, { door, except }]) =>
        `door: the rest of src/ imports ${outer} only through ${door} (except ${except.join(", ")})`,
    ),
    `faces: ${FACED.join(", ")} are imported only through their index.ts`,
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
  for (const { pattern, folder } of ONLY_IN) {
    const found = text.match(pattern);
    if (found !== null && !file.startsWith(folder)) {
      const line = text.slice(0, found.index).split("\n").length;
      violations.push(`${file}:${line}  "${found[0]}"\n    only ${folder} may hold this`);
    }
  }
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
