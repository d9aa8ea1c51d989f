// The `tenants` table on D1: created by an operator, read by id; the one control-plane table keyed by id alone.
import type { Tenant } from "../../control/deployment-store";
import { newId } from "../../control/ids";
import { TENANT_COLUMNS, toTenant } from "./deployment-rows";

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
