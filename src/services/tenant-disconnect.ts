// A tenant's change that ends sockets reaches its live threads, durably: the route records a round in the tenant's
// quota object before it answers, and the object's alarm works through it a batch at a time, keeping its cursor, so
// an eviction or a restart resumes where it stopped. Only threads that can hold a socket (marked active within the
// window) are asked. Disabling the tenant closes them all (stopping if the tenant is enabled again meanwhile);
// disabling an agent or revoking a key or visitor asks each to re-check its sockets. A thread whose ask failed is
// asked again a few times within the minute (docs/security.md, "Open sockets and refreshes").
import { tenantQuota } from "../auth/tenant-quota";
import { getTenantSettings } from "../storage/d1/tenants";
import { listActiveThreads, type ThreadRecord } from "../storage/d1/thread-registry";
import {
  advanceSocketRound,
  anySocketRound,
  deleteSocketRetry,
  dropSocketRetries,
  dueSocketRetries,
  nextSocketRetryAt,
  nextSocketRound,
  type SocketRoundKind,
  writeSocketRetry,
} from "../storage/quota/socket-rounds";
import { rowAddress, threadStubFor } from "../thread/contract";

/** Threads asked at once; each ask is one RPC that wakes the thread's object. */
export const DISCONNECT_BATCH = 50;
/**
 * A thread whose ask failed is asked again after these waits: four asks in all, the last about 21 s after the first,
 * so a thread that answers any of them closes its sockets well within the 60 s the API promises.
 */
export const SOCKET_RETRY_DELAYS_MS = [1_000, 5_000, 15_000] as const;

/** What a route asks the tenant's live threads to do. */
export type SocketRoundRequest = { kind: "disconnect" } | { kind: "recheck"; agentId?: string };

type AskedThread = Pick<ThreadRecord, "tenantId" | "id" | "agentId" | "environment">;

/**
 * Records the round in the tenant's quota object (durably: it is stored before this returns) and wakes the object
 * to run its first batch at once. A failure throws: the caller answers with an error and the client repeats the
 * (idempotent) change, which records the round again.
 */
export async function startSocketRound(
  env: Env,
  tenantId: string,
  request: SocketRoundRequest,
): Promise<void> {
  await tenantQuota(env, tenantId).queueSocketRound(request);
}

/** Every recently active thread of the tenant is to close its sockets (4403). */
export function disconnectTenant(env: Env, tenantId: string): Promise<void> {
  return startSocketRound(env, tenantId, { kind: "disconnect" });
}

/**
 * Every recently active thread of the tenant (of `agentId` only, when given) is to re-check what its sockets rest
 * on: a disabled agent, a revoked `sk_` key or visitor closes them 4403 now rather than at the next recheck.
 */
export function recheckTenantSockets(
  env: Env,
  tenantId: string,
  scope: { agentId?: string } = {},
): Promise<void> {
  return startSocketRound(env, tenantId, {
    kind: "recheck",
    ...(scope.agentId !== undefined ? { agentId: scope.agentId } : {}),
  });
}

/**
 * One step of the tenant's socket rounds, run by its quota object's alarm: the retries now due, then one batch of
 * the round queued first. Returns when the object should wake next (epoch ms), or null when nothing is left.
 */
export async function workSocketRounds(
  env: Env,
  tenantId: string,
  sql: SqlStorage,
  batch: number,
): Promise<number | null> {
  let disabled: Promise<boolean> | undefined;
  // Read at most once a step: an operator who enables the tenant again stops the rest of a disconnect.
  const stillDisabled = () => {
    disabled ??= getTenantSettings(env.DB, tenantId).then((tenant) => tenant?.status === "disabled");
    return disabled;
  };

  const retries = dueSocketRetries(sql, Date.now(), batch);
  if (retries.some((r) => r.kind === "disconnect") && !(await stillDisabled())) {
    dropSocketRetries(sql, "disconnect");
  }
  await Promise.all(
    retries.map(async (retry) => {
      if (retry.kind === "disconnect" && !(await stillDisabled())) return;
      const thread = { tenantId, id: retry.threadId, agentId: retry.agentId, environment: retry.environment };
      if (await asked(env, retry.kind, thread)) deleteSocketRetry(sql, retry);
      else askAgain(sql, retry.kind, thread, retry.attempts + 1);
    }),
  );

  const round = nextSocketRound(sql);
  if (round !== null) {
    if (round.kind === "disconnect" && !(await stillDisabled())) {
      // Ended unless disabled again meanwhile (a newer generation, which starts over).
      advanceSocketRound(sql, round, null);
      dropSocketRetries(sql, "disconnect");
    } else {
      const page = await listActiveThreads(env.DB, tenantId, {
        since: round.since,
        limit: batch,
        ...(round.after !== null ? { after: round.after } : {}),
      });
      const chosen = round.agentId === null ? page : page.filter((t) => t.agentId === round.agentId);
      await Promise.all(
        chosen.map(async (thread) => {
          if (!(await asked(env, round.kind, thread))) askAgain(sql, round.kind, thread, 1);
        }),
      );
      const last = page.at(-1);
      const done = page.length < batch || last === undefined;
      advanceSocketRound(sql, round, done ? null : { activeAt: last.activeAt, id: last.id });
    }
  }
  if (anySocketRound(sql)) return Date.now();
  return nextSocketRetryAt(sql);
}

/** Asks one thread; false when the ask did not get through (or the thread could not read its standing). */
async function asked(env: Env, kind: SocketRoundKind, thread: AskedThread): Promise<boolean> {
  try {
    const stub = await threadStubFor(env, thread);
    const address = rowAddress(thread);
    const answer =
      kind === "disconnect"
        ? await stub.closeSocketsOfDisabledTenant(address)
        : await stub.recheckSockets(address);
    // Any other refusal is final: an erased thread, or one at another address, holds no socket to close.
    return answer.ok || answer.code !== "upstream_unavailable";
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", message: "socket round ask failed", error: String(error) }),
    );
    return false;
  }
}

/** Stores the thread's next ask (`attempts` made so far), or gives up after the last retry. */
function askAgain(sql: SqlStorage, kind: SocketRoundKind, thread: AskedThread, attempts: number): void {
  const delay = SOCKET_RETRY_DELAYS_MS[attempts - 1];
  const key = { kind, threadId: thread.id };
  if (delay === undefined) {
    // The thread's own standing recheck closes what this missed (SOCKET_STANDING_BOUND_MS).
    console.error(JSON.stringify({ level: "error", message: "socket round gave up on a thread", attempts }));
    deleteSocketRetry(sql, key);
    return;
  }
  writeSocketRetry(sql, {
    ...key,
    agentId: thread.agentId,
    environment: thread.environment,
    attempts,
    dueAt: Date.now() + delay,
  });
}
