// The tenant events object's SQLite (src/events/tenant-events.ts): accepted events, the endpoint copy, deliveries.
//
// Tables (docs/storage.md, "Tenant events object"): `events` keeps the body of each accepted event some endpoint
// subscribes to, once (deduplicated by its id, so a thread that re-sends after a lost acknowledgement changes nothing); `deliveries` is one row per
// (event, endpoint) — the delivery log and the retry queue at once; `endpoints` is the copy of the tenant's D1
// endpoints that fan-out and delivery use, so D1 being down delays no delivery.
import { z } from "zod";
import { base32 } from "../../control/ids";
import {
  DELIVERY_STATUSES,
  type DeliveryStatus,
  EVENT_TYPES,
  type EventType,
} from "../../shared/webhooks-api";
import { parseJsonColumn } from "../json-column";

export function createEventQueue(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    type TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    body TEXT
  )`);
  sql.exec(`CREATE TABLE IF NOT EXISTS endpoints (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    events_json TEXT NOT NULL,
    secret_ciphertext TEXT NOT NULL,
    secret_iv TEXT NOT NULL,
    secret_key_id TEXT NOT NULL
  )`);
  sql.exec(`CREATE TABLE IF NOT EXISTS deliveries (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    endpoint_id TEXT NOT NULL,
    event_seq INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    lane TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending','succeeded','failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_status_code INTEGER,
    next_attempt_at INTEGER,
    created_at INTEGER NOT NULL
  )`);
  sql.exec("CREATE INDEX IF NOT EXISTS deliveries_log ON deliveries (endpoint_id, seq)");
  sql.exec(
    "CREATE INDEX IF NOT EXISTS deliveries_pending ON deliveries (endpoint_id, lane, seq) WHERE status = 'pending'",
  );
  // Redeliveries of one event to one endpoint, counted for their hourly limit (created on every start: idempotent).
  sql.exec("CREATE INDEX IF NOT EXISTS deliveries_by_event ON deliveries (endpoint_id, event_seq, seq)");
  sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
}

export interface QueuedEvent {
  id: string;
  type: EventType;
  threadId: string;
  /** Epoch milliseconds. */
  createdAt: number;
  /** The exact JSON text every delivery of it sends (and signs). */
  body: string;
}

export interface EndpointCopy {
  id: string;
  url: string;
  events: EventType[];
  sealed: { ciphertext: string; iv: string; keyId: string };
}

export interface DeliveryRow {
  seq: number;
  id: string;
  endpointId: string;
  eventSeq: number;
  eventId: string;
  eventType: EventType;
  lane: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  nextAttemptAt: number | null;
  createdAt: number;
}

const deliveryRow = z
  .object({
    seq: z.number().int(),
    id: z.string(),
    endpoint_id: z.string(),
    event_seq: z.number().int(),
    event_id: z.string(),
    event_type: z.enum(EVENT_TYPES),
    lane: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    last_status_code: z.number().int().nullable(),
    next_attempt_at: z.number().nullable(),
    created_at: z.number(),
  })
  .transform(
    (r): DeliveryRow => ({
      seq: r.seq,
      id: r.id,
      endpointId: r.endpoint_id,
      eventSeq: r.event_seq,
      eventId: r.event_id,
      eventType: r.event_type,
      lane: r.lane,
      status: r.status,
      attempts: r.attempts,
      lastStatusCode: r.last_status_code,
      nextAttemptAt: r.next_attempt_at,
      createdAt: r.created_at,
    }),
  );

const endpointRow = z.object({
  id: z.string(),
  url: z.string(),
  events_json: z.string(),
  secret_ciphertext: z.string(),
  secret_iv: z.string(),
  secret_key_id: z.string(),
});

const newDeliveryId = (): string => `dlv_${base32(crypto.getRandomValues(new Uint8Array(16)))}`;

export function readEndpoints(sql: SqlStorage): EndpointCopy[] {
  return sql
    .exec(
      "SELECT id, url, events_json, secret_ciphertext, secret_iv, secret_key_id FROM endpoints ORDER BY id",
    )
    .toArray()
    .map((raw) => {
      const r = endpointRow.parse(raw);
      return {
        id: r.id,
        url: r.url,
        events: z.array(z.enum(EVENT_TYPES)).parse(parseJsonColumn(r.events_json)),
        sealed: { ciphertext: r.secret_ciphertext, iv: r.secret_iv, keyId: r.secret_key_id },
      };
    });
}

/** Replaces the endpoint copy; the pending deliveries of an endpoint that is gone are dropped with it. */
export function replaceEndpoints(sql: SqlStorage, endpoints: readonly EndpointCopy[]): void {
  sql.exec("DELETE FROM endpoints");
  for (const e of endpoints) {
    sql.exec(
      "INSERT INTO endpoints (id, url, events_json, secret_ciphertext, secret_iv, secret_key_id) VALUES (?, ?, ?, ?, ?, ?)",
      e.id,
      e.url,
      JSON.stringify(e.events),
      e.sealed.ciphertext,
      e.sealed.iv,
      e.sealed.keyId,
    );
  }
  sql.exec("DELETE FROM deliveries WHERE endpoint_id NOT IN (SELECT id FROM endpoints)");
}

/**
 * Stores an event and one pending delivery per endpoint subscribed to its type, due at `now`. Returns false for an
 * event already stored (a re-sent batch) or one no endpoint subscribes to: nothing is stored.
 */
export function enqueueEvent(sql: SqlStorage, event: QueuedEvent, now: number): boolean {
  const subscribed = readEndpoints(sql).filter((endpoint) => endpoint.events.includes(event.type));
  if (subscribed.length === 0) return false;
  const inserted = sql
    .exec<{ seq: number }>(
      `INSERT INTO events (id, type, thread_id, created_at, body) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING RETURNING seq`,
      event.id,
      event.type,
      event.threadId,
      event.createdAt,
      event.body,
    )
    .toArray();
  const seq = inserted[0]?.seq;
  if (seq === undefined) return false;
  for (const endpoint of subscribed) insertDelivery(sql, endpoint.id, { ...event, seq }, now);
  return true;
}

function insertDelivery(
  sql: SqlStorage,
  endpointId: string,
  event: { seq: number; id: string; type: EventType; threadId: string },
  now: number,
): string {
  const id = newDeliveryId();
  sql.exec(
    `INSERT INTO deliveries (id, endpoint_id, event_seq, event_id, event_type, lane, status, next_attempt_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
    id,
    endpointId,
    event.seq,
    event.id,
    event.type,
    event.threadId,
    now,
    now,
  );
  return id;
}

