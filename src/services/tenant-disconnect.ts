// A tenant's change that ends sockets reaches its live threads: only threads that can hold one (marked active within
// the window), a batch at a time, off the request path. Disabling the tenant closes them all (stopping if the tenant
// is enabled again meanwhile); disabling an agent or revoking a key or visitor asks each to re-check its sockets.
import { activitySince } from "../auth/socket-activity";
import type { RpcResult } from "../errors";
import { getTenantSettings } from "../storage/d1/tenants";
import { listActiveThreads } from "../storage/d1/thread-registry";
import { rowAddress, type ThreadAddress, threadStubFor } from "../thread/contract";

/** Threads asked at once; each ask is one RPC that wakes the thread's object. */
export const DISCONNECT_BATCH = 50;

type ThreadStub = Awaited<ReturnType<typeof threadStubFor>>;

interface Round {
  /** Only this agent's threads (all of the tenant's when absent). */
  agentId?: string;
  /** Read before each batch: false stops the round. */
  goOn: () => Promise<boolean>;
  ask: (stub: ThreadStub, address: ThreadAddress) => Promise<RpcResult<unknown>>;
}

/** Asks every recently active thread of the tenant (of one agent) in batches; returns how many were asked. */
async function askActiveThreads(env: Env, tenantId: string, now: number, round: Round): Promise<number> {
  const since = activitySince(now);
  let after: { activeAt: string; id: string } | undefined;
  let asked = 0;
  for (;;) {
    if (!(await round.goOn())) return asked;
    const page = await listActiveThreads(env.DB, tenantId, {
      since,
      limit: DISCONNECT_BATCH,
      ...(after !== undefined ? { after } : {}),
    });
    const chosen = round.agentId === undefined ? page : page.filter((t) => t.agentId === round.agentId);
    await Promise.all(
      chosen.map(async (thread) => {
        try {
          const answered = await round.ask(await threadStubFor(env, thread), rowAddress(thread));
          if (!answered.ok) throw new Error(answered.code);
        } catch (error) {
          // The thread's own check on its next idle sweep closes what this missed.
          console.error(
            JSON.stringify({ level: "error", message: "socket disconnect failed", error: String(error) }),
          );
        }
      }),
    );
    asked += chosen.length;
    const last = page.at(-1);
    if (page.length < DISCONNECT_BATCH || last === undefined) return asked;
    after = { activeAt: last.activeAt, id: last.id };
  }
}

/** Asks every recently active thread of the tenant to close its sockets (4403); returns how many were asked. */
export function disconnectTenant(env: Env, tenantId: string, now = Date.now()): Promise<number> {
  return askActiveThreads(env, tenantId, now, {
    // Re-read per batch: an operator who enables the tenant again stops the rest of the round.
    goOn: async () => (await getTenantSettings(env.DB, tenantId))?.status === "disabled",
    ask: (stub, address) => stub.closeSocketsOfDisabledTenant(address),
  });
}

/**
 * Asks every recently active thread of the tenant (of `agentId` only, when given) to re-check what its sockets rest
 * on: a disabled agent, a revoked `sk_` key or visitor closes them 4403 now rather than at the next idle sweep.
 */
export function recheckTenantSockets(
  env: Env,
  tenantId: string,
  scope: { agentId?: string } = {},
  now = Date.now(),
): Promise<number> {
  return askActiveThreads(env, tenantId, now, {
    ...(scope.agentId !== undefined ? { agentId: scope.agentId } : {}),
    goOn: async () => true,
    ask: (stub, address) => stub.recheckSockets(address),
  });
}
