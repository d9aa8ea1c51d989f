// Erasure by subject (docs/privacy.md): a job in D1 that erases a subject's threads in bounded batches, resumes where a cut-off
// call stopped, and ends with a signed receipt. Shared by `POST /v1/subject-erasures` and `DELETE /v1/me/threads`.

import { invalidateLaunchStanding } from "../auth/launch-standing";
import type { LaunchClaims } from "../auth/launch-token";
import { receiptKeys, signReceipt } from "../auth/receipt-keys";
import { subjectDigest } from "../auth/subject-digest";
import { tokenPolicy } from "../auth/token-policy";
import { visitorHash } from "../auth/visitor-revocation";
import { newId } from "../control/ids";
import { AppError, unwrap } from "../errors";
import { eventBody, MAX_EVENTS_PER_ACCEPT, tenantEvents } from "../events/tenant-events";
import { base64urlDecode, hmacSha256 } from "../shared/bytes";
import { receiptPayloadSchema } from "../shared/erasure-api";
import { toHex } from "../shared/hex";
import {
  completeJob,
  type ErasureJob,
  type ErasureScope,
  eraseThreadsRows,
  findJob,
  insertJob,
  latestJobForScope,
  recordProgress,
  recordReleasedAttachments,
  revokeVisitor,
  subjectThreadIds,
  threadAddresses,
} from "../storage/d1/erasures";
import { refuseIfHeld } from "../storage/d1/legal-holds";
import { newEventId } from "../storage/thread/thread-events";
import { rowAddress, threadStubFor } from "../thread/contract";
import { releaseErasedThreadAttachments } from "./erased-attachments";

/**
 * Threads one call erases at most. Each costs one thread-object call and one call to the tenant's attachment ledger,
 * plus a share of two D1 writes and one events call per `BATCH` threads: ~2.06 subrequests, so 300 stay well inside a
 * paid Worker's 1000 with room for authentication and the job's own rows. More threads answer 202 and the next call
 * continues (docs/privacy.md).
 */
export const THREADS_PER_CALL = 300;
/** Threads per D1 transaction, per events call and per recorded progress step. */
const BATCH = 50;
/** Thread objects erased at once. */
const OBJECT_CONCURRENCY = 10;

export type ErasureOutcome =
  | { status: "completed"; job: ErasureJob & { receipt: string; erasedAt: string } }
  | { status: "pending"; job: ErasureJob; remaining: number };

/** The job's key: an HMAC of tenant, scope and subject under DO_NAME_KEY, so no row holds the subject itself. */
export async function erasureScopeHash(
  env: Env,
  tenantId: string,
  scope: ErasureScope,
  subject: string,
): Promise<string> {
  const message = ["erasure-scope", tenantId, scope.kind, scope.agentId ?? "*", subject].join("\n");
  return toHex(await hmacSha256(env.DO_NAME_KEY, message));
}

/**
 * Erases every live thread of `subject` in `scope`, or continues the pending job that already does. A repeat after
 * completion, with no new thread of the subject since, answers the same receipt. `threadsPerCall` is for tests.
 */