const DELIVERY_COLUMNS =
  "d.seq, d.id, d.endpoint_id, d.event_seq, d.event_id, d.event_type, d.lane, d.status, d.attempts, d.last_status_code, d.next_attempt_at, d.created_at";

// A pending delivery is a lane's head when no older pending delivery of the same endpoint and thread waits: events
// reach an endpoint in order per thread.
const LANE_HEAD = `d.status = 'pending' AND NOT EXISTS (
  SELECT 1 FROM deliveries e WHERE e.endpoint_id = d.endpoint_id AND e.lane = d.lane AND e.status = 'pending'
    AND e.seq < d.seq)`;

/** Lane heads due at `now`, oldest first, each with its event's body (null once erased). */
export function dueDeliveries(
  sql: SqlStorage,
  now: number,
  limit: number,
): { delivery: DeliveryRow; body: string | null }[] {
  return sql
    .exec(
      `SELECT ${DELIVERY_COLUMNS}, v.body FROM deliveries d JOIN events v ON v.seq = d.event_seq
       WHERE ${LANE_HEAD} AND d.next_attempt_at <= ? ORDER BY d.seq LIMIT ?`,
      now,
      limit,
    )
    .toArray()
    .map((raw) => ({
      delivery: deliveryRow.parse(raw),
      body: z.string().nullable().parse(raw.body),
    }));
}

/** When the next lane head is due, or null when nothing waits. */
export function nextDueAt(sql: SqlStorage): number | null {
  const row = sql.exec(`SELECT MIN(d.next_attempt_at) AS at FROM deliveries d WHERE ${LANE_HEAD}`).one();
  return typeof row.at === "number" ? row.at : null;
}

/** Settles one attempt: delivered, given up, or pending again at `nextAttemptAt`. */
export function recordAttempt(
  sql: SqlStorage,
  id: string,
  outcome: { status: DeliveryStatus; statusCode: number | null; nextAttemptAt: number | null },
): void {
  sql.exec(
    `UPDATE deliveries SET status = ?, attempts = attempts + 1, last_status_code = ?, next_attempt_at = ?
     WHERE id = ?`,
    outcome.status,
    outcome.statusCode,
    outcome.nextAttemptAt,
    id,
  );
}

