// The `agents` table on D1 (and its origin index): every statement binds tenant_id except the public-key lookup.
import { z } from "zod";
import type {
  AgentEntity,
  AgentPatch,
  Environment,
  LaunchAgent,
  LaunchLookup,
  NewAgent,
  Page,
  PageRequest,
} from "../../control/deployment-store";
import { newId } from "../../control/ids";
import { decodeCursor, encodeCursor, pageLimit, timeIdCursor } from "../../control/page-cursor";
import {
  agentNotFound,
  agentPatchSchema,
  newAgentSchema,
  pageOf,
  parseInput,
  publicKeyTaken,
  slugTaken,
} from "../../control/store-rules";
import { fail, ok, type Result } from "../../errors";
import { TENANT_STATUSES, type TenantStatus } from "../../shared/api";
import { deleteAgentOrigins, insertAgentOrigins } from "./agent-origins";
import { AGENT_COLUMNS, toAgent, uniqueViolation } from "./deployment-rows";

export async function createAgent(
  db: D1Database,
  stamp: () => string,
  tenantId: string,
  input: NewAgent,
): Promise<Result<AgentEntity>> {
  const parsed = parseInput(newAgentSchema, input, "Agent");
  if (!parsed.ok) return parsed;
  const agent = parsed.value;
  const now = stamp();
  const agentId = newId("agt");
  try {
    // One batch, one transaction: the agent and its origin index rows exist together or not at all.
    const [inserted] = await db.batch([
      db
        .prepare(
          `INSERT INTO agents (${AGENT_COLUMNS})
           SELECT ?1, ?2, ?3, ?4, 'active', ?5, ?6, ?7, ?8, ?8, NULL WHERE EXISTS (SELECT 1 FROM tenants WHERE id = ?1)
           RETURNING ${AGENT_COLUMNS}`,
        )
        .bind(
          tenantId,
          agentId,
          agent.slug,
          agent.name,
          agent.visibility,
          JSON.stringify(agent.allowedOrigins),
          agent.publicKey,
          now,
        ),
      insertAgentOrigins(db, tenantId, agentId, agent.allowedOrigins),
    ]);
    const row = inserted?.results[0];
    return row === undefined ? fail("not_found", "Tenant not found.") : ok(toAgent(row));
  } catch (error) {
    return agentConflict(error);
  }
}

export async function getAgent(
  db: D1Database,
  tenantId: string,
  agentId: string,
): Promise<AgentEntity | null> {
  const row = await db
    .prepare(`SELECT ${AGENT_COLUMNS} FROM agents WHERE tenant_id = ? AND id = ?`)
    .bind(tenantId, agentId)
    .first();
  return row === null ? null : toAgent(row);
}

export async function findAgentByPublicKey(db: D1Database, publicKey: string): Promise<AgentEntity | null> {
  // The one agent read without a tenant: the key is how the tenant is found (unique index agents_by_public_key).
  const row = await db
    .prepare(`SELECT ${AGENT_COLUMNS} FROM agents WHERE public_key = ?`)
    .bind(publicKey)
    .first();
  return row === null ? null : toAgent(row);
}

/**
 * The agent a launch names, with whether it has an active release in `environment`: one indexed read (the agent by
 * its key, then the `active_releases` primary key), so refusing a launch that could never run adds no round trip.
 */
export async function findLaunchAgent(
  db: D1Database,
  lookup: LaunchLookup,
  environment: Environment,
): Promise<LaunchAgent | null> {
  const released = `EXISTS (SELECT 1 FROM active_releases r WHERE r.tenant_id = agents.tenant_id
    AND r.agent_id = agents.id AND r.environment = ?) AS released`;
  const statement =
    "publicKey" in lookup
      ? db
          .prepare(`SELECT ${AGENT_COLUMNS}, ${released} FROM agents WHERE public_key = ?`)
          .bind(environment, lookup.publicKey)
      : db
          .prepare(`SELECT ${AGENT_COLUMNS}, ${released} FROM agents WHERE tenant_id = ? AND id = ?`)
          .bind(environment, lookup.tenantId, lookup.agentId);
  const row = await statement.first();
  if (row === null) return null;
  return { agent: toAgent(row), released: releasedFlag.parse(row.released) === 1 };
}

const releasedFlag = z.union([z.literal(0), z.literal(1)]);

const tenantStatusColumn = z.object({ tenant_status: z.enum(TENANT_STATUSES) });

