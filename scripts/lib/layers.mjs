// The layer rules of src/ as data, the check of one import against them, and the maps the docs show, drawn from the
// same data so they cannot drift (docs/architecture.md). Pure: no file system; what exists is passed in.

/**
 * The rules. `layers` top to bottom: a unit may import units on lower lines, never a higher line nor another unit on
 * its own line. A unit is a folder (trailing slash, subfolders included) or a file; a bracketed group is one unit.
 * `units` says in one line what each folder and top file of src/ holds; subfolders are listed in the order the maps
 * show them.
 */
export const RULES = {
  layers: [
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
  ],

  /**
   * Separate programs, each with what it may import besides itself and `shared`; nothing else imports them. The
   * widget and the typed client share only the wire formats; the console speaks to the API through the client.
   */
  programs: {
    "src/widget/": [],
    "src/client/": [],
    "src/console/": ["src/client/"],
    /** The control-plane service for Node (docs/control-plane.md): the port, its adapters, the workload token. */
    "src/control-plane/": ["src/control/", "src/storage/", "src/auth/", "src/errors.ts"],
  },
  /** The wire formats: imports nothing from the product, so the widget can build on it. */
  shared: "src/shared/",
  /** A route file never imports another: what routes share lives in src/http/ or src/services/. */
  routes: "src/routes/",
  /** Route files that other route files may import. Empty on purpose. */
  routeHelpers: [],

  /**
   * Folders whose units are ordered inside too, top to bottom, by the same rule: the thread's rooms (the object's
   * parts above the conversation above the run above the Worker↔object contract).
   */
  innerLayers: {
    "src/thread/": [
      ["src/thread/object/"],
      ["src/thread/conversation/"],
      ["src/thread/run/"],
      ["src/thread/contract/"],
    ],
  },
  /** Folders entered only by their index.ts: a file outside one imports its index, never a file behind it. */
  faced: ["src/thread/object/", "src/thread/conversation/", "src/thread/run/", "src/thread/contract/"],
  /**
   * What of a folder the rest of src/ may import: only its door, except the units named (src/objects/ assembles the
   * thread object from all of src/thread/).
   */
  doors: { "src/thread/": { door: "src/thread/contract/", except: ["src/objects/"] } },
  /** Text only one folder may hold: the thread namespace binding is reached through the contract's `threadStub`. */
  /** The most lines a file of src/ may have: a file past it is several concerns, to be split by them. */
  maxLines: 450,
  onlyIn: [
    {
      pattern: /\bTHREAD\.(?:get|idFromName|getByName|newUniqueId)\b/,
      folder: "src/thread/contract/",
      says: "Only src/thread/contract/ names the thread binding (`env.THREAD.get`, `idFromName`, …): the rest calls its `threadStub`.",
    },
  ],

  units: [
    { unit: "src/index.ts", says: "the Worker entry: fetch, scheduled, the exported Durable Object classes" },
    { unit: "src/app.ts", says: "middleware order, the one error handler, every route mounted under /v1" },
    { unit: "src/routes/", says: "Hono route files, one per resource: HTTP in, a use-case call, HTTP out" },
    {
      unit: "src/jobs/",
      says: "scheduled jobs: retention, preview and console-session clean-up, shard moves, runtime registration",
    },
    {
      unit: "src/objects/",
      says: "the three Durable Object classes: ThreadAgent, TenantQuota, TenantEvents",
    },
    {
      unit: "src/services/",
      says: "use-cases: the workflows a route or a job runs across thread, auth, storage",
    },
    {
      unit: "src/services/launch/",
      says: "the launch: agent key to a thread's launch token, with its checks, quota and context",
    },
    {
      unit: "src/http/",
      says: "request/response plumbing routes share: auth middleware, bodies, cursors, CORS",
    },
    {
      unit: "src/thread/",
      says: "the thread object's parts in four rooms, each entered through its index.ts",
    },
    {
      unit: "src/thread/object/",
      says: "the gate, sockets and their standing, frame dispatch, SSE, keep-alive",
    },
    {
      unit: "src/thread/conversation/",
      says: "turns, handoff, feedback, upgrades: the commands sockets and RPC share",
    },
    {
      unit: "src/thread/run/",
      says: "a run accepted, queued, streamed from the model and sealed; its frames",
    },
    {
      unit: "src/thread/contract/",
      says: "the Worker↔object contract: ThreadObject, its shapes, address and stub",
    },
    { unit: "src/events/", says: "the tenant events object's contract and one signed webhook delivery" },
    {
      unit: "src/auth/",
      says: "tokens (JWT, launch, visitor), API keys, rate limits and quotas, secret box",
    },
    {
      unit: "src/models/",
      says: "model resolution, prompts and the turn loop; the deterministic local model",
    },
    { unit: "src/tools/", says: "agent tools: definitions, signed outbound webhook calls, the handoff tool" },
    { unit: "src/storage/", says: "all SQL, one sub-folder per database; redaction, JSON columns" },
    {
      unit: "src/storage/thread/",
      says: "the thread object's SQLite: schema, entries, runs, pin, usage, retention",
    },
    {
      unit: "src/storage/http/",
      says: "the deployment port as a client of the control-plane service (no SQL)",
    },
    { unit: "src/storage/d1/", says: "D1 repositories, each bound to the tenant; shards, migration names" },
    {
      unit: "src/storage/postgres/",
      says: "the deployment store on PostgreSQL: prefixed canonical migration, tenant-bound queries",
    },
    {
      unit: "src/storage/projection/",
      says: "the outbox, its drain into D1, the daily reconciliation, their lane",
    },
    {
      unit: "src/storage/quota/",
      says: "the TenantQuota object's tables: counters, settings, run leases, socket rounds",
    },
    { unit: "src/storage/events/", says: "the TenantEvents object's tables: events, endpoints, deliveries" },
    {
      unit: "src/storage/attachments/",
      says: "the attachments bucket (R2): keys, streaming upload, reads, deletes",
    },
    {
      unit: "src/storage/evals/",
      says: "the TenantEvals object's tables: each eval run's spec and its case jobs",
    },
    {
      unit: "src/control/",
      says: "the control-plane model: artifact schema, deployment-store port, URL policy",
    },
    { unit: "src/errors.ts", says: "AppError, Result, fail/ok, on the shared error codes" },
    {
      unit: "src/shared/",
      says: "wire formats of the Worker, widget, client and console: API, protocol, errors",
    },
    { unit: "src/shims/", says: "modules wrangler.toml aliases in: no email, no MCP client, a smaller zod" },
    { unit: "src/shims/zod/", says: "what `zod` resolves to in the Worker: its API minus the locales" },
    {
      unit: "src/control-plane/",
      says: "the control-plane service for Node: Hono routes over the Postgres adapter, authorizer",
    },
    { unit: "src/widget/", says: "the browser widget and its small embed loader (docs/widget.md)" },
    { unit: "src/widget/locales/", says: "the widget's texts in other languages, loaded on demand" },
    {
      unit: "src/client/",
      says: "agent-threads/client, the typed client for a tenant's code (docs/client.md)",
    },
    {
      unit: "src/console/",
      says: "the tenant console (/console/): Preact + signals, screens loaded on demand",
    },
    { unit: "src/console/screens/", says: "one screen per path, each loaded on demand" },
    { unit: "src/console/agents/", says: "an agent's form fields" },
    { unit: "src/console/draft/", says: "the draft editor: artifact form, release weights, diff, conflicts" },
    {
      unit: "src/console/evals/",
      says: "the Evals screen's parts: suite editor, run diff, history, gate, make-a-test",
    },
    {
      unit: "src/console/sessions/",
      says: "a session: its conversation tree, branches, message parts, run input",
    },
    { unit: "src/console/charts/", says: "the analytics charts and their scales" },
    { unit: "src/console/kit/", says: "formatting and show-once secrets" },
    { unit: "src/console/ui/", says: "shared components: page, table, pager, fields, confirm, copy" },
  ],
};

