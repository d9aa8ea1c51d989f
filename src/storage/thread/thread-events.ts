// Events for the tenant's backend (docs/webhooks.md), kept in the thread's SQLite until the webhook deliveries drain them.
//
// Each event is written inside the `transactionSync` of the change it reports, so a change is never committed
// without its event (or the reverse). The thread forwards them to its tenant's events object (src/events/) and
// deletes them once that object has stored them (docs/decisions.md, "Event webhooks").
import { z } from "zod";
import { parseJsonColumn } from "../json-column";
import type { JsonValue } from "../redact";
import { readMetaInteger, writeMeta } from "./thread-meta";

export const THREAD_EVENT_TYPES = [
  "thread.created",
  "run.succeeded",
  "run.failed",
  "message.feedback",
  "handoff.requested",
  "approval.requested",
  "approval.decided",
  "tool.requested",
] as const;
export type ThreadEventType = (typeof THREAD_EVENT_TYPES)[number];

export interface ThreadEvent {
  seq: number;
  /** `evt_…`: the id a delivery carries as `webhook-id`, the same on every retry. */
  id: string;
  type: ThreadEventType;
  /** Epoch milliseconds. */
  createdAt: number;
  data: JsonValue;
}

const eventRow = z.object({
  seq: z.number().int(),
  id: z.string(),
  type: z.enum(THREAD_EVENT_TYPES),
  created_at: z.number().int(),
  data_json: z.string(),
});

const FORWARDED_KEY = "events_forwarded_seq";
/** Forwarded events stay this long: the feedback rate check counts the last minute's (`recentThreadEvents`). */
export const FORWARDED_EVENT_KEEP_MS = 120_000;
/** Events nothing here reads once forwarded (one per run): they go as soon as they are acknowledged. */
const DROPPED_ON_ACK: readonly ThreadEventType[] = ["run.succeeded", "run.failed"];

export const newEventId = (): string => `evt_${crypto.randomUUID().replace(/-/g, "")}`;

/**
 * Per thread object: known to hold no unacknowledged event (a read found none, and nothing was recorded since), so a
 * turn that records no event costs its hand-over no statement. Unknown at every start.
 */
const noneWaiting = new WeakSet<DurableObjectStorage>();

/** Records one event; call it inside the transaction that writes the change it reports. */
export function recordThreadEvent(
  storage: DurableObjectStorage,
  event: { type: ThreadEventType; data: JsonValue },
  now: number,
): ThreadEvent {
  const id = newEventId();
  noneWaiting.delete(storage);
  // Above every seq the watermark covers, even once the acknowledged rows are gone (SQLite would otherwise hand a
  // freed seq out again, below the watermark, and the event would never be forwarded).
  const row = storage.sql
    .exec<{ seq: number }>(
      `INSERT INTO thread_events (seq, id, type, created_at, data_json)
       VALUES (MAX(COALESCE((SELECT MAX(seq) FROM thread_events), 0),
                   COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?5), 0)) + 1, ?1, ?2, ?3, ?4)
       RETURNING seq`,
      id,
      event.type,
      now,
      JSON.stringify(event.data),
      FORWARDED_KEY,
    )
    .one();
  return { seq: row.seq, id, type: event.type, createdAt: now, data: event.data };
}

const toEvent = (r: Record<string, SqlStorageValue>): ThreadEvent => {
  const row = eventRow.parse(r);
  return {
    seq: row.seq,
    id: row.id,
    type: row.type,
    createdAt: row.created_at,
    data: parseJsonColumn(row.data_json),
  };
};

/** Events after `afterSeq`, oldest first: how a consumer drains them by its own watermark. */
export function threadEventsAfter(storage: DurableObjectStorage, afterSeq = 0, limit = 100): ThreadEvent[] {
  return storage.sql
    .exec(
      "SELECT seq, id, type, created_at, data_json FROM thread_events WHERE seq > ? ORDER BY seq LIMIT ?",
      afterSeq,
      limit,
    )
    .toArray()
    .map(toEvent);
}

/**
 * The oldest `limit` events the tenant's events object has not acknowledged, in one statement — or none without a
 * statement, when a read found none and nothing was recorded since.
 */
export function unforwardedThreadEvents(storage: DurableObjectStorage, limit: number): ThreadEvent[] {
  if (noneWaiting.has(storage)) return [];
  const events = storage.sql
    .exec(
      `SELECT seq, id, type, created_at, data_json FROM thread_events
       WHERE seq > COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 0) ORDER BY seq LIMIT ?`,
      FORWARDED_KEY,
      limit,
    )
    .toArray()
    .map(toEvent);
  if (events.length === 0) noneWaiting.add(storage);
  return events;
}

/** Events of `type` recorded at or after `since` among the newest `limit` of that type (a rate check's count). */
export function recentThreadEvents(
  storage: DurableObjectStorage,
  type: ThreadEventType,
  since: number,
  limit: number,
): number {
  const row = storage.sql
    .exec(
      `SELECT COUNT(*) AS n FROM (SELECT created_at FROM thread_events WHERE type = ? ORDER BY seq DESC LIMIT ?)
       WHERE created_at >= ?`,
      type,
      limit,
      since,
    )
    .one();
  return Number(row.n);
}

/** The newest event seq the tenant's events object has acknowledged. */
export function forwardedEventSeq(storage: DurableObjectStorage): number {
  return readMetaInteger(storage, FORWARDED_KEY) ?? 0;
}

/** Events not yet acknowledged by the tenant's events object. */
export function unforwardedEventCount(storage: DurableObjectStorage): number {
  const row = storage.sql
    .exec("SELECT COUNT(*) AS n FROM thread_events WHERE seq > ?", forwardedEventSeq(storage))
    .one();
  return Number(row.n);
}

/**
 * Records the acknowledgement up to `seq`: acknowledged run events go at once, and the watermark moves only when an
 * acknowledged event stays (the others stay for the rate window), so a turn's event costs no `meta` write. Events
 * that are gone need no watermark: what is left above it is exactly what was not acknowledged. Acknowledged events
 * older than the rate window are deleted.
 */
export function markEventsForwarded(storage: DurableObjectStorage, seq: number, now: number): void {
  storage.transactionSync(() => {
    const from = forwardedEventSeq(storage);
    if (seq > from) {
      storage.sql.exec(
        "DELETE FROM thread_events WHERE seq > ? AND seq <= ? AND type IN (SELECT value FROM json_each(?))",
        from,
        seq,
        JSON.stringify(DROPPED_ON_ACK),
      );
      const kept = storage.sql
        .exec("SELECT 1 AS kept FROM thread_events WHERE seq > ? AND seq <= ? LIMIT 1", from, seq)
        .toArray();
      if (kept.length > 0) writeMeta(storage, FORWARDED_KEY, String(seq));
    }
    storage.sql.exec(
      "DELETE FROM thread_events WHERE seq <= ? AND created_at < ?",
      forwardedEventSeq(storage),
      now - FORWARDED_EVENT_KEEP_MS,
    );
  });
}
