#!/usr/bin/env node
// Fails when a SQL string in src/ reads or changes a tenant table without binding `tenant_id = ?` (SECURITY.md).
//
// Tenant tables are found in migrations/ (every D1 table with a tenant_id column). Each string or template literal
// that names one after FROM, JOIN or UPDATE needs at least as many tenant bindings as such references — a
// `tenant_id = ?` (or `?N`), or a join on another reference's tenant_id — and an INSERT INTO one must list
// tenant_id. `${NAME}` interpolations of string constants are expanded first, and a constant used that way is checked
// where it is used, not on its own. The exceptions below run before any tenant is known; each says why.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Allowed statements: the file and a fragment that identifies the statement exactly. */
const EXCEPTIONS = [
  {
    file: "src/storage/d1/tenant-credentials.ts",
    fragment: "WHERE k.id = ?",
    why: "API-key authentication: the key id is what names the tenant; the secret is verified before trusting it",
  },
  {
    file: "src/storage/d1/console-sessions.ts",
    fragment: "WHERE s.id = ?",
    why: "console cookie authentication: the session id is what names the tenant; the secret is verified before trusting it",
  },
  {
    file: "src/storage/d1/console-sessions.ts",
    fragment: "DELETE FROM console_sessions WHERE expires_at < ?",
    why: "housekeeping: deletes only sessions already expired (they authenticate no one) and reads nothing back",
  },
  {
    file: "src/storage/d1/thread-previews.ts",
    fragment: "FROM thread_previews p WHERE p.expires_at <= ?",
    why: "housekeeping: lists only previews already expired (each hold read within the preview's own tenant), each then erased within its own tenant",
  },
  {
    file: "src/storage/d1/agent-origins.ts",
    fragment: "WHERE o.origin IN (?1, ?2) AND a.status = 'active'",
    why: "CORS preflight: carries no credential, answers only whether some active agent allows the Origin",
  },
  {
    file: "src/storage/d1/agents.ts",
    fragment: "WHERE public_key = ?",
    why: "launch by public agent key: the key is what names the tenant and agent",
  },
  {
    file: "src/storage/d1/versions.ts",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the statement's source text, interpolation included
    fragment: "FROM agent_versions WHERE ${sql}",
    why: "a private helper whose callers each pass a predicate that starts with tenant_id = ?",
  },
  {
    file: "src/storage/postgres/pg-agents.ts",
    fragment: "WHERE public_key = $1",
    why: "launch by public agent key (PostgreSQL): the key is what names the tenant and agent",
  },
  {
    file: "src/storage/postgres/pg-agents.ts",
    fragment: "WHERE g.public_key = $2",
    why: "a launch's agent by public key (PostgreSQL): the key names the tenant; its release is joined on that tenant",
  },
  {
    file: "src/storage/postgres/pg-rows.ts",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the statement's source text, interpolation included
    fragment: "JOIN ${t.versions} v ON v.tenant_id = ra.tenant_id",
    why: "a fragment returned by allocationSelect(); every caller appends WHERE ra.tenant_id = $1",
  },
  {
    file: "src/storage/postgres/pg-versions.ts",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the statement's source text, interpolation included
    fragment: "FROM ${c.t.versions} WHERE ${where}",
    why: "a private helper whose callers each pass a predicate that starts with tenant_id = $1",
  },
  {
    file: "src/storage/d1/shard-move-state.ts",
    fragment: "FROM tenant_shards WHERE state <> 'active'",
    why: "the shard-move job walks the unfinished moves (the map, not tenant data) to bind each tenant in turn",
  },
];

function tenantTables() {
  const tables = new Set();
  const dir = join(root, "migrations");
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".sql"))) {
    const text = readFileSync(join(dir, name), "utf8");
    for (const match of text.matchAll(/CREATE TABLE\s+(\w+)\s*\(([\s\S]*?)\n\);/gi)) {
      if (/^\s*tenant_id\s/m.test(match[2])) tables.add(match[1]);
    }
  }
  return [...tables];
}

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|mjs|js)$/.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** Template literals and double-quoted strings (SQL here never sits in single quotes). */
function literals(text) {
  const found = [];
  for (const m of text.matchAll(/`(?:\\[\s\S]|\$\{[^}]*\}|[^`\\])*`/g))
    found.push({ text: m[0], index: m.index });
  for (const m of text.matchAll(/"(?:\\.|[^"\\\n])*"/g)) found.push({ text: m[0], index: m.index });
  return found;
}

/** `const NAME = <literal>` definitions of a file, by name. */
function constants(text) {
  const found = new Map();
  for (const m of text.matchAll(
    /\bconst\s+([A-Za-z_$][\w$]*)(?:\s*:\s*string)?\s*=\s*(`(?:\\[\s\S]|\$\{[^}]*\}|[^`\\])*`|"(?:\\.|[^"\\\n])*")/g,
  )) {
    found.set(m[1], { text: m[2], index: m.index + m[0].indexOf(m[2]) });
  }
  return found;
}

