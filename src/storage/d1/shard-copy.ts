// Copying, checking and removing one tenant's projected rows between two D1 shards, a page at a time.
//
// Every statement binds the tenant. Copies are idempotent upserts: a projected row only replaces an older version
// (the drain writes the same rows to both shards while a move runs, so a copy never undoes a newer write), and only
// while the thread's registry row (or, in a shard other than `DB`, its mirror) is live, so an erased thread's rows
// are never copied back. Column lists come from the rows themselves, so a column a later migration adds is copied too.
import { z } from "zod";
import { registrySchema, SHARD_SQL } from "./shards";

export interface ShardTable {
  table: string;
  /** The key after `tenant_id`. */
  key: readonly string[];
  /** The column naming the thread (the guard's); absent for rollups. */
  thread?: string;
  /** Projected rows carry a `version`; rollups are overwritten (they are copied while no drain writes). */
  versioned: boolean;
}

/** The projected tables, in copy order (sessions first, so a thread's other rows find their session). */
export const PROJECTED_TABLES: readonly ShardTable[] = [
  { table: "agent_sessions", key: ["id"], thread: "id", versioned: true },
  { table: "agent_messages", key: ["session_id", "id"], thread: "session_id", versioned: true },
  { table: "agent_runs", key: ["session_id", "id"], thread: "session_id", versioned: true },
  { table: "agent_tool_calls", key: ["session_id", "id"], thread: "session_id", versioned: true },
  { table: "agent_usage", key: ["session_id", "run_id", "turn"], thread: "session_id", versioned: true },
  {
    table: "agent_message_feedback",
    key: ["session_id", "message_id"],
    thread: "session_id",
    versioned: true,
  },
  // Last, so a move in progress when this table arrived keeps its place in the list.
  { table: "agent_approvals", key: ["thread_id", "id"], thread: "thread_id", versioned: true },
];

/** The analytics rollups the projection's triggers keep (0010). */
export const ROLLUP_TABLES: readonly ShardTable[] = [
  { table: "agent_analytics_daily", key: ["day", "agent_id", "version_id"], versioned: false },
  {
    table: "agent_analytics_first_delta",
    key: ["day", "agent_id", "version_id", "bucket"],
    versioned: false,
  },
];

export type Row = Record<string, unknown>;
type Value = string | number | null | ArrayBuffer;

const COLUMN = /^[a-z_][a-z0-9_]*$/;

function column(name: string): string {
  if (!COLUMN.test(name)) throw new Error(`Unexpected column name ${JSON.stringify(name)}.`);
  return name;
}

function value(v: unknown): Value {
  if (v === null || typeof v === "string" || typeof v === "number" || v instanceof ArrayBuffer) return v;
  if (v === undefined) return null;
  throw new Error(`Unexpected column value of type ${typeof v}.`);
}

const keyList = (t: ShardTable) => ["tenant_id", ...t.key].map(column).join(", ");

/** One page of a tenant's rows in key order, after the key `after` (null: from the start). */
export async function readKeyPage(
  db: D1Database,
  t: ShardTable,
  tenantId: string,
  after: readonly unknown[] | null,
  limit: number,
  columns: "all" | "key" = "all",
): Promise<Row[]> {
  const keys = t.key.map(column);
  const past = after === null ? "" : ` AND (${keys.join(", ")}) > (${keys.map(() => "?").join(", ")})`;
  const selected = columns === "all" ? "*" : keys.join(", ");
  const { results } = await db
    .prepare(
      `SELECT ${selected} FROM ${t.table} WHERE tenant_id = ?${past} ORDER BY ${keys.join(", ")} LIMIT ?`,
    )
    .bind(tenantId, ...(after ?? []).map(value), limit)
    .all<Row>();
  return results;
}

const rowidBounds = z.object({ low: z.number().nullable(), high: z.number().nullable() });

/** The lowest and highest rowid of the tenant's messages (the copy walks them in rowid order). */
export async function messageRowids(
  db: D1Database,
  tenantId: string,
): Promise<{ low: number; high: number } | null> {
  const row = rowidBounds.parse(
    await db
      .prepare("SELECT MIN(rowid) AS low, MAX(rowid) AS high FROM agent_messages WHERE tenant_id = ?")
      .bind(tenantId)
      .first(),
  );
  return row.low === null || row.high === null ? null : { low: row.low, high: row.high };
}

/**
 * The tenant's messages with rowid in (after, until], oldest first, at most `limit`. Copied in this order they keep
 * their relative order in the target, which the search index's rowids (newest first) depend on.
 */
