// Isolate-local cache of an agent's active release for a new thread's launch presentation: a warm launch reads no D1
// for it. The `ready` frame, built by the pinned thread, corrects a presentation made from a release replaced within
// the TTL (docs/decisions.md, "Launch latency").
import type { DeploymentStore, Environment, Release } from "../../control/deployment-store";

/** The agent-key cache's bound: a release activated in another isolate is presented within 30 s. */
export const ACTIVE_RELEASE_TTL_MS = 30_000;
export const ACTIVE_RELEASE_CACHE_MAX = 1_000;

interface Cached {
  release: Promise<Release | null>;
  expiresAt: number;
}

const byAgent = new Map<string, Cached>();

const keyOf = (tenantId: string, agentId: string, environment: Environment) =>
  `${tenantId}\u0000${agentId}\u0000${environment}`;

/**
 * `store.getActiveRelease`, answered from this isolate while fresh. Concurrent misses share one read; only a release
 * found is kept (none, or a failed read, is asked again next time). A release's allocations are write-once, so only
 * which release is active can go stale, for at most the TTL.
 */
export function activeReleaseCached(
  store: Pick<DeploymentStore, "getActiveRelease">,
  tenantId: string,
  agentId: string,
  environment: Environment,
  now: number = Date.now(),
): Promise<Release | null> {
  const key = keyOf(tenantId, agentId, environment);
  const hit = byAgent.get(key);
  if (hit !== undefined && hit.expiresAt > now) return hit.release;
  if (hit !== undefined) byAgent.delete(key);

  const entry: Cached = {
    release: store.getActiveRelease(tenantId, agentId, environment),
    expiresAt: now + ACTIVE_RELEASE_TTL_MS,
  };
  const forget = () => {
    if (byAgent.get(key) === entry) byAgent.delete(key);
  };
  entry.release.then((release) => release === null && forget(), forget);
  if (byAgent.size >= ACTIVE_RELEASE_CACHE_MAX) {
    const oldest = byAgent.keys().next();
    if (!oldest.done) byAgent.delete(oldest.value);
  }
  byAgent.set(key, entry);
  return entry.release;
}

/** Forgets an agent's active release in this isolate; call it when a release of the agent is activated. */
export function invalidateActiveRelease(tenantId: string, agentId: string): void {
  for (const key of byAgent.keys()) {
    if (key.startsWith(`${tenantId}\u0000${agentId}\u0000`)) byAgent.delete(key);
  }
}