export async function eraseSubject(
  env: Env,
  input: {
    tenantId: string;
    subject: string;
    scope: ErasureScope;
    /** Erased last (the launch token's own thread for `/me`): the token then still works for a repeat after 202. */
    lastThreadId?: string;
    threadsPerCall?: number;
    /**
     * Runs once no legal hold refuses the erasure, before the job lists its threads (a visitor's revocation): a
     * refused erasure changes nothing, and a thread started before it took effect is still listed and erased.
     */
    beforeErase?: () => Promise<void>;
  },
): Promise<ErasureOutcome> {
  const { tenantId, subject, scope } = input;
  // The receipt key loads before anything is erased: a misconfigured key cannot strand a half-done job.
  await receiptKeys(env);
  const scopeHash = await erasureScopeHash(env, tenantId, scope, subject);
  const digest = await subjectDigest(env, tenantId, subject);
  let job = await latestJobForScope(env.DB, tenantId, scopeHash);
  if (job === null || job.status === "completed") {
    if (input.beforeErase !== undefined) {
      await refuseIfHeld(
        env.DB,
        tenantId,
        subject,
        await subjectThreadIds(env.DB, tenantId, subject, scope.agentId),
      );
      await input.beforeErase();
    }
    const found = await subjectThreadIds(env.DB, tenantId, subject, scope.agentId);
    const threadIds = [
      ...found.filter((id) => id !== input.lastThreadId),
      ...found.filter((id) => id === input.lastThreadId),
    ];
    if (job !== null && threadIds.length === 0) return completed(job);
    // A held thread (or a held subject) refuses the whole erasure, before any job row exists or anything is erased.
    await refuseIfHeld(env.DB, tenantId, subject, threadIds);
    await insertJob(env.DB, {
      tenantId,
      id: newId("era"),
      scope,
      scopeHash,
      threadIds,
      createdAt: new Date().toISOString(),
    });
    // A concurrent first call may have inserted the one pending job first: both continue that one.
    job = await latestJobForScope(env.DB, tenantId, scopeHash);
    if (job === null) throw new Error("The erasure job vanished after being written.");
    if (job.status === "completed") return completed(job);
  }
  // A hold placed while the job was pending stops it too: what is left is checked again on every call.
  await refuseIfHeld(env.DB, tenantId, subject, job.threadIds.slice(job.done));
  if (input.beforeErase !== undefined) await input.beforeErase();
  return continueJob(env, job, digest, input.threadsPerCall ?? THREADS_PER_CALL);
}

function completed(job: ErasureJob): ErasureOutcome {
  if (job.receipt === null || job.erasedAt === null) throw new Error("A completed erasure has no receipt.");
  return { status: "completed", job: { ...job, receipt: job.receipt, erasedAt: job.erasedAt } };
}

async function continueJob(
  env: Env,
  job: ErasureJob,
  digest: string,
  threadsPerCall: number,
): Promise<ErasureOutcome> {
  const stop = Math.min(job.threadIds.length, job.done + threadsPerCall);
  let done = job.done;
  while (done < stop) {
    const batch = job.threadIds.slice(done, Math.min(stop, done + BATCH));
    await eraseBatch(env, job, batch);
    done += batch.length;
    await recordProgress(env.DB, job.tenantId, job.id, done);
  }
  if (done < job.threadIds.length) {
    return { status: "pending", job: { ...job, done }, remaining: job.threadIds.length - done };
  }
  // The attachments every call of the job recorded, read back: this call's batches are not the whole job.
  const recorded = await findJob(env.DB, job.tenantId, job.id);
  if (recorded === null) throw new Error("The erasure job vanished before its receipt.");
  if (recorded.status === "completed") return completed(recorded);
  const erasedAt = new Date().toISOString();
  const receipt = await signReceipt(env, {
    id: job.id,
    tenantId: job.tenantId,
    scope: job.scope,
    threadIds: job.threadIds,
    erasedAt,
    subjectDigest: digest,
    attachments: recorded.attachments,
  });
  await completeJob(env.DB, { tenantId: job.tenantId, id: job.id, erasedAt, receipt });
  // Another call may have completed it a moment earlier: the stored receipt is the one.
  const stored = await findJob(env.DB, job.tenantId, job.id);
  if (stored === null) throw new Error("The erasure job vanished on completion.");
  return completed(stored);
}

/**
 * One batch, each step idempotent so a cut-off batch is simply done again: the D1 rows (tombstones first, so the
 * threads' tokens are refused from here on), then each thread object, then each thread's attachments in the tenant's
 * ledger (once the thread no longer names them: objects no other live thread uses are deleted, their SHA-256s kept for
 * the receipt), then the `session.erased` events, which also make the tenant's events object drop the threads' earlier
 * event bodies.
 */
