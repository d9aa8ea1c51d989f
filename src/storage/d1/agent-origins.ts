// The `agent_origins` index on D1: which agents allow which origin patterns, kept beside agents.allowed_origins.
import { canonicalOriginPattern } from "../../shared/origin-policy";

/**
 * The statement that adds an agent's patterns to the index, for the batch that writes the agent itself. Guarded by
 * the agent's row, so a batch whose agent write matched nothing (an unknown tenant or agent) adds nothing either.
 */
export function insertAgentOrigins(
  db: D1Database,
  tenantId: string,
  agentId: string,
  patterns: readonly string[],
): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR IGNORE INTO agent_origins (tenant_id, agent_id, origin)
       SELECT ?1, ?2, value FROM json_each(?3)
       WHERE EXISTS (SELECT 1 FROM agents WHERE tenant_id = ?1 AND id = ?2)`,
    )
    .bind(tenantId, agentId, JSON.stringify(indexKeys(patterns)));
}

/** The statement that removes an agent's patterns from the index (before `insertAgentOrigins` writes the new list). */
export function deleteAgentOrigins(db: D1Database, tenantId: string, agentId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM agent_origins WHERE tenant_id = ? AND agent_id = ?").bind(tenantId, agentId);
}

/** Patterns as the index stores them: canonical and each once (stored patterns already are; this keeps it so). */
function indexKeys(patterns: readonly string[]): string[] {
  const keys = new Set<string>();
  for (const pattern of patterns) {
    const key = canonicalOriginPattern(pattern);
    if (key !== null) keys.add(key);
  }
  return [...keys];
}

/**
 * Cross-tenant by design: a CORS preflight carries no credential, only the Origin. An equality search of
 * `agent_origins_by_origin` for at most two keys, then the agent's row by primary key for its status.
 */
export const ORIGIN_LOOKUP_SQL = `SELECT 1 AS hit FROM agent_origins AS o
  JOIN agents AS a ON a.tenant_id = o.tenant_id AND a.id = o.agent_id
  WHERE o.origin IN (?1, ?2) AND a.status = 'active' LIMIT 1`;

/** True when some active agent allows one of `keys` (from `originLookupKeys`: an origin and its wildcard form). */
export async function anyAgentAllowsOrigin(db: D1Database, keys: readonly string[]): Promise<boolean> {
  const [exact, wildcard] = keys;
  if (exact === undefined) return false;
  const row = await db
    .prepare(ORIGIN_LOOKUP_SQL)
    .bind(exact, wildcard ?? exact)
    .first<{ hit: number }>();
  return row !== null;
}
