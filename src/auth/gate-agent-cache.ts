// Isolate-local cache of what the connect gate needs from the control plane (the agent's status, visibility and
// origins, and its tenant's status), so a WebSocket connect or thread HTTP call makes no D1 round trip once warm.
// Changes made through this isolate invalidate at once; the TTL bounds how long any other isolate may act on the
// agent or tenant as it was (docs/security.md, "Who decides what on the connect path").
import type { AgentEntity } from "../control/deployment-store";
import type { TenantStatus } from "../shared/api";
import { getAgentWithTenantStatus } from "../storage/d1/agents";

/** The staleness bound across isolates: a disabled agent or tenant, or a changed origin list, is seen within it. */
export const GATE_AGENT_TTL_MS = 30_000;
export const GATE_AGENT_CACHE_MAX = 2_000;

export interface GateAgent {
  agent: AgentEntity;
  tenantStatus: TenantStatus;
}

/** Answered when D1 could not be read and this isolate holds nothing recent enough to stand in. */
export const GATE_UNAVAILABLE = "unavailable";

/** While D1 cannot be read, the last answer this isolate read stays in use this long (no change can be written then). */
export const GATE_STALE_IF_ERROR_MS = 300_000;

interface Cached {
  read: Promise<GateAgent | null>;
  expiresAt: number;
  /** The last answer read for this agent, and when: what stands in while D1 fails. */
  last?: { value: GateAgent; at: number };
}

const byAgent = new Map<string, Cached>();

const keyOf = (tenantId: string, agentId: string) => `${tenantId}\u0000${agentId}`;

async function settle(entry: Cached, now: number): Promise<GateAgent | null | typeof GATE_UNAVAILABLE> {
  try {
    return await entry.read;
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", message: "gate agent read failed", error: String(error) }),
    );
    const last = entry.last;
    return last !== undefined && now - last.at < GATE_STALE_IF_ERROR_MS ? last.value : GATE_UNAVAILABLE;
  }
}

/**
 * The agent and its tenant's status, from this isolate's cache while fresh. Concurrent misses share one read; an
 * unknown agent is never kept (guessing keeps no entry); a failed read is retried by the next caller and meanwhile
 * answered with the last value read (within GATE_STALE_IF_ERROR_MS), else GATE_UNAVAILABLE.
 */
export function gateAgentCached(
  db: D1Database,
  tenantId: string,
  agentId: string,
  now: number = Date.now(),
): Promise<GateAgent | null | typeof GATE_UNAVAILABLE> {
  const key = keyOf(tenantId, agentId);
  const hit = byAgent.get(key);
  if (hit !== undefined && hit.expiresAt > now) return settle(hit, now);

  const entry: Cached = {
    read: getAgentWithTenantStatus(db, tenantId, agentId),
    expiresAt: now + GATE_AGENT_TTL_MS,
    ...(hit?.last !== undefined ? { last: hit.last } : {}),
  };
  entry.read.then(
    (found) => {
      if (found === null) {
        if (byAgent.get(key) === entry) byAgent.delete(key);
      } else entry.last = { value: found, at: now };
    },
    () => {
      entry.expiresAt = 0;
    },
  );
  if (hit === undefined && byAgent.size >= GATE_AGENT_CACHE_MAX) {
    const oldest = byAgent.keys().next();
    if (!oldest.done) byAgent.delete(oldest.value);
  }
  byAgent.set(key, entry);
  return settle(entry, now);
}

/** Forgets one agent in this isolate: call it after any change to the agent (status, visibility, origins, key). */
export function invalidateGateAgent(tenantId: string, agentId: string): void {
  byAgent.delete(keyOf(tenantId, agentId));
}

/** Forgets every agent of a tenant in this isolate: call it after the tenant's status changes. */
export function invalidateGateTenant(tenantId: string): void {
  const prefix = `${tenantId}\u0000`;
  for (const key of [...byAgent.keys()]) if (key.startsWith(prefix)) byAgent.delete(key);
}
