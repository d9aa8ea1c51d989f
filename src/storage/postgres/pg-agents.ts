// Tenants and agents on PostgreSQL: every statement on an agent binds tenant_id except the public-key look-up.
import type {
  AgentEntity,
  AgentPatch,
  Environment,
  LaunchAgent,
  LaunchLookup,
  NewAgent,
  Page,
  PageRequest,
  Tenant,
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
import { publicKeyConstraint } from "./migration";
import { foreignKeyViolation, uniqueViolation } from "./pg-connection";
import { firstRow, PG_AGENT_COLUMNS, PG_TENANT_COLUMNS, type PgContext, toAgent, toTenant } from "./pg-rows";

export async function createTenant(c: PgContext, input: { name: string }): Promise<Tenant> {
  const tenant: Tenant = { id: newId("ten"), name: input.name, status: "active", createdAt: c.stamp() };
  await c.db.query(`INSERT INTO ${c.t.tenants} (id, name, status, created_at) VALUES ($1, $2, $3, $4)`, [
    tenant.id,
    tenant.name,
    tenant.status,
    tenant.createdAt,
  ]);
  return tenant;
}

export async function getTenant(c: PgContext, tenantId: string): Promise<Tenant | null> {
  const row = await firstRow(c.db, `SELECT ${PG_TENANT_COLUMNS} FROM ${c.t.tenants} WHERE id = $1`, [
    tenantId,
  ]);
  return row === null ? null : toTenant(row);
}

export async function createAgent(
  c: PgContext,
  tenantId: string,
  input: NewAgent,
): Promise<Result<AgentEntity>> {
  const parsed = parseInput(newAgentSchema, input, "Agent");
  if (!parsed.ok) return parsed;
  const agent = parsed.value;
  const now = c.stamp();
  try {
    const row = await firstRow(
      c.db,
      `INSERT INTO ${c.t.agents} (${PG_AGENT_COLUMNS})
       SELECT $1, $2, $3, $4, 'active', $5, $6::jsonb, $7, $8::timestamptz, $8::timestamptz, NULL
       WHERE EXISTS (SELECT 1 FROM ${c.t.tenants} WHERE id = $1)
       RETURNING ${PG_AGENT_COLUMNS}`,
      [
        tenantId,
        newId("agt"),
        agent.slug,
        agent.name,
        agent.visibility,
        JSON.stringify(agent.allowedOrigins),
        agent.publicKey,
        now,
      ],
    );
    return row === null ? fail("not_found", "Tenant not found.") : ok(toAgent(row));
  } catch (error) {
    return agentWriteFailure(c, error, () => fail("not_found", "Tenant not found."));
  }
}

export async function getAgent(c: PgContext, tenantId: string, agentId: string): Promise<AgentEntity | null> {
  const row = await firstRow(
    c.db,
    `SELECT ${PG_AGENT_COLUMNS} FROM ${c.t.agents} WHERE tenant_id = $1 AND id = $2`,
    [tenantId, agentId],
  );
  return row === null ? null : toAgent(row);
}

export async function agentExists(c: PgContext, tenantId: string, agentId: string): Promise<boolean> {
  const row = await firstRow(c.db, `SELECT 1 AS found FROM ${c.t.agents} WHERE tenant_id = $1 AND id = $2`, [
    tenantId,
    agentId,
  ]);
  return row !== null;
}

export async function findAgentByPublicKey(c: PgContext, publicKey: string): Promise<AgentEntity | null> {
  // The one agent read without a tenant: the key is how the tenant is found (its unique constraint is the index).
  const row = await firstRow(c.db, `SELECT ${PG_AGENT_COLUMNS} FROM ${c.t.agents} WHERE public_key = $1`, [
    publicKey,
  ]);
  return row === null ? null : toAgent(row);
}

/** The agent a launch names, with whether `environment` has an active release for it, in one read. */
export async function findLaunchAgent(
  c: PgContext,
  lookup: LaunchLookup,
  environment: Environment,
): Promise<LaunchAgent | null> {
  const released = `EXISTS (SELECT 1 FROM ${c.t.activeReleases} r WHERE r.tenant_id = g.tenant_id
    AND r.agent_id = g.id AND r.environment = $1) AS released`;
  const columns = PG_AGENT_COLUMNS.split(", ")
    .map((column) => `g.${column}`)
    .join(", ");
  const row =
    "publicKey" in lookup
      ? await firstRow(c.db, `SELECT ${columns}, ${released} FROM ${c.t.agents} g WHERE g.public_key = $2`, [
          environment,
          lookup.publicKey,
        ])
      : await firstRow(
          c.db,
          `SELECT ${columns}, ${released} FROM ${c.t.agents} g WHERE g.tenant_id = $2 AND g.id = $3`,
          [environment, lookup.tenantId, lookup.agentId],
        );
  if (row === null) return null;
  return { agent: toAgent(row), released: row.released === true };
}

export async function listAgents(
  c: PgContext,
  tenantId: string,
  page: PageRequest,
): Promise<Page<AgentEntity>> {
  const limit = pageLimit(page.limit);
  const [createdAt, id] = page.after === undefined ? [null, ""] : decodeCursor(page.after, timeIdCursor);
  const { rows } = await c.db.query(
    `SELECT ${PG_AGENT_COLUMNS} FROM ${c.t.agents}
     WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR created_at > $2 OR (created_at = $2 AND id > $3))
     ORDER BY created_at, id LIMIT $4`,
    [tenantId, createdAt, id, limit + 1],
  );
  return pageOf(rows.map(toAgent), limit, (a) => encodeCursor([a.createdAt, a.id]));
}

export async function updateAgent(
  c: PgContext,
  tenantId: string,
  agentId: string,
  patch: AgentPatch,
): Promise<Result<AgentEntity>> {
  const parsed = parseInput(agentPatchSchema, patch, "Agent patch");
  if (!parsed.ok) return parsed;
  const p = parsed.value;
  const changes = [p.name, p.status, p.visibility, p.allowedOrigins, p.publicKey, p.retention];
  if (changes.every((value) => value === undefined)) {
    const agent = await getAgent(c, tenantId, agentId);
    return agent === null ? agentNotFound() : ok(agent);
  }
  try {
    // COALESCE keeps each absent field, so two patches of different fields never undo each other.
    const row = await firstRow(
      c.db,
      `UPDATE ${c.t.agents} SET name = COALESCE($3, name), status = COALESCE($4, status),
         visibility = COALESCE($5, visibility), allowed_origins = COALESCE($6::jsonb, allowed_origins),
         public_key = COALESCE($7, public_key), updated_at = $8,
         retention_max_age_days = CASE WHEN $9 THEN $10::integer ELSE retention_max_age_days END
       WHERE tenant_id = $1 AND id = $2 RETURNING ${PG_AGENT_COLUMNS}`,
      [
        tenantId,
        agentId,
        p.name ?? null,
        p.status ?? null,
        p.visibility ?? null,
        p.allowedOrigins === undefined ? null : JSON.stringify(p.allowedOrigins),
        p.publicKey ?? null,
        c.stamp(),
        p.retention !== undefined,
        p.retention?.maxAgeDays ?? null,
      ],
    );
    return row === null ? agentNotFound() : ok(toAgent(row));
  } catch (error) {
    return agentWriteFailure(c, error, agentNotFound);
  }
}

/** A unique violation on the public key or the slug, or a foreign key naming a row that is gone. */
function agentWriteFailure(c: PgContext, error: unknown, missing: () => Result<never>): Result<never> {
  if (foreignKeyViolation(error)) return missing();
  const constraint = uniqueViolation(error);
  if (constraint === null) throw error;
  return constraint === publicKeyConstraint(c.prefix) ? publicKeyTaken() : slugTaken();
}