async function eraseBatch(env: Env, job: ErasureJob, threadIds: readonly string[]): Promise<void> {
  const { tenantId } = job;
  const threads = await threadAddresses(env.DB, tenantId, threadIds);
  await eraseThreadsRows(env, tenantId, threadIds, new Date().toISOString());
  const released: string[] = [];
  let failure: unknown = null;
  for (let start = 0; start < threads.length && failure === null; start += OBJECT_CONCURRENCY) {
    const outcomes = await Promise.allSettled(
      threads.slice(start, start + OBJECT_CONCURRENCY).map(async (thread) => {
        const row = { tenantId, ...thread };
        const stub = await threadStubFor(env, row);
        unwrap(await stub.eraseThread(rowAddress(row)));
        return releaseErasedThreadAttachments(env, tenantId, thread.id);
      }),
    );
    for (const outcome of outcomes) {
      if (outcome.status === "fulfilled") released.push(...outcome.value);
      else failure ??= outcome.reason;
    }
  }
  // Recorded even when a thread failed: the repeat of this batch finds those objects already gone and would not
  // name them again (docs/privacy.md#attachments).
  await recordReleasedAttachments(env.DB, tenantId, job.id, released);
  if (failure !== null) throw unavailable(failure);
  const now = Date.now();
  const events = threads.map((thread) =>
    eventBody({
      id: newEventId(),
      type: "session.erased",
      createdAt: now,
      tenantId,
      data: { threadId: thread.id, agentId: thread.agentId, environment: thread.environment },
    }),
  );
  for (let start = 0; start < events.length; start += MAX_EVENTS_PER_ACCEPT) {
    try {
      unwrap(
        await tenantEvents(env, tenantId).accept(
          tenantId,
          events.slice(start, start + MAX_EVENTS_PER_ACCEPT),
        ),
      );
    } catch (cause) {
      throw unavailable(cause);
    }
  }
}

/**
 * `DELETE /v1/me/threads`: every thread of the launch token's subject with its agent, the token's own thread last. A
 * visitor is revoked too, once no hold refuses the erasure (a refused one changes nothing) and before the job lists
 * the threads: once the visitor asked, no launch with its token starts a thread, even part way through.
 */
export function eraseOwnThreads(env: Env, claims: LaunchClaims): Promise<ErasureOutcome> {
  const revoke = async () => {
    const now = new Date();
    const expiresAt = new Date(now.getTime() + tokenPolicy(env).visitorTtlSeconds * 1000);
    await revokeVisitor(
      env.DB,
      claims.tenantId,
      await visitorHash(env, claims.tenantId, claims.sub),
      now.toISOString(),
      expiresAt.toISOString(),
    );
    invalidateLaunchStanding(claims.tenantId);
  };
  return eraseSubject(env, {
    tenantId: claims.tenantId,
    subject: claims.sub,
    scope: { kind: "me", agentId: claims.agentId },
    lastThreadId: claims.threadId,
    ...(claims.subjectKind === "visitor" ? { beforeErase: revoke } : {}),
  });
}

function unavailable(cause: unknown): AppError {
  if (cause instanceof AppError && cause.code !== "internal") return cause;
  return new AppError(
    "upstream_unavailable",
    "The erasure stopped part way; repeat the same request to continue it.",
    { cause },
  );
}

/** The `subjectDigest` a stored receipt carries (its own signed payload), or undefined for one issued before it. */
export function receiptSubjectDigest(receipt: string): string | undefined {
  const bytes = base64urlDecode(receipt.split(".")[1] ?? "");
  if (bytes === null) return undefined;
  try {
    const parsed = receiptPayloadSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    return parsed.success ? parsed.data.subjectDigest : undefined;
  } catch {
    return undefined;
  }
}

/** The answer to an erasure call: 200 with the receipt once done, 202 while threads remain. */
export function erasureAnswer(outcome: ErasureOutcome) {
  const { job } = outcome;
  if (outcome.status === "pending") {
    return {
      status: 202 as const,
      body: { id: job.id, status: "pending" as const, scope: job.scope, remaining: outcome.remaining },
    };
  }
  const digest = receiptSubjectDigest(outcome.job.receipt);
  return {
    status: 200 as const,
    body: {
      id: job.id,
      status: "completed" as const,
      receipt: outcome.job.receipt,
      scope: job.scope,
      threadIds: job.threadIds,
      erasedAt: outcome.job.erasedAt,
      ...(digest !== undefined ? { subjectDigest: digest } : {}),
      attachments: job.attachments,
    },
  };
}
