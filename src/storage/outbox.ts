// The projection outbox: every change D1 must learn about is queued in the same SQLite transaction as the change.
import type { JsonValue } from "./redact";

/** What a row projects: an entry, a run, a tool call or a usage record. */
export const OUTBOX_KINDS = ["entry", "run", "tool_call", "usage"] as const;
export type OutboxKind = (typeof OUTBOX_KINDS)[number];

export interface OutboxItem {
  kind: OutboxKind;
  /** Id of the projected record (for usage: `<runId>:<turn>`). */
  refId: string;
  /** Grows with every change of the record; the drain's upsert ignores anything not newer than D1's copy. */
  version: number;
  /** The record as D1 should see it, already redacted. */
  payload: JsonValue;
}

/**
 * Queues one change for the D1 projection. Call it inside the `transactionSync` that writes the change, so a
 * change without its outbox row (or the reverse) can never be committed. Returns the row's seq.
 */
export function enqueueOutbox(storage: DurableObjectStorage, item: OutboxItem, now: number): number {
  const row = storage.sql
    .exec<{ seq: number }>(
      "INSERT INTO outbox (kind, ref_id, version, payload_json, attempts, next_attempt_at) VALUES (?, ?, ?, ?, 0, ?) RETURNING seq",
      item.kind,
      item.refId,
      item.version,
      JSON.stringify(item.payload),
      now,
    )
    .one();
  return row.seq;
}

/** Rows waiting to be projected (due or backing off). */
export function outboxSize(storage: DurableObjectStorage): number {
  return Number(storage.sql.exec("SELECT COUNT(*) AS n FROM outbox").one().n);
}
