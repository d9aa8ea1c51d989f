// Isolate-local cache of launch agent look-ups (by public key, or by id for a backend): every launch from a site or a
// backend reads the same agent, so a short TTL saves a D1 round trip per launch. Changes made through this isolate invalidate at once; the TTL bounds how long
// another isolate may still act on an agent as it was (docs/decisions.md: "Agent key cache").
import type { DeploymentStore, Environment, LaunchAgent } from "../../control/deployment-store";

export const AGENT_KEY_TTL_MS = 30_000;
export const AGENT_KEY_CACHE_MAX = 1_000;

interface Cached {
  agent: Promise<LaunchAgent | null>;
  expiresAt: number;
}

const byKey = new Map<string, Cached>();

/**
 * `store.findLaunchAgent` by public key, answered from this isolate's cache while fresh. Concurrent misses for one key
 * share one read. Only agents with an active release are kept: unknown keys (guessing, typos) always go to the store
 * and never evict a real agent's entry, and an agent without a release is read again on its next launch, so a release
 * activated in any isolate is seen at once. (A release is replaced, never withdrawn, so a kept answer stays true.)
 * The Worker serves one environment, so the key alone names the entry.
 */
export function findLaunchAgentCached(
  store: Pick<DeploymentStore, "findLaunchAgent">,
  publicKey: string,
  environment: Environment,
  now: number = Date.now(),
): Promise<LaunchAgent | null> {
  return cached(publicKey, () => store.findLaunchAgent({ publicKey }, environment), now);
}

/**
 * The same for a backend's launch naming its agent by id (the caller checks the agent is the authenticated tenant's):
 * kept and bounded like a public key's entry.
 */
export function findLaunchAgentByIdCached(
  store: Pick<DeploymentStore, "findLaunchAgent">,
  tenantId: string,
  agentId: string,
  environment: Environment,
  now: number = Date.now(),
): Promise<LaunchAgent | null> {
  return cached(
    idKey(tenantId, agentId),
    () => store.findLaunchAgent({ tenantId, agentId }, environment),
    now,
  );
}

/** Public keys start with `pk_`, so an id entry's key never equals one. */
const idKey = (tenantId: string, agentId: string) => `id\u0000${tenantId}\u0000${agentId}`;

function cached(
  key: string,
  read: () => Promise<LaunchAgent | null>,
  now: number,
): Promise<LaunchAgent | null> {
  const hit = byKey.get(key);
  if (hit !== undefined && hit.expiresAt > now) return hit.agent;
  if (hit !== undefined) byKey.delete(key);

  const entry: Cached = { agent: read(), expiresAt: now + AGENT_KEY_TTL_MS };
  const forget = () => {
    if (byKey.get(key) === entry) byKey.delete(key);
  };
  entry.agent.then((found) => {
    if (found === null || !found.released) forget();
  }, forget);
  if (byKey.size >= AGENT_KEY_CACHE_MAX) {
    const oldest = byKey.keys().next();
    if (!oldest.done) byKey.delete(oldest.value);
  }
  byKey.set(key, entry);
  return entry.agent;
}

/** Forgets the given keys in this isolate; call it with every key an agent change affects (old and new). */
export function invalidateAgentKeys(...publicKeys: string[]): void {
  for (const key of publicKeys) byKey.delete(key);
}

/** Forgets an agent looked up by id in this isolate; call it on every change of the agent. */
export function invalidateLaunchAgent(tenantId: string, agentId: string): void {
  byKey.delete(idKey(tenantId, agentId));
}

/** How many keys this isolate holds (for tests). */
export function agentKeyCacheSize(): number {
  return byKey.size;
}
