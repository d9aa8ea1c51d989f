// The `tenants` table on D1: created, listed and changed by an operator, read by id; the one control-plane table
// keyed by id alone (it is the list of tenants, not a tenant's data).
import { z } from "zod";
import type { Tenant } from "../../control/deployment-store";
import { newId } from "../../control/ids";
import { TENANT_STATUSES, type TenantPatch, type TenantQuotas, type TenantStatus } from "../../shared/api";
import { TENANT_COLUMNS, toTenant } from "./deployment-rows";

/** A tenant with what only the operator sets: its own quotas (`null` = the platform default). */
export interface TenantRecord extends Tenant {
  quotas: TenantQuotas;
}

const quota = z.number().int().positive().nullable();
const percent = z.number().int().min(0).max(100).nullable();

const recordRow = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(TENANT_STATUSES),
    created_at: z.string(),
    launches_per_day: quota,
    tokens_per_day: quota,
    concurrent_threads: quota,
    private_launch_reserve_percent: percent,
    agent_public_launch_share_percent: percent,
    storage_bytes: quota,
  })
  .transform(
    (row): TenantRecord => ({
      id: row.id,
      name: row.name,
      status: row.status,
      createdAt: row.created_at,
      quotas: {
        launchesPerDay: row.launches_per_day,
        tokensPerDay: row.tokens_per_day,
        concurrentThreads: row.concurrent_threads,
        privateLaunchReservePercent: row.private_launch_reserve_percent,
        agentPublicLaunchSharePercent: row.agent_public_launch_share_percent,
        storageBytes: row.storage_bytes,
      },
    }),
  );

const RECORD_COLUMNS =
  "id, name, status, created_at, launches_per_day, tokens_per_day, concurrent_threads, private_launch_reserve_percent, agent_public_launch_share_percent, storage_bytes";

export async function createTenant(
  db: D1Database,
  stamp: () => string,
  input: { name: string },
): Promise<Tenant> {
  const tenant: Tenant = { id: newId("ten"), name: input.name, status: "active", createdAt: stamp() };
  await db
    .prepare("INSERT INTO tenants (id, name, status, created_at) VALUES (?, ?, ?, ?)")
    .bind(tenant.id, tenant.name, tenant.status, tenant.createdAt)
    .run();
  return tenant;
}

export async function getTenant(db: D1Database, tenantId: string): Promise<Tenant | null> {
  const row = await db.prepare(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ?`).bind(tenantId).first();
  return row === null ? null : toTenant(row);
}

export async function getTenantRecord(db: D1Database, tenantId: string): Promise<TenantRecord | null> {
  const row = await db.prepare(`SELECT ${RECORD_COLUMNS} FROM tenants WHERE id = ?`).bind(tenantId).first();
  return row === null ? null : recordRow.parse(row);
}

/** Oldest first; `after` is the (created_at, id) of the last tenant of the previous page. */
export async function listTenants(
  db: D1Database,
  page: { limit: number; after?: { createdAt: string; id: string } },
): Promise<{ items: TenantRecord[]; hasMore: boolean }> {
  const after = page.after;
  const statement =
    after === undefined
      ? db
          .prepare(`SELECT ${RECORD_COLUMNS} FROM tenants ORDER BY created_at, id LIMIT ?`)
          .bind(page.limit + 1)
      : db
          .prepare(
            `SELECT ${RECORD_COLUMNS} FROM tenants
             WHERE created_at > ?1 OR (created_at = ?1 AND id > ?2)
             ORDER BY created_at, id LIMIT ?3`,
          )
          .bind(after.createdAt, after.id, page.limit + 1);
  const { results } = await statement.all();
  const items = results.map((row) => recordRow.parse(row));
  return { items: items.slice(0, page.limit), hasMore: items.length > page.limit };
}

const QUOTA_COLUMNS = {
  launchesPerDay: "launches_per_day",
  tokensPerDay: "tokens_per_day",
  concurrentThreads: "concurrent_threads",
  privateLaunchReservePercent: "private_launch_reserve_percent",
  agentPublicLaunchSharePercent: "agent_public_launch_share_percent",
  storageBytes: "storage_bytes",
} as const satisfies Record<keyof TenantQuotas, string>;

/**
 * Applies an operator's patch: fields left out keep their value, a quota set to `null` goes back to the default.
 * One UPDATE and the row read back in one batch; null when there is no such tenant.
 */
export async function updateTenant(
  db: D1Database,
  tenantId: string,
  patch: TenantPatch,
  at: string,
): Promise<TenantRecord | null> {
  const sets = ["updated_at = ?"];
  const values: (string | number | null)[] = [at];
  if (patch.status !== undefined) {
    sets.push("status = ?");
    values.push(patch.status);
  }
  for (const [key, column] of Object.entries(QUOTA_COLUMNS) as [keyof TenantQuotas, string][]) {
    const value = patch.quotas?.[key];
    if (value === undefined) continue;
    sets.push(`${column} = ?`);
    values.push(value);
  }
  const [, read] = await db.batch([
    db.prepare(`UPDATE tenants SET ${sets.join(", ")} WHERE id = ?`).bind(...values, tenantId),
    db.prepare(`SELECT ${RECORD_COLUMNS} FROM tenants WHERE id = ?`).bind(tenantId),
  ]);
  const row = read?.results[0];
  return row === undefined ? null : recordRow.parse(row);
}

/** What the quota object and the thread gate need of a tenant: its status and its own quotas. */
export interface TenantSettings {
  status: TenantStatus;
  quotas: TenantQuotas;
}

export async function getTenantSettings(db: D1Database, tenantId: string): Promise<TenantSettings | null> {
  const record = await getTenantRecord(db, tenantId);
  return record === null ? null : { status: record.status, quotas: record.quotas };
}
