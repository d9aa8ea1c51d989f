// A run's slot in its tenant's quotas as a thread object holds it: taken before a turn is stored, renewed while the
// run lasts, and given back with the run's tokens when it ends, however it ends.
import { fail, ok, type Result } from "../errors";
import { RUN_LEASE_MS, tenantQuota } from "./tenant-quota";

/** Renewed at a third of the lease, so two renewals can fail before the slot lapses. */
export const RUN_LEASE_RENEW_MS = RUN_LEASE_MS / 3;

export interface RunSlot {
  /** Frees the slot and counts `tokens`; safe to call more than once (only the first counts). */
  release(tokens: number): Promise<void>;
}

export interface RunQuota {
  /** A slot for one run of this thread, or the refusal to answer with (`quota_exceeded`, `forbidden`). */
  acquire(): Promise<Result<RunSlot>>;
}

type After = (ms: number, fn: () => void) => () => void;

const realAfter: After = (ms, fn) => {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
};

/** The quota of `tenantId` for runs of `threadId`; `after` schedules lease renewals. */
export function tenantRunQuota(
  env: Env,
  thread: { tenantId: string; threadId: string },
  after: After = realAfter,
): RunQuota {
  return {
    async acquire() {
      // A fresh stub per call: a renewal or release may run in another request's context than the grant.
      const quota = () => tenantQuota(env, thread.tenantId);
      const grant = await quota().startRun(thread.threadId);
      if (!grant.ok) {
        const refused = fail(grant.code, grant.message);
        return grant.retryAfter === undefined ? refused : { ...refused, retryAfter: grant.retryAfter };
      }
      let released = false;
      let cancel = () => {};
      const renew = () => {
        cancel = after(RUN_LEASE_RENEW_MS, () => {
          if (released) return;
          void quota()
            .renewRun(grant.leaseId)
            .then(
              (alive) => {
                if (alive && !released) renew();
              },
              () => {
                if (!released) renew();
              },
            );
        });
      };
      renew();
      return ok({
        async release(tokens: number) {
          if (released) return;
          released = true;
          cancel();
          // A failed call is retried once; after that the lease lapses on its own and the tokens go uncounted.
          try {
            await quota().endRun(grant.leaseId, tokens);
          } catch {
            await quota()
              .endRun(grant.leaseId, tokens)
              .catch((error: unknown) => {
                console.error(
                  JSON.stringify({
                    level: "error",
                    message: "run quota release failed",
                    error: String(error),
                  }),
                );
              });
          }
        },
      });
    },
  };
}