/**
 * The agent a launch token names, with its tenant's status, in one read: what the connect gate checks (kept in an
 * isolate cache, src/auth/gate-agent-cache.ts). Null for an unknown agent or tenant.
 */
export async function getAgentWithTenantStatus(
  db: D1Database,
  tenantId: string,
  agentId: string,
): Promise<{ agent: AgentEntity; tenantStatus: TenantStatus } | null> {
  const row = await db
    .prepare(
      `SELECT ${AGENT_COLUMNS}, (SELECT status FROM tenants WHERE id = agents.tenant_id) AS tenant_status
       FROM agents WHERE tenant_id = ? AND id = ?`,
    )
    .bind(tenantId, agentId)
    .first();
  if (row === null) return null;
  const tenant = tenantStatusColumn.safeParse(row);
  return tenant.success ? { agent: toAgent(row), tenantStatus: tenant.data.tenant_status } : null;
}

export async function listAgents(
  db: D1Database,
  tenantId: string,
  page: PageRequest,
): Promise<Page<AgentEntity>> {
  const limit = pageLimit(page.limit);
  const [createdAt, id] = page.after === undefined ? ["", ""] : decodeCursor(page.after, timeIdCursor);
  const { results } = await db
    .prepare(
      `SELECT ${AGENT_COLUMNS} FROM agents
       WHERE tenant_id = ?1 AND (created_at > ?2 OR (created_at = ?2 AND id > ?3))
       ORDER BY created_at, id LIMIT ?4`,
    )
    .bind(tenantId, createdAt, id, limit + 1)
    .all();
  return pageOf(results.map(toAgent), limit, (a) => encodeCursor([a.createdAt, a.id]));
}

export async function updateAgent(
  db: D1Database,
  stamp: () => string,
  tenantId: string,
  agentId: string,
  patch: AgentPatch,
): Promise<Result<AgentEntity>> {
  const parsed = parseInput(agentPatchSchema, patch, "Agent patch");
  if (!parsed.ok) return parsed;
  const p = parsed.value;
  const changes = [p.name, p.status, p.visibility, p.allowedOrigins, p.publicKey, p.retention];
  if (changes.every((value) => value === undefined)) {
    const agent = await getAgent(db, tenantId, agentId);
    return agent === null ? agentNotFound() : ok(agent);
  }
  try {
    // COALESCE keeps each absent field, so two patches of different fields never undo each other. A new origin list
    // replaces the agent's origin index rows in the same batch (one transaction).
    const update = db
      .prepare(
        `UPDATE agents SET name = COALESCE(?3, name), status = COALESCE(?4, status),
           visibility = COALESCE(?5, visibility), allowed_origins = COALESCE(?6, allowed_origins),
           public_key = COALESCE(?7, public_key), updated_at = ?8,
           retention_max_age_days = CASE WHEN ?9 = 1 THEN ?10 ELSE retention_max_age_days END
         WHERE tenant_id = ?1 AND id = ?2 RETURNING ${AGENT_COLUMNS}`,
      )
      .bind(
        tenantId,
        agentId,
        p.name ?? null,
        p.status ?? null,
        p.visibility ?? null,
        p.allowedOrigins === undefined ? null : JSON.stringify(p.allowedOrigins),
        p.publicKey ?? null,
        stamp(),
        p.retention === undefined ? 0 : 1,
        p.retention?.maxAgeDays ?? null,
      );
    const [updated] = await db.batch(
      p.allowedOrigins === undefined
        ? [update]
        : [
            update,
            deleteAgentOrigins(db, tenantId, agentId),
            insertAgentOrigins(db, tenantId, agentId, p.allowedOrigins),
          ],
    );
    const row = updated?.results[0];
    return row === undefined ? agentNotFound() : ok(toAgent(row));
  } catch (error) {
    return agentConflict(error);
  }
}

export async function agentExists(db: D1Database, tenantId: string, agentId: string): Promise<boolean> {
  const row = await db
    .prepare("SELECT 1 AS found FROM agents WHERE tenant_id = ? AND id = ?")
    .bind(tenantId, agentId)
    .first();
  return row !== null;
}

function agentConflict(error: unknown): Result<never> {
  const columns = uniqueViolation(error);
  if (columns === null) throw error;
  return columns.includes("public_key") ? publicKeyTaken() : slugTaken();
}
