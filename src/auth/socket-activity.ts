// How a thread with open sockets stays findable when its tenant is disabled: the thread marks `threads.active_at`
// when a socket connects and again while sockets stay open; a tenant's disconnect reaches the threads marked within
// the window (docs/decisions.md, "Disabling a tenant").

/** A thread with open sockets renews its mark at least this often (its socket alarm wakes for it, src/thread/object/upkeep.ts). */
export const SOCKET_ACTIVITY_REFRESH_MS = 300_000;
/**
 * A disconnect reaches threads marked within this window: twice the refresh, so a mark renewed late (a sweep's
 * period, a failed D1 write retried at the next sweep) still falls inside it.
 */
export const SOCKET_ACTIVITY_WINDOW_MS = 2 * SOCKET_ACTIVITY_REFRESH_MS;

/**
 * The mark written at `now`: skipped in D1 when the thread's mark is newer than half the refresh (the UPDATE's
 * `staleBefore`). Written in the same batch as the thread's standing read (src/storage/d1/socket-standing.ts).
 */
export function activityMark(now: number): { at: string; staleBefore: string } {
  return {
    at: new Date(now).toISOString(),
    staleBefore: new Date(now - SOCKET_ACTIVITY_REFRESH_MS / 2).toISOString(),
  };
}

/**
 * How often a thread with open sockets re-reads what they rest on (its tenant or agent disabled, the `sk_` key that
 * minted them revoked, its visitor revoked) when nothing asked it to: with the activity mark, in the same D1 batch.
 * A change made through the API reaches the sockets within 60 s, durably (a round the tenant's quota object records
 * and works through, src/services/tenant-disconnect.ts); this is the backstop for one written outside the API.
 */
export const SOCKET_STANDING_RECHECK_MS = SOCKET_ACTIVITY_REFRESH_MS;

/**
 * How long an open socket may outlive what its access rests on when no fan-out told its thread: the recheck period
 * plus a retried D1 read (docs/security.md, "Open sockets and refreshes"). Every refresh reads it first.
 */
export const SOCKET_STANDING_BOUND_MS = SOCKET_STANDING_RECHECK_MS + 60_000;

/** The oldest mark a disconnect at `now` still reaches. */
export function activitySince(now: number): string {
  return new Date(now - SOCKET_ACTIVITY_WINDOW_MS).toISOString();
}