export async function readMessageWindow(
  db: D1Database,
  tenantId: string,
  window: { after: number; until: number },
  limit: number,
): Promise<{ rows: Row[]; last: number | null }> {
  const { results } = await db
    .prepare(
      `SELECT rowid AS copy_rowid, * FROM agent_messages WHERE rowid > ? AND rowid <= ? AND tenant_id = ?
       ORDER BY rowid LIMIT ?`,
    )
    .bind(window.after, window.until, tenantId, limit)
    .all<Row>();
  const last = results.at(-1)?.copy_rowid;
  return {
    rows: results.map(({ copy_rowid: _rowid, ...row }) => row),
    last: typeof last === "number" ? last : null,
  };
}

/** Upserts of copied rows into `db` (see the header for the guards). */
export function copyStatements(db: D1Database, t: ShardTable, rows: readonly Row[]): D1PreparedStatement[] {
  return rows.map((row) => {
    const columns = Object.keys(row).map(column);
    const values = columns.map((c) => value(row[c]));
    const updates = columns.map((c) => `${c} = excluded.${c}`).join(", ");
    const placeholders = columns.map(() => "?").join(", ");
    if (t.thread === undefined) {
      return db
        .prepare(
          `INSERT INTO ${t.table} (${columns.join(", ")}) VALUES (${placeholders})
           ON CONFLICT (${keyList(t)}) DO UPDATE SET ${updates}`,
        )
        .bind(...values);
    }
    const guard = t.versioned ? ` WHERE excluded.version > ${t.table}.version` : "";
    return db
      .prepare(
        `INSERT INTO ${t.table} (${columns.join(", ")}) SELECT ${placeholders}
         WHERE EXISTS (SELECT 1 FROM threads g WHERE g.tenant_id = ? AND g.id = ? AND g.deleted_at IS NULL)
         ON CONFLICT (${keyList(t)}) DO UPDATE SET ${updates}${guard}`,
      )
      .bind(...values, value(row.tenant_id), value(row[t.thread]));
  });
}

/** Of these keys (each after `tenant_id`), the ones `db` holds. */
export async function existingKeys(
  db: D1Database,
  t: ShardTable,
  tenantId: string,
  keys: readonly (readonly unknown[])[],
): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const cols = t.key.map(column);
  const on = cols.map((c, i) => `s.${c} = json_extract(j.value, '$[${i}]')`).join(" AND ");
  const { results } = await db
    .prepare(
      `SELECT ${cols.map((c) => `s.${c}`).join(", ")} FROM json_each(?) j
       JOIN ${t.table} s ON s.tenant_id = ? AND ${on}`,
    )
    .bind(JSON.stringify(keys), tenantId)
    .all<Row>();
  return new Set(results.map((r) => JSON.stringify(cols.map((c) => r[c]))));
}

/** Deletes these rows (keys after `tenant_id`). */
export function deleteKeyStatements(
  db: D1Database,
  t: ShardTable,
  tenantId: string,
  keys: readonly (readonly unknown[])[],
): D1PreparedStatement[] {
  const where = t.key.map((c) => `${column(c)} = ?`).join(" AND ");
  return keys.map((key) =>
    db.prepare(`DELETE FROM ${t.table} WHERE tenant_id = ? AND ${where}`).bind(tenantId, ...key.map(value)),
  );
}

/** Deletes up to `limit` of the tenant's rows of a table; how many went. */
export async function deleteTenantPage(
  db: D1Database,
  table: string,
  tenantId: string,
  limit: number,
): Promise<number> {
  const result = await db
    .prepare(
      `DELETE FROM ${column(table)} WHERE tenant_id = ? AND rowid IN (SELECT rowid FROM ${column(table)}
         WHERE tenant_id = ? LIMIT ?)`,
    )
    .bind(tenantId, tenantId, limit)
    .run();
  return result.meta.changes ?? 0;
}

const registryRow = registrySchema.extend({ id: z.string() });

/** A page of the tenant's registry rows (in `DB`), by id, as mirror upserts for `target`. */
export async function mirrorPage(
  control: D1Database,
  target: D1Database,
  tenantId: string,
  afterId: string,
  limit: number,
): Promise<{ statements: D1PreparedStatement[]; last: string | null }> {
  const { results } = await control
    .prepare(
      `SELECT id, agent_id, environment, subject, subject_kind, created_at, deleted_at, preview FROM threads
       WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?`,
    )
    .bind(tenantId, afterId, limit)
    .all();
  const rows = results.map((r) => registryRow.parse(r));
  return {
    statements: rows.map((r) =>
      target
        .prepare(SHARD_SQL.upsertMirror)
        .bind(
          tenantId,
          r.id,
          r.agent_id,
          r.environment,
          r.subject,
          r.subject_kind,
          r.created_at,
          r.deleted_at,
          r.preview,
        ),
    ),
    last: rows.at(-1)?.id ?? null,
  };
}