/** One endpoint's delivery log, newest first; `before` is the seq of the last row of the previous page. */
export function deliveryLog(
  sql: SqlStorage,
  endpointId: string,
  page: { limit: number; before?: number },
): { items: DeliveryRow[]; hasMore: boolean } {
  const rows = sql
    .exec(
      `SELECT ${DELIVERY_COLUMNS} FROM deliveries d WHERE d.endpoint_id = ? AND d.seq < ? ORDER BY d.seq DESC LIMIT ?`,
      endpointId,
      page.before ?? Number.MAX_SAFE_INTEGER,
      page.limit + 1,
    )
    .toArray()
    .map((raw) => deliveryRow.parse(raw));
  return { items: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/** How many redeliveries one event may have to one endpoint within a sliding window. */
export interface RedeliveryLimit {
  max: number;
  windowMs: number;
}

export type Redelivered =
  | { ok: true; id: string }
  | { ok: false; reason: "not_found" }
  /** `retryAt`: epoch ms when the oldest redelivery in the window leaves it. */
  | { ok: false; reason: "limited"; retryAt: number };

const createdAtRow = z.object({ created_at: z.number().int() });

/**
 * A new pending delivery of the same event to the same endpoint (same `webhook-id`), due at once; `not_found` when
 * the delivery is unknown or its event's body is no longer kept, `limited` when that event already had `limit.max`
 * redeliveries to that endpoint in the last `limit.windowMs` (every delivery of it after the first counts, so
 * redelivering a redelivery spends the same allowance).
 */
export function redeliver(
  sql: SqlStorage,
  endpointId: string,
  deliveryId: string,
  now: number,
  limit: RedeliveryLimit,
): Redelivered {
  const rows = sql
    .exec(
      `SELECT v.seq, v.id, v.type, v.thread_id FROM deliveries d JOIN events v ON v.seq = d.event_seq
       WHERE d.endpoint_id = ? AND d.id = ? AND v.body IS NOT NULL`,
      endpointId,
      deliveryId,
    )
    .toArray();
  const raw = rows[0];
  if (raw === undefined) return { ok: false, reason: "not_found" };
  const event = z
    .object({ seq: z.number().int(), id: z.string(), type: z.enum(EVENT_TYPES), thread_id: z.string() })
    .parse(raw);
  const recent = sql
    .exec(
      `SELECT created_at FROM deliveries
       WHERE endpoint_id = ?1 AND event_seq = ?2 AND created_at > ?3
         AND seq > (SELECT MIN(seq) FROM deliveries WHERE endpoint_id = ?1 AND event_seq = ?2)
       ORDER BY created_at`,
      endpointId,
      event.seq,
      now - limit.windowMs,
    )
    .toArray()
    .map((row) => createdAtRow.parse(row).created_at);
  if (recent.length >= limit.max) {
    const leaving = recent[recent.length - limit.max] ?? now;
    return { ok: false, reason: "limited", retryAt: leaving + limit.windowMs };
  }
  return { ok: true, id: insertDelivery(sql, endpointId, { ...event, threadId: event.thread_id }, now) };
}

/**
 * Erasure (docs/privacy.md): the thread's earlier event bodies go, and their pending deliveries fail; the delivery log keeps
 * only ids and types. `keepEventId` is the `session.erased` event itself.
 */
export function eraseThreadEvents(sql: SqlStorage, threadId: string, keepEventId: string): void {
  sql.exec(
    `UPDATE deliveries SET status = 'failed', next_attempt_at = NULL
     WHERE status = 'pending' AND event_id != ? AND event_seq IN (SELECT seq FROM events WHERE thread_id = ?)`,
    keepEventId,
    threadId,
  );
  sql.exec("UPDATE events SET body = NULL WHERE thread_id = ? AND id != ?", threadId, keepEventId);
}

/** Retention: events and deliveries older than `before` that no longer wait for anything. */
export function pruneEventQueue(sql: SqlStorage, before: number): void {
  sql.exec("DELETE FROM deliveries WHERE status != 'pending' AND created_at < ?", before);
  sql.exec(
    "DELETE FROM events WHERE created_at < ? AND seq NOT IN (SELECT event_seq FROM deliveries WHERE status = 'pending')",
    before,
  );
}

export function readQueueMeta(sql: SqlStorage, key: string): string | null {
  const row = sql.exec("SELECT value FROM meta WHERE key = ?", key).toArray()[0];
  return row === undefined ? null : String(row.value);
}

export function writeQueueMeta(sql: SqlStorage, key: string, value: string): void {
  sql.exec(
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    key,
    value,
  );
}
