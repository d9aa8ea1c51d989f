// How a thread with open sockets stays findable when its tenant is disabled: the thread marks `threads.active_at`
// when a socket connects and again while sockets stay open; a tenant's disconnect reaches the threads marked within
// the window (docs/decisions.md, "Disabling a tenant").
import type { TenantStatus } from "../shared/api";
import { markThreadActive } from "../storage/d1/thread-registry";

/** A thread with open sockets renews its mark at least this often (checked on each idle sweep). */
export const SOCKET_ACTIVITY_REFRESH_MS = 300_000;
/**
 * A disconnect reaches threads marked within this window: twice the refresh, so a mark renewed late (a sweep's
 * period, a failed D1 write retried at the next sweep) still falls inside it.
 */
export const SOCKET_ACTIVITY_WINDOW_MS = 2 * SOCKET_ACTIVITY_REFRESH_MS;

/**
 * Marks the thread active (unless its mark is newer than half the refresh) and reads its tenant's status after the
 * mark, in one D1 batch. Null when the tenant no longer exists.
 */
export function markSocketActivity(
  db: D1Database,
  thread: { tenantId: string; threadId: string },
  now: number,
): Promise<TenantStatus | null> {
  return markThreadActive(
    db,
    thread,
    new Date(now).toISOString(),
    new Date(now - SOCKET_ACTIVITY_REFRESH_MS / 2).toISOString(),
  );
}

/** The oldest mark a disconnect at `now` still reaches. */
export function activitySince(now: number): string {
  return new Date(now - SOCKET_ACTIVITY_WINDOW_MS).toISOString();
}