const tables = tenantTables();
if (tables.length < 10) {
  console.error(
    `check-sql-tenancy: found only ${tables.length} tenant tables in migrations/; refusing to pass.`,
  );
  process.exit(1);
}
const names = tables.join("|");
const tableRef = new RegExp(`\\b(?:FROM|JOIN|UPDATE)\\s+(${names})\\b`, "gi");
const insertInto = new RegExp(`\\bINSERT\\s+INTO\\s+(${names})\\s*\\(([^)]*)\\)`, "gi");

const tenantBindingOrJoin = /\b(?:\w+\.)?tenant_id = (?:\?\d*|\$\d+|\w+\.tenant_id\b)/g;

/**
 * The PostgreSQL adapter (src/storage/postgres/) names its prefixed tables `${c.t.agents}`, `${t.pins}`, …: each key
 * is read as the D1 table it mirrors, so the same rule holds there ($1… count as bindings like ?).
 */
const PG_TABLE_KEYS = {
  tenants: "tenants",
  agents: "agents",
  drafts: "agent_drafts",
  versions: "agent_versions",
  runtimes: "runtime_revisions",
  releases: "releases",
  allocations: "release_allocations",
  activeReleases: "active_releases",
  pins: "thread_pins",
};
function pgTableNames(text) {
  return text.replace(/\$\{\s*(?:c\.)?t\.(\w+)\s*\}/g, (whole, key) => PG_TABLE_KEYS[key] ?? whole);
}

const files = sourceFiles(join(root, "src")).map((path) => {
  const text = readFileSync(path, "utf8");
  return { file: relative(root, path).split("\\").join("/"), text, constants: constants(text) };
});
/** Constants by name across files, for imported fragments; a name defined twice resolves only within its file. */
const global = new Map();
const ambiguous = new Set();
for (const f of files) {
  for (const [name, value] of f.constants) {
    if (global.has(name)) ambiguous.add(name);
    global.set(name, value);
  }
}
const interpolated = new Set();
for (const f of files) {
  for (const literal of literals(f.text)) {
    for (const m of literal.text.matchAll(/\$\{\s*([A-Za-z_$][\w$]*)\s*\}/g)) interpolated.add(m[1]);
  }
}

function expand(text, local, depth = 0) {
  if (depth > 5) return text;
  return pgTableNames(text).replace(/\$\{\s*([A-Za-z_$][\w$]*)\s*\}/g, (whole, name) => {
    const value = local.get(name) ?? (ambiguous.has(name) ? undefined : global.get(name));
    return value === undefined ? whole : expand(value.text.slice(1, -1), local, depth + 1);
  });
}

const problems = [];
const usedExceptions = new Set();
let checked = 0;
for (const { file, text, constants: local } of files) {
  const fragments = new Set([...local].filter(([name]) => interpolated.has(name)).map(([, v]) => v.index));
  for (const raw of literals(text)) {
    if (fragments.has(raw.index)) continue;
    const literal = { text: expand(raw.text, local), index: raw.index };
    const refs = [...literal.text.matchAll(tableRef)].map((m) => m[1]);
    const inserts = [...literal.text.matchAll(insertInto)];
    if (refs.length === 0 && inserts.length === 0) continue;
    checked += 1;
    const exception = EXCEPTIONS.find((e) => e.file === file && raw.text.includes(e.fragment));
    if (exception) {
      usedExceptions.add(exception);
      continue;
    }
    const line = text.slice(0, literal.index).split("\n").length;
    const bindings = literal.text.match(tenantBindingOrJoin)?.length ?? 0;
    if (refs.length > bindings) {
      problems.push(
        `${file}:${line}: ${refs.join(", ")} referenced ${refs.length}× but tenant_id = ? bound ${bindings}×`,
      );
    }
    for (const insert of inserts) {
      if (!/\btenant_id\b/.test(insert[2]))
        problems.push(`${file}:${line}: INSERT INTO ${insert[1]} without tenant_id`);
    }
  }
}
for (const exception of EXCEPTIONS) {
  if (!usedExceptions.has(exception)) {
    problems.push(
      `${exception.file}: the allowed exception "${exception.fragment}" no longer exists; remove it`,
    );
  }
}

if (problems.length > 0) {
  console.error("SQL on tenant data must bind tenant_id (SECURITY.md, Tenancy):");
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(`check-sql-tenancy: ${checked} statements on ${tables.length} tenant tables bind tenant_id.`);