function unitName(unit) {
  return Array.isArray(unit) ? unit.join(" + ") : unit;
}

function owns(unit, file) {
  if (Array.isArray(unit)) return unit.some((u) => owns(u, file));
  return unit.endsWith("/") ? file.startsWith(unit) : file === unit;
}

/** The unit a file belongs to and its line (0 = top; -1 for a program), or null when no layer names it. */
function placeOf(file, rules) {
  for (const program of Object.keys(rules.programs)) {
    if (file.startsWith(program)) return { unit: program, line: -1 };
  }
  for (const [line, units] of rules.layers.entries()) {
    for (const unit of units) if (owns(unit, file)) return { unit: unitName(unit), line };
  }
  return null;
}

const IMPORTS = [
  // import x from "…", import type { x } from "…", export { x } from "…", export * from "…"
  /^[ \t]*(?:import|export)[ \t]+[\w$\s,{}*]*?from[ \t]*["']([^"']+)["']/gm,
  // import "…"
  /^[ \t]*import[ \t]*["']([^"']+)["']/gm,
  // await import("…")
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
];

/** `a/b/../c/./d` → `a/c/d`, for repo-relative posix paths. */
function normalize(path) {
  const out = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && out.length > 0 && out.at(-1) !== "..") out.pop();
    else out.push(part);
  }
  return out.join("/");
}

