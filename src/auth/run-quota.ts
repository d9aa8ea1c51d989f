// A run's slot in its tenant's quotas as a thread object holds it: taken before a turn is stored, renewed while the
// run lasts, and given back with the run's tokens when it ends, however it ends.
import { fail, ok, type Result } from "../errors";
import { RUN_LEASE_MS, type RunGrant, tenantQuota } from "./tenant-quota";

/** Renewed at a third of the lease, so two renewals can fail before the slot lapses. */
export const RUN_LEASE_RENEW_MS = RUN_LEASE_MS / 3;
/**
 * After the quota object says the tenant has no run quota, the thread's next runs within this time skip asking it
 * (their tokens are still counted when they end): a quota set meanwhile applies to this thread that much later.
 */
export const UNLIMITED_RECHECK_MS = 30_000;

/**
 * Tokens of runs that hold no lease (the tenant has no run quota) are counted to the quota object at most once per
 * this window per thread: the first run after a quiet window at once, later ones with the thread's next question to
 * the quota, its next run past the window, or its next start (docs/operations.md, "When tokens are counted"). No
 * timer: one would keep the object in memory, billed, for the window. The same as UNLIMITED_RECHECK_MS, the time a
 * quota set meanwhile already takes to reach the thread.
 */
export const TOKEN_COUNT_WINDOW_MS = UNLIMITED_RECHECK_MS;

/**
 * How a thread's held-back tokens survive its death without a write per run: when it starts holding tokens back it
 * stores the time of its last count (one row), and clears it once everything held is counted. A thread that starts
 * with the mark set counts every token its usage rows recorded since then (src/storage/thread/usage-store.ts).
 */
export interface TokenLedger {
  /** The stored mark, or null when nothing is held back. */
  heldSince(): number | null;
  hold(since: number): void;
  clear(): void;
  /** Tokens recorded by the thread's runs at or after `since`. */
  tokensSince(since: number): number;
}

export interface RunSlot {
  /** Frees the slot and counts `tokens`; safe to call more than once (only the first counts). */
  release(tokens: number): Promise<void>;
}

export interface RunQuota {
  /** A slot for one run of this thread, or the refusal to answer with (`quota_exceeded`, `forbidden`). */
  acquire(): Promise<Result<RunSlot>>;
}

export interface RunQuotaTiming {
  now(): number;
  /** Runs `fn` after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
}

const REAL_TIMING: RunQuotaTiming = {
  now: () => Date.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

/**
 * The run quota of one thread: its tenant's `TenantQuota` object, asked per run (see UNLIMITED_RECHECK_MS). With a
 * `ledger`, tokens of runs without a lease are counted once per TOKEN_COUNT_WINDOW_MS (see TokenLedger).
 */
export function tenantRunQuota(
  env: Env,
  thread: { tenantId: string; threadId: string },
  timing: RunQuotaTiming = REAL_TIMING,
  ledger?: TokenLedger,
): RunQuota {
  // A fresh stub per call: a renewal or release may run in another request's context than the grant.
  const quota = () => tenantQuota(env, thread.tenantId);
  let unlimitedUntil = 0;
  /** When tokens were last counted without a lease; held-back tokens wait for the window after it to end. */
  let countedAt = Number.NEGATIVE_INFINITY;
  /** Tokens held back and tokens being counted right now; whether the ledger's mark is set. */
  let held = 0;
  let inFlight = 0;
  let marked = false;

  /** The mark follows what is owed: set (at the last count) when tokens start waiting, cleared once none do. */
  const store = () => {
    if (ledger === undefined) return;
    const owed = held + inFlight > 0;
    if (owed && !marked) ledger.hold(countedAt);
    else if (!owed && marked) ledger.clear();
    marked = owed;
  };
  /** Counts every held-back token in one call; on failure they stay held (and marked) for the next chance. */
  const flush = async (): Promise<void> => {
    if (held === 0) return;
    const sending = held;
    const previous = countedAt;
    held = 0;
    inFlight += sending;
    countedAt = timing.now();
    try {
      await quota().endRun(null, sending);
      inFlight -= sending;
    } catch (error) {
      inFlight -= sending;
      held += sending;
      // Still owed from before: the mark, if it is set now, must reach back to their usage.
      countedAt = previous;
      console.error(
        JSON.stringify({ level: "error", message: "token count deferred", error: String(error) }),
      );
    }
    store();
  };

  // A thread that died holding tokens back counts them as it starts again.
  const since = ledger?.heldSince() ?? null;
  if (ledger !== undefined && since !== null) {
    marked = true;
    held = ledger.tokensSince(since);
    countedAt = since;
    if (held > 0) void flush();
    else store();
  }

  /** A run without a lease ended: counted now if the window allows, else held back (and marked). */
  const countLeaseless = async (tokens: number): Promise<void> => {
    if (ledger === undefined) {
      await quota().endRun(null, tokens);
      return;
    }
    held += Math.max(0, tokens);
    if (timing.now() - countedAt >= TOKEN_COUNT_WINDOW_MS) await flush();
    else if (held > 0) store();
  };

  /**
   * Gives the slot back once; a failed call is retried once, then the lease lapses and the tokens go uncounted (a
   * run without a lease: see countLeaseless).
   */
  const releaser = (leaseId: string | null, stopRenewing: () => void) => {
    let released = false;
    return async (tokens: number) => {
      if (released) return;
      released = true;
      stopRenewing();
      const send = () => (leaseId === null ? countLeaseless(tokens) : quota().endRun(leaseId, tokens));
      try {
        await send();
      } catch {
        await send().catch((error: unknown) => {
          console.error(
            JSON.stringify({ level: "error", message: "run quota release failed", error: String(error) }),
          );
        });
      }
    };
  };

  return {
    async acquire() {
      if (timing.now() < unlimitedUntil) return ok({ release: releaser(null, () => {}) });
      // The held-back tokens ride on the question the thread asks anyway.
      const sending = ledger === undefined ? 0 : held;
      const askedAt = timing.now();
      held -= sending;
      inFlight += sending;
      let grant: RunGrant;
      try {
        grant = await quota().startRun(thread.threadId, sending);
      } catch (error) {
        held += sending;
        throw error;
      } finally {
        inFlight -= sending;
      }
      if (sending > 0) {
        countedAt = askedAt;
        store();
      }
      if (!grant.ok) {
        unlimitedUntil = 0;
        const refused = fail(grant.code, grant.message);
        return grant.retryAfter === undefined ? refused : { ...refused, retryAfter: grant.retryAfter };
      }
      unlimitedUntil = grant.unlimited ? timing.now() + UNLIMITED_RECHECK_MS : 0;
      const leaseId = grant.leaseId;
      if (leaseId === null) return ok({ release: releaser(null, () => {}) });
      let stopped = false;
      let cancel = () => {};
      const renew = () => {
        cancel = timing.after(RUN_LEASE_RENEW_MS, () => {
          if (stopped) return;
          void quota()
            .renewRun(leaseId)
            .then(
              (alive) => {
                if (alive && !stopped) renew();
              },
              () => {
                if (!stopped) renew();
              },
            );
        });
      };
      renew();
      return ok({
        release: releaser(leaseId, () => {
          stopped = true;
          cancel();
        }),
      });
    },
  };
}
