// Disabling a tenant closes its live sockets: only threads that can hold one (marked active within the window),
// a batch at a time, off the request path, stopping if the tenant is enabled again meanwhile.
import { activitySince } from "../auth/socket-activity";
import { rowAddress, threadStubFor } from "../auth/thread-stub";
import { getTenantSettings } from "../storage/d1/tenants";
import { listActiveThreads } from "../storage/d1/thread-registry";

/** Threads asked at once; each ask is one RPC that wakes the thread's object. */
export const DISCONNECT_BATCH = 50;

/** Asks every recently active thread of the tenant to close its sockets (4403); returns how many were asked. */
export async function disconnectTenant(env: Env, tenantId: string, now = Date.now()): Promise<number> {
  const since = activitySince(now);
  let after: { activeAt: string; id: string } | undefined;
  let asked = 0;
  for (;;) {
    // Re-read per batch: an operator who enables the tenant again stops the rest of the round.
    const settings = await getTenantSettings(env.DB, tenantId);
    if (settings?.status !== "disabled") return asked;
    const page = await listActiveThreads(env.DB, tenantId, {
      since,
      limit: DISCONNECT_BATCH,
      ...(after !== undefined ? { after } : {}),
    });
    await Promise.all(
      page.map(async (thread) => {
        try {
          const stub = await threadStubFor(env, thread);
          const closed = await stub.closeSocketsOfDisabledTenant(rowAddress(thread));
          if (!closed.ok) throw new Error(closed.code);
        } catch (error) {
          // The thread's own check on its next idle sweep closes what this missed.
          console.error(
            JSON.stringify({ level: "error", message: "tenant disconnect failed", error: String(error) }),
          );
        }
      }),
    );
    asked += page.length;
    const last = page.at(-1);
    if (page.length < DISCONNECT_BATCH || last === undefined) return asked;
    after = { activeAt: last.activeAt, id: last.id };
  }
}