function dirname(file) {
  const at = file.lastIndexOf("/");
  return at === -1 ? "" : file.slice(0, at);
}

/** The file an extensionless specifier names: `x.ts`, `x.tsx`, or a folder's `x/index.ts`. */
function resolved(target, exists) {
  if (/\.\w+$/.test(target)) return target;
  for (const candidate of [`${target}.ts`, `${target}.tsx`, `${target}/index.ts`]) {
    if (exists(candidate)) return candidate;
  }
  return `${target}.ts`;
}

/**
 * Relative imports of one file (`import … from`, `export … from`, `import "…"`, `import("…")`, `import type`
 * included): the specifier, the 1-based line it is on, and the repo path it resolves to. `exists(path)` tells
 * whether a repo-relative file exists, to resolve extensionless specifiers.
 */
export function importsOf(file, text, exists = () => false) {
  const found = [];
  for (const pattern of IMPORTS) {
    for (const match of text.matchAll(pattern)) {
      const specifier = match[1];
      if (!specifier.startsWith(".")) continue;
      const at = match.index + match[0].lastIndexOf(specifier);
      const line = text.slice(0, at).split("\n").length;
      const target = normalize(`${dirname(file)}/${specifier}`);
      // A package's own file, reached by path where its exports map offers no name (src/shims/zod): not a layer.
      if (target.startsWith("node_modules/")) continue;
      found.push({ specifier, line, target: resolved(target, exists) });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/** Text of `file` that only another folder may hold (RULES.onlyIn): the match, its line and the folder. */
export function onlyInBroken(file, text, rules = RULES) {
  const broken = [];
  for (const { pattern, folder } of rules.onlyIn) {
    const found = text.match(pattern);
    if (found !== null && !file.startsWith(folder)) {
      broken.push({ found: found[0], line: text.slice(0, found.index).split("\n").length, folder });
    }
  }
  return broken;
}

/** Why a file of src/ is too long, or null: past `rules.maxLines` it holds several concerns. */
export function tooLong(file, text, rules = RULES) {
  const lines = text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
  return lines > rules.maxLines
    ? `${file} has ${lines} lines, over ${rules.maxLines}: split it by concern`
    : null;
}

/** The inner unit of a file within a folder that has inner layers, and its line, or null. */
function innerPlaceOf(file, rules) {
  for (const [outer, lines] of Object.entries(rules.innerLayers)) {
    if (!file.startsWith(outer)) continue;
    for (const [line, units] of lines.entries()) {
      for (const unit of units) if (file.startsWith(unit)) return { outer, unit, line };
    }
    return { outer, unit: null, line: -1 };
  }
  return null;
}

/** Why an import breaks the rule of faces, doors and inner layers, or null when it keeps them. */
function innerRuleBroken(file, target, rules) {
  for (const [outer, { door, except }] of Object.entries(rules.doors)) {
    if (
      target.startsWith(outer) &&
      !file.startsWith(outer) &&
      !except.some((unit) => file.startsWith(unit)) &&
      !target.startsWith(door)
    ) {
      return `${outer} is entered only through ${door}index.ts`;
    }
  }
  for (const face of rules.faced) {
    if (target.startsWith(face) && !file.startsWith(face) && target !== `${face}index.ts`) {
      return `${face} is entered only through its index.ts`;
    }
  }
  const from = innerPlaceOf(file, rules);
  const to = innerPlaceOf(target, rules);
  if (from === null || to === null || from.outer !== to.outer) return null;
  if (from.unit === null) return `${file} is in no inner layer of ${from.outer}: add it to innerLayers`;
  if (to.unit === null) return `${target} is in no inner layer of ${to.outer}`;
  if (from.unit === to.unit) return null;
  if (to.line < from.line) return `${from.unit} may not import ${to.unit}: ${to.unit} is above it`;
  if (to.line === from.line) return `${from.unit} may not import ${to.unit}: they are on the same line`;
  return null;
}

/** Why `file` importing `target` (both repo paths, the target resolved) breaks a rule, or null when it is allowed. */
export function ruleBroken(file, target, rules = RULES) {
  const inner = innerRuleBroken(file, target, rules);
  if (inner !== null) return inner;
  const from = placeOf(file, rules);
  const to = placeOf(target, rules);
  if (from === null) return `${file} is in no layer: add its folder to the layers in scripts/lib/layers.mjs`;
  if (to === null) return `${target} is in no layer`;
  const programs = Object.keys(rules.programs);
  const program = [from.unit, to.unit].find((unit) => programs.includes(unit));
  if (program !== undefined) {
    const allowed = [program, rules.shared, ...rules.programs[program]];
    if (from.unit === program && allowed.includes(to.unit)) return null;
    return from.unit === program
      ? `${program} is a separate program: it imports only ${allowed.slice(1).join(", ")} and itself, not ${to.unit}`
      : `nothing imports ${to.unit}: it is a separate program`;
  }
  if (from.unit === rules.shared && to.unit !== rules.shared) {
    return `${rules.shared} imports nothing from the product: it is the wire format the widget shares`;
  }
  if (from.unit === to.unit) {
    const routeToRoute = from.unit === rules.routes && !rules.routeHelpers.includes(target);
    return routeToRoute
      ? `a route file never imports another route file: shared route helpers live in src/http/`
      : null;
  }
  if (to.line < from.line) return `${from.unit} may not import ${to.unit}: ${to.unit} is above it`;
  if (to.line === from.line) return `${from.unit} may not import ${to.unit}: they are on the same line`;
  return null;
}

/**
 * The folders under src/ and the files directly in it that `tree` holds (entries like "src/http/", "src/app.ts")
 * and no unit describes: each needs a line in RULES.units.
 */
export function undescribed(tree, rules = RULES) {
  const described = new Set(rules.units.map((u) => u.unit));
  return tree.filter((entry) => isMapped(entry) && !described.has(entry));
}

/** A folder under src/ or a file directly in src/: what the maps show. */
function isMapped(entry) {
  return entry.startsWith("src/") && (entry.endsWith("/") || !entry.slice(4).includes("/"));
}

/**
 * The rows of the map in order: each unit of the layers top to bottom, then each program, every one followed by its
 * described sub-folders (in RULES.units order, nested). Only what `tree` holds is shown. `mark` is the layer line
 * (1-based, counting only lines with something present), the inner line as "n.m", or "apart" for a program.
 */
function mapRows(tree, rules) {
  const present = new Set(tree);
  const says = new Map(rules.units.map((u) => [u.unit, u.says]));
  const rows = [];
  const inner = (outer, unit) => {
    const lines = rules.innerLayers[outer];
    return lines?.findIndex((units) => units.includes(unit)) ?? -1;
  };
  const children = (parent, depth, mark) => {
    for (const { unit } of rules.units) {
      if (!unit.startsWith(parent) || unit === parent || !present.has(unit)) continue;
      if (unit.slice(parent.length, -1).includes("/")) continue;
      const at = inner(parent, unit);
      const own = at === -1 ? "" : `${mark}.${at + 1}`;
      rows.push({
        mark: own,
        path: unit,
        name: unit.slice(parent.length),
        depth,
        says: says.get(unit) ?? "",
      });
      children(unit, depth + 1, own === "" ? mark : own);
    }
  };
  let line = 0;
  for (const units of rules.layers) {
    const shown = units.flat().filter((u) => present.has(u));
    if (shown.length === 0) continue;
    line++;
    for (const unit of shown) {
      rows.push({ mark: String(line), path: unit, name: unit, depth: 0, says: says.get(unit) ?? "" });
      if (unit.endsWith("/")) children(unit, 1, String(line));
    }
  }
  for (const program of Object.keys(rules.programs)) {
    if (!present.has(program)) continue;
    rows.push({ mark: "apart", path: program, name: program, depth: 0, says: says.get(program) ?? "" });
    children(program, 1, "");
  }
  return rows;
}

function columns(cells) {
  const widths = cells[0].map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] + 2)))
      .join("")
      .trimEnd(),
  );
}

