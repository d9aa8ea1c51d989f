// A run's slot in its tenant's quotas as a thread object holds it: taken before a turn is stored, renewed while the
// run lasts, and given back with the run's tokens when it ends, however it ends.
import { fail, ok, type Result } from "../errors";
import { RUN_LEASE_MS, tenantQuota } from "./tenant-quota";

/** Renewed at a third of the lease, so two renewals can fail before the slot lapses. */
export const RUN_LEASE_RENEW_MS = RUN_LEASE_MS / 3;
/**
 * After the quota object says the tenant has no run quota, the thread's next runs within this time skip asking it
 * (their tokens are still counted when they end): a quota set meanwhile applies to this thread that much later.
 */
export const UNLIMITED_RECHECK_MS = 30_000;

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

/** The run quota of one thread: its tenant's `TenantQuota` object, asked per run (see UNLIMITED_RECHECK_MS). */
export function tenantRunQuota(
  env: Env,
  thread: { tenantId: string; threadId: string },
  timing: RunQuotaTiming = REAL_TIMING,
): RunQuota {
  // A fresh stub per call: a renewal or release may run in another request's context than the grant.
  const quota = () => tenantQuota(env, thread.tenantId);
  let unlimitedUntil = 0;

  /** Gives the slot back once; a failed call is retried once, then the lease lapses and the tokens go uncounted. */
  const releaser = (leaseId: string | null, stopRenewing: () => void) => {
    let released = false;
    return async (tokens: number) => {
      if (released) return;
      released = true;
      stopRenewing();
      try {
        await quota().endRun(leaseId, tokens);
      } catch {
        await quota()
          .endRun(leaseId, tokens)
          .catch((error: unknown) => {
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
      const grant = await quota().startRun(thread.threadId);
      if (!grant.ok) {
        unlimitedUntil = 0;
        const refused = fail(grant.code, grant.message);
        return grant.retryAfter === undefined ? refused : { ...refused, retryAfter: grant.retryAfter };
      }
      unlimitedUntil = grant.unlimited ? timing.now() + UNLIMITED_RECHECK_MS : 0;
      let stopped = false;
      let cancel = () => {};
      const renew = () => {
        cancel = timing.after(RUN_LEASE_RENEW_MS, () => {
          if (stopped) return;
          void quota()
            .renewRun(grant.leaseId)
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
        release: releaser(grant.leaseId, () => {
          stopped = true;
          cancel();
        }),
      });
    },
  };
}
