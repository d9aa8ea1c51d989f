// Applies an agent's retention policy to one thread's own storage, and remembers what D1 must delete to match.
//
// D1 learns about retention without the outbox: each pass raises a mark (the highest deleted seq, the tool-call
// age cutoff) and the next drain sends one statement that deletes every D1 message at or below that seq which the
// thread no longer holds. The mark is cleared only after that batch commits, so D1 never keeps what the thread
// deleted for longer than one successful drain (the D1 retention job applies the same policy on its own as well).

import { PROJECTED_ENTRY_SEQ_KEY } from "../projection/outbox";
import { attachmentIdsOfEntries, dropRetainedAttachments } from "./attachment-release";
import { rebuildAncestry } from "./entry-ancestry";
import {
  ACTIVE_LEAF_KEY,
  deleteMeta,
  metaInteger,
  readMetaInteger,
  readMetaKeys,
  writeMeta,
} from "./thread-meta";

export interface RetentionPolicy {
  maxAgeDays?: number;
  maxMessagesPerThread?: number;
}

/** What the next drain must mirror into D1. */
export interface RetentionMark {
  generation: number;
  /** Every D1 message at or below this seq that the thread no longer holds is deleted. */
  throughSeq: number;
  /** Epoch ms: tool calls created before it are deleted; null when only a message count applied. */
  toolCallsBefore: number | null;
}

const DAY_MS = 86_400_000;
const GENERATION = "retention_generation";
const PROJECTED = "retention_projected_generation";
const THROUGH_SEQ = "retention_through_seq";
const TOOL_CALLS_BEFORE = "retention_tool_calls_before";

// Retention's marks are numbers: these two name the shared meta accessors in those terms.
const metaNumber = readMetaInteger;
const setMeta = (storage: DurableObjectStorage, key: string, value: number): void =>
  writeMeta(storage, key, String(value));

/** The meta keys `pendingRetention` reads, for a caller that reads them with its own (one statement). */
export const RETENTION_MARK_KEYS: readonly string[] = [GENERATION, PROJECTED, THROUGH_SEQ, TOOL_CALLS_BEFORE];

/**
 * The retention still to mirror into D1, or null when D1 already matches every pass; from `meta` as read with
 * `RETENTION_MARK_KEYS` (read here when not given).
 */
export function pendingRetention(
  storage: DurableObjectStorage,
  meta: ReadonlyMap<string, string> = readMetaKeys(storage, RETENTION_MARK_KEYS),
): RetentionMark | null {
  const generation = metaInteger(meta, GENERATION) ?? 0;
  if (generation <= (metaInteger(meta, PROJECTED) ?? 0)) return null;
  return {
    generation,
    throughSeq: metaInteger(meta, THROUGH_SEQ) ?? 0,
    toolCallsBefore: metaInteger(meta, TOOL_CALLS_BEFORE),
  };
}

/** Records that D1 mirrored `mark`; a pass that ran meanwhile stays pending (its mark includes this one). */
export function retentionProjected(storage: DurableObjectStorage, mark: RetentionMark): void {
  setMeta(storage, PROJECTED, mark.generation);
  if ((metaNumber(storage, GENERATION) ?? 0) === mark.generation) {
    deleteMeta(storage, THROUGH_SEQ, TOOL_CALLS_BEFORE);
  }
}

/** Per object: how many retention passes deleted entries (the only way entries leave a live thread). */
const deletions = new WeakMap<DurableObjectStorage, number>();

/** Moves whenever entries were deleted: what was counted over them before must be counted again. */
export function entryDeletions(storage: DurableObjectStorage): number {
  return deletions.get(storage) ?? 0;
}

const ids = (rows: Record<string, SqlStorageValue>[]): string[] => rows.map((r) => String(r.id));

/**
 * Deletes entries older than `maxAgeDays` and entries older than the newest `maxMessagesPerThread` messages,
 * except entries of a live (queued or running) run and their user message. Survivors whose parent was deleted
 * become roots; a deleted active leaf is cleared; queued projections of deleted records are dropped; tool calls
 * past the age limit go too, and so do attachments no remaining message carries that a deleted one did or that are
 * past the age. Runs and token usage (no content) are kept.
 */