/** The folder map (README.md): each folder of src/ and each top file, sub-folders indented, with what it holds. */
export function folderMap(tree, rules = RULES) {
  const rows = mapRows(tree, rules);
  return columns(rows.map((row) => [`${"  ".repeat(row.depth)}${row.name}`, row.says])).join("\n");
}

/** The layer table (docs/architecture.md): every unit with its line, the thread's rooms with their inner lines. */
function layerTable(tree, rules) {
  const rows = mapRows(tree, rules);
  return columns([
    ["line", "unit", "what it holds"],
    ...rows.map((row) => [row.mark, `${"  ".repeat(row.depth)}${row.name}`, row.says]),
  ]).join("\n");
}

/** The rules in words, one sentence each, for what `tree` holds. */
function ruleSentences(tree, rules) {
  const groups = rules.layers.flat().filter((u) => Array.isArray(u) && u.some((f) => tree.includes(f)));
  const present = (units) => units.filter((u) => tree.includes(u));
  const programs = Object.entries(rules.programs).filter(([program]) => tree.includes(program));
  return [
    "A unit may import itself and the units on lines with a higher number: never a lower number, nor a neighbour " +
      "with its own number. A sub-folder without a number is part of its folder's unit.",
    ...groups.map((group) => `${group.join(" and ")} form one unit, so they may import each other.`),
    ...Object.entries(rules.innerLayers).map(
      ([outer, lines]) =>
        `Inside ${outer} the same rule orders its rooms: ${lines
          .map((units) =>
            present(units)
              .map((u) => u.slice(outer.length))
              .join(", "),
          )
          .join(" above ")}.`,
    ),
    ...Object.entries(rules.doors).map(
      ([outer, { door, except }]) =>
        `The rest of src/ enters ${outer} only through ${door}index.ts; only ${except.join(", ")} may reach further.`,
    ),
    `${rules.faced.join(", ")}: each is imported only through its index.ts.`,
    ...rules.onlyIn.map(({ says }) => says),
    ...programs.map(
      ([program, extra]) =>
        `${program} ("apart") is a program of its own: it imports only ${[...extra, rules.shared].join(", ")} and ` +
        "itself, and nothing imports it.",
    ),
    `${rules.shared} imports only itself: the widget builds on it, so it must not pull Worker code into the browser.`,
    `A file in ${rules.routes} never imports another file in ${rules.routes}: what routes share lives in src/http/ (plumbing) or src/services/ (use-cases).`,
    `No file of src/ has more than ${rules.maxLines} lines: a longer one holds several concerns and is split by them.`,
  ];
}

