// Isolate-local cache of public agent key look-ups: every launch from a site reads the same agent, so a short TTL
// saves a D1 round trip per launch. Changes made through this isolate invalidate at once; the TTL bounds how long
// another isolate may still act on an agent as it was (docs/decisions.md: "Agent key cache").
import type { AgentEntity, DeploymentStore } from "../control/deployment-store";

export const AGENT_KEY_TTL_MS = 30_000;
export const AGENT_KEY_CACHE_MAX = 1_000;

interface Cached {
  agent: Promise<AgentEntity | null>;
  expiresAt: number;
}

const byKey = new Map<string, Cached>();

/**
 * `store.findAgentByPublicKey`, answered from this isolate's cache while fresh. Concurrent misses for one key share
 * one read. Only found agents are kept: unknown keys (guessing, typos) always go to the store and never evict a
 * real agent's entry.
 */
export function findAgentByPublicKeyCached(
  store: Pick<DeploymentStore, "findAgentByPublicKey">,
  publicKey: string,
  now: number = Date.now(),
): Promise<AgentEntity | null> {
  const hit = byKey.get(publicKey);
  if (hit !== undefined && hit.expiresAt > now) return hit.agent;
  if (hit !== undefined) byKey.delete(publicKey);

  const entry: Cached = { agent: store.findAgentByPublicKey(publicKey), expiresAt: now + AGENT_KEY_TTL_MS };
  const forget = () => {
    if (byKey.get(publicKey) === entry) byKey.delete(publicKey);
  };
  entry.agent.then((agent) => {
    if (agent === null) forget();
  }, forget);
  if (byKey.size >= AGENT_KEY_CACHE_MAX) {
    const oldest = byKey.keys().next();
    if (!oldest.done) byKey.delete(oldest.value);
  }
  byKey.set(publicKey, entry);
  return entry.agent;
}

/** Forgets the given keys in this isolate; call it with every key an agent change affects (old and new). */
export function invalidateAgentKeys(...publicKeys: string[]): void {
  for (const key of publicKeys) byKey.delete(key);
}

/** How many keys this isolate holds (for tests). */
export function agentKeyCacheSize(): number {
  return byKey.size;
}
