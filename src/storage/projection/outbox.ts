// The projection backlog: what D1 has yet to learn, queued in the same SQLite transaction as the change itself.
//
// Entries are append-only and ordered by seq, so they need no queue: D1 lacks exactly the entries above the
// `projected_entry_seq` watermark kept in `meta`. Records that change in place (runs, tool calls) go through the
// `outbox` table, one row per record while it waits; a run's usage travels with the run.
import type { JsonValue } from "../redact";
import { readMetaInteger, writeMeta } from "../thread/thread-meta";

/**
 * What a row projects: a run (with its usage), a tool call, an entry's feedback or an approval (its payload is the
 * record, see approval-outbox.ts); `entry` and `usage` rows come only from older builds.
 */
const OUTBOX_KINDS = ["entry", "run", "tool_call", "usage", "feedback", "approval"] as const;
type OutboxKind = (typeof OUTBOX_KINDS)[number];

export interface OutboxItem {
  kind: Exclude<OutboxKind, "entry" | "usage">;
  /** Id of the projected record (for usage: `<runId>:<turn>`; for feedback: the entry's id). */
  refId: string;
  /** Grows with every change of the record; the drain's upsert ignores anything not newer than D1's copy. */
  version: number;
  /** The record as D1 should see it, already redacted. */
  payload: JsonValue;
}

/** Meta key: every entry at or below this seq is in D1 (or was deleted by retention before it got there). */
export const PROJECTED_ENTRY_SEQ_KEY = "projected_entry_seq";

/**
 * Queues one change for the D1 projection. Call it inside the `transactionSync` that writes the change, so a
 * change without its outbox row (or the reverse) can never be committed. A record already waiting keeps its one row
 * as it is, with nothing written: the drain projects the record as it is when it drains, and deletes the row only
 * if the record's revision is still the one it sent (otherwise the row takes the newer revision and waits for the
 * next drain). `fresh`: the record was created in this very transaction, so no row for it can be waiting. One
 * statement either way: the check for a waiting row is the insert's own condition.
 */
export function enqueueOutbox(
  storage: DurableObjectStorage,
  item: OutboxItem,
  now: number,
  options: { fresh?: boolean } = {},
): void {
  storage.sql.exec(
    `INSERT INTO outbox (kind, ref_id, version, payload_json, attempts, next_attempt_at)
     SELECT ?1, ?2, ?3, ?4, 0, ?5
     WHERE ?6 OR NOT EXISTS (SELECT 1 FROM outbox WHERE kind = ?1 AND ref_id = ?2)`,
    item.kind,
    item.refId,
    item.version,
    JSON.stringify(item.payload),
    now,
    options.fresh ? 1 : 0,
  );
}

/** The thread table holding each kind's records, with a `revision` column, and the column naming the record. */
export const REVISION_TABLES: Readonly<Record<string, { name: string; key: string }>> = {
  run: { name: "runs", key: "id" },
  tool_call: { name: "tool_calls", key: "id" },
  feedback: { name: "feedback", key: "entry_id" },
  approval: { name: "run_actions", key: "id" },
};

/** A queued record's revision as the thread holds it now; null when it is gone (or has no revision of its own). */
export function currentRevision(storage: DurableObjectStorage, kind: string, refId: string): number | null {
  const table = REVISION_TABLES[kind];
  if (table === undefined) return null;
  const row = storage.sql
    .exec(`SELECT revision FROM ${table.name} WHERE ${table.key} = ?`, refId)
    .toArray()[0];
  return row === undefined ? null : Number(row.revision);
}

/** The entry watermark; every object has it from schema version 4 on. */
export function projectedEntrySeq(storage: DurableObjectStorage): number {
  const value = readMetaInteger(storage, PROJECTED_ENTRY_SEQ_KEY) ?? 0;
  return Math.max(0, value);
}

export function setProjectedEntrySeq(storage: DurableObjectStorage, seq: number): void {
  writeMeta(storage, PROJECTED_ENTRY_SEQ_KEY, String(seq));
}

/** Entries above the watermark (a range count over the rowid). */
function entriesAwaitingProjection(storage: DurableObjectStorage): number {
  const after = projectedEntrySeq(storage);
  return Number(storage.sql.exec("SELECT COUNT(*) AS n FROM entries WHERE seq > ?", after).one().n);
}

/** Changes D1 has yet to learn: waiting outbox rows (due or backing off) and entries above the watermark. */
export function projectionBacklog(storage: DurableObjectStorage): number {
  const rows = Number(storage.sql.exec("SELECT COUNT(*) AS n FROM outbox").one().n);
  return rows + entriesAwaitingProjection(storage);
}
