// Isolate-local cache of public agent key look-ups: every launch from a site reads the same agent, so a short TTL
// saves a D1 round trip per launch. Changes made through this isolate invalidate at once; the TTL bounds how long
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
  const hit = byKey.get(publicKey);
  if (hit !== undefined && hit.expiresAt > now) return hit.agent;
  if (hit !== undefined) byKey.delete(publicKey);

  const entry: Cached = {
    agent: store.findLaunchAgent({ publicKey }, environment),
    expiresAt: now + AGENT_KEY_TTL_MS,
  };
  const forget = () => {
    if (byKey.get(publicKey) === entry) byKey.delete(publicKey);
  };
  entry.agent.then((found) => {
    if (found === null || !found.released) forget();
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
