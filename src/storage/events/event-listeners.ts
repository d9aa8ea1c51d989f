// The tenant events object's list of thread objects that hold a copy of its subscription set, so an endpoint change
// reaches them before the API answers (docs/decisions.md, "Events handed over only when someone listens").
import { z } from "zod";

export function createEventListeners(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS listeners (
    thread_id TEXT PRIMARY KEY,
    address_json TEXT NOT NULL,
    until INTEGER NOT NULL
  ) WITHOUT ROWID`);
}

/**
 * Keeps `threadId` on the list until at least `until` (its address is how the object is reached). A listener whose
 * entry lasts past `renewAfter` already is left as it is: a busy thread writes no row per hand-over.
 */
export function keepListener(
  sql: SqlStorage,
  listener: { threadId: string; address: unknown },
  until: number,
  renewAfter: number,
): void {
  sql.exec(
    `INSERT INTO listeners (thread_id, address_json, until) VALUES (?, ?, ?)
     ON CONFLICT (thread_id) DO UPDATE SET address_json = excluded.address_json, until = excluded.until
     WHERE listeners.until < ?`,
    listener.threadId,
    JSON.stringify(listener.address),
    until,
    renewAfter,
  );
}

const listenerRow = z.object({ thread_id: z.string(), address_json: z.string() });

/** The listeners whose entry lasts past `now` (the expired ones are deleted). */
export function liveListeners(sql: SqlStorage, now: number): { threadId: string; address: unknown }[] {
  sql.exec("DELETE FROM listeners WHERE until <= ?", now);
  return sql
    .exec("SELECT thread_id, address_json FROM listeners")
    .toArray()
    .map((raw) => {
      const row = listenerRow.parse(raw);
      return { threadId: row.thread_id, address: JSON.parse(row.address_json) as unknown };
    });
}