/** The layer picture as `--picture` prints it: the table, then the rules. */
export function picture(tree, rules = RULES) {
  return [layerTable(tree, rules), "", ...ruleSentences(tree, rules)].join("\n");
}

/** The generated sections of the docs: the file, the section's name, and what goes between its markers. */
export function generatedSections(tree, rules = RULES) {
  return [
    { doc: "README.md", name: "folder map", body: fence(folderMap(tree, rules)) },
    {
      doc: "docs/architecture.md",
      name: "layer picture",
      body: [fence(layerTable(tree, rules)), "", ...ruleSentences(tree, rules).map((s) => `- ${s}`)].join(
        "\n",
      ),
    },
  ];
}

function fence(text) {
  return `\`\`\`text\n${text}\n\`\`\``;
}

const BEGIN = (name) => `<!-- generated by scripts/check-layers.mjs --write-docs: ${name}; do not edit -->`;
const END = "<!-- end generated -->";

/**
 * `text` with the section `name` replaced by `body`, or null when `text` has no such markers. `replaced === text`
 * means the section is up to date.
 */
export function withSection(text, name, body) {
  const begin = text.indexOf(BEGIN(name));
  if (begin === -1) return null;
  const start = begin + BEGIN(name).length;
  const end = text.indexOf(END, start);
  if (end === -1) return null;
  return `${text.slice(0, start)}\n${body}\n${text.slice(end)}`;
}
