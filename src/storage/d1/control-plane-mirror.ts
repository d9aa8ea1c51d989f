// With the control plane outside D1 (CONTROL_PLANE=http|hyperdrive), the tenant and agent rows the Worker's own D1
// tables refer to (API keys, threads, origins, socket standing) are mirrored here as they are written
// (docs/control-plane.md#what-stays-in-d1). The control plane stays the source of truth; D1 never answers the port.
import { DEPLOYMENT_ROUTES } from "../../control/control-plane-routes";
import type { AgentEntity, DeploymentStore, Tenant } from "../../control/deployment-store";
import type { Result } from "../../errors";
import { deleteAgentOrigins, insertAgentOrigins } from "./agent-origins";

/** The tenant's row as the control plane created it; an existing row (and its operator settings) is kept. */
export async function mirrorTenant(db: D1Database, tenant: Tenant): Promise<void> {
  await db
    .prepare(
      "INSERT INTO tenants (id, name, status, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
    )
    .bind(tenant.id, tenant.name, tenant.status, tenant.createdAt)
    .run();
}

/** The agent's row and origin index as the control plane holds them now (an upsert: never a delete, no cascade). */
export async function mirrorAgent(db: D1Database, agent: AgentEntity): Promise<void> {
  const { tenantId, id } = agent;
  await db.batch([
    db
      .prepare(
        `INSERT INTO agents (tenant_id, id, slug, name, status, visibility, allowed_origins, public_key, created_at,
           updated_at, retention_max_age_days)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (tenant_id, id) DO UPDATE SET slug = excluded.slug, name = excluded.name,
           status = excluded.status, visibility = excluded.visibility, allowed_origins = excluded.allowed_origins,
           public_key = excluded.public_key, updated_at = excluded.updated_at,
           retention_max_age_days = excluded.retention_max_age_days`,
      )
      .bind(
        tenantId,
        id,
        agent.slug,
        agent.name,
        agent.status,
        agent.visibility,
        JSON.stringify(agent.allowedOrigins),
        agent.publicKey,
        agent.createdAt,
        agent.updatedAt,
        agent.retention?.maxAgeDays ?? null,
      ),
    deleteAgentOrigins(db, tenantId, id),
    insertAgentOrigins(db, tenantId, id, agent.allowedOrigins),
  ]);
}

/**
 * `store` (the control plane) with every tenant and agent it creates or changes mirrored into `db` after it
 * accepted the write. Reads all go to `store`.
 */
export function withD1Mirror(store: DeploymentStore, db: D1Database): DeploymentStore {
  const delegated = Object.fromEntries(
    (Object.keys(DEPLOYMENT_ROUTES) as (keyof DeploymentStore)[]).map((method) => [
      method,
      (store[method] as (...args: unknown[]) => unknown).bind(store),
    ]),
  ) as unknown as DeploymentStore;
  const mirrorAgentOf = async (result: Result<AgentEntity>): Promise<Result<AgentEntity>> => {
    if (!result.ok) return result;
    // A tenant created outside this Worker (in the application's own database) gets its row first.
    const tenant = await store.getTenant(result.value.tenantId);
    if (tenant !== null) await mirrorTenant(db, tenant);
    await mirrorAgent(db, result.value);
    return result;
  };
  return {
    ...delegated,
    async createTenant(input) {
      const tenant = await store.createTenant(input);
      await mirrorTenant(db, tenant);
      return tenant;
    },
    async createAgent(tenantId, input) {
      return mirrorAgentOf(await store.createAgent(tenantId, input));
    },
    async updateAgent(tenantId, agentId, patch) {
      return mirrorAgentOf(await store.updateAgent(tenantId, agentId, patch));
    },
  };
}