export function applyThreadRetention(
  storage: DurableObjectStorage,
  policy: RetentionPolicy,
  now: number,
): { deletedEntries: number } {
  const maxAge = policy.maxAgeDays;
  const maxMessages = policy.maxMessagesPerThread;
  if (maxAge === undefined && maxMessages === undefined) return { deletedEntries: 0 };
  const sql = storage.sql;

  return storage.transactionSync(() => {
    const live = ids(sql.exec("SELECT id FROM runs WHERE status IN ('queued', 'running')").toArray());
    const liveJson = JSON.stringify(live);
    const protectedIds = ids(
      sql
        .exec(
          `SELECT id FROM entries WHERE run_id IN (SELECT value FROM json_each(?))
           UNION SELECT user_entry_id AS id FROM runs WHERE id IN (SELECT value FROM json_each(?))
             AND user_entry_id IS NOT NULL`,
          liveJson,
          liveJson,
        )
        .toArray(),
    );

    const cutoff = maxAge === undefined ? null : now - maxAge * DAY_MS;
    let floorSeq: number | null = null;
    if (maxMessages !== undefined) {
      const row = sql
        .exec(
          "SELECT seq FROM entries WHERE kind = 'message' ORDER BY seq DESC LIMIT 1 OFFSET ?",
          maxMessages - 1,
        )
        .toArray()[0];
      if (row !== undefined) floorSeq = Number(row.seq);
    }

    const victims = sql
      .exec(
        `SELECT id, seq FROM entries
         WHERE (seq < ? OR created_at < ?) AND id NOT IN (SELECT value FROM json_each(?))`,
        floorSeq ?? Number.MIN_SAFE_INTEGER,
        cutoff ?? Number.MIN_SAFE_INTEGER,
        JSON.stringify(protectedIds),
      )
      .toArray();
    const victimIds = JSON.stringify(ids(victims));
    const throughSeq = victims.reduce((max, r) => Math.max(max, Number(r.seq)), 0);
    // The files the deleted messages carried (docs/privacy.md#attachments), read before the messages go.
    const carried = victims.length > 0 ? attachmentIdsOfEntries(storage, victimIds) : [];

    if (victims.length > 0) {
      // Before the delete: a rolled-back pass only makes the next drain count again.
      deletions.set(storage, entryDeletions(storage) + 1);
      sql.exec("DELETE FROM entries WHERE id IN (SELECT value FROM json_each(?))", victimIds);
      // A deleted reply's feedback goes with it (D1's copy goes with the mirrored pass).
      sql.exec("DELETE FROM feedback WHERE entry_id IN (SELECT value FROM json_each(?))", victimIds);
      const rerooted = sql
        .exec(
          "UPDATE entries SET parent_id = NULL WHERE parent_id IN (SELECT value FROM json_each(?)) RETURNING seq",
          victimIds,
        )
        .toArray()
        .map((r) => Number(r.seq));
      // Re-rooted entries and everything below them sit at new depths: their jump pointers are rebuilt.
      if (rerooted.length > 0)
        rebuildAncestry(
          storage,
          rerooted.reduce((a, b) => Math.min(a, b)),
        );
      sql.exec(
        "DELETE FROM meta WHERE key = ? AND value IN (SELECT value FROM json_each(?))",
        ACTIVE_LEAF_KEY,
        victimIds,
      );
      sql.exec(
        "DELETE FROM append_idempotency WHERE entry_id IN (SELECT value FROM json_each(?))",
        victimIds,
      );
      // Deleted entries need no projection. Deleting the newest ones frees their seqs for the next appends, so the
      // entry watermark comes down to what survives: new entries always land above it.
      sql.exec(
        `UPDATE meta SET value = CAST(MIN(CAST(value AS INTEGER), (SELECT COALESCE(MAX(seq), 0) FROM entries)) AS TEXT)
         WHERE key = ?`,
        PROJECTED_ENTRY_SEQ_KEY,
      );
    }

    // Files no remaining message carries go when a deleted one did or they are past the age (never sent); the tenant's
    // ledger hears of them after this transaction (src/thread/object/upkeep.ts).
    if (carried.length > 0 || cutoff !== null) dropRetainedAttachments(storage, carried, cutoff);

    let deletedCalls = 0;
    if (cutoff !== null) {
      const calls = sql
        .exec(
          "SELECT id FROM tool_calls WHERE created_at < ? AND run_id NOT IN (SELECT value FROM json_each(?))",
          cutoff,
          liveJson,
        )
        .toArray();
      deletedCalls = calls.length;
      if (deletedCalls > 0) {
        const callIds = JSON.stringify(ids(calls));
        sql.exec("DELETE FROM tool_calls WHERE id IN (SELECT value FROM json_each(?))", callIds);
        sql.exec(
          "DELETE FROM outbox WHERE kind = 'tool_call' AND ref_id IN (SELECT value FROM json_each(?))",
          callIds,
        );
      }
    }

    if (victims.length > 0 || deletedCalls > 0) {
      setMeta(storage, GENERATION, (metaNumber(storage, GENERATION) ?? 0) + 1);
      setMeta(storage, THROUGH_SEQ, Math.max(metaNumber(storage, THROUGH_SEQ) ?? 0, throughSeq));
      if (cutoff !== null) {
        setMeta(storage, TOOL_CALLS_BEFORE, Math.max(metaNumber(storage, TOOL_CALLS_BEFORE) ?? 0, cutoff));
      }
    }
    return { deletedEntries: victims.length };
  });
}
