// Operator API: creating, listing and changing tenants (status, quotas), and issuing a tenant's API keys.
import { Hono } from "hono";
import { tenantQuota } from "../auth/tenant-quota";
import { timeIdCursor } from "../control/page-cursor";
import { errors } from "../errors";
import type { AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { issueApiKey } from "../http/issue-api-key";
import { readJson } from "../http/json-body";
import { operatorAuth } from "../http/operator-auth";
import { deploymentStore } from "../http/store";
import { disconnectTenant } from "../http/tenant-disconnect";
import {
  createTenantApiKeyRequest,
  createTenantRequest,
  patchTenantRequest,
  type TenantResponse,
} from "../shared/api";
import { getTenantRecord, listTenants, type TenantRecord, updateTenant } from "../storage/d1/tenants";

const LIST = "operator-tenants";
/** What the operator's cursors are bound to instead of a tenant (tenant ids start with `ten_`, so never this). */
const OPERATOR_SCOPE = "operator";

function tenantView(tenant: TenantRecord): TenantResponse {
  return {
    id: tenant.id,
    name: tenant.name,
    status: tenant.status,
    quotas: tenant.quotas,
    createdAt: tenant.createdAt,
  };
}

/** The (createdAt, id) keyset position a signed cursor carries. */
function tenantPosition(after: string): { createdAt: string; id: string } {
  let value: unknown;
  try {
    value = JSON.parse(after);
  } catch {
    throw errors.badRequest("Invalid cursor.");
  }
  const parsed = timeIdCursor.safeParse(value);
  if (!parsed.success) throw errors.badRequest("Invalid cursor.");
  return { createdAt: parsed.data[0], id: parsed.data[1] };
}

export const operator = new Hono<AppEnv>()
  .use("*", operatorAuth)
  .post("/tenants", async (c) => {
    const { name } = await readJson(c, createTenantRequest);
    const tenant = await deploymentStore(c).createTenant({ name });
    const key = await issueApiKey(c.env, tenant.id, { name: "Initial admin key", scope: "admin" });
    return c.json({ tenantId: tenant.id, apiKey: key.apiKey }, 201);
  })
  .get("/tenants", async (c) => {
    const page = await readPage(c, LIST, OPERATOR_SCOPE);
    const after = page.after === undefined ? undefined : tenantPosition(page.after);
    const result = await listTenants(c.env.DB, { limit: page.limit, ...(after ? { after } : {}) });
    const last = result.items.at(-1);
    const next = result.hasMore && last ? JSON.stringify([last.createdAt, last.id]) : undefined;
    return c.json(await pageBody(c, LIST, result.items.map(tenantView), next, OPERATOR_SCOPE));
  })
  .get("/tenants/:tenantId", async (c) => {
    const tenant = await getTenantRecord(c.env.DB, c.req.param("tenantId"));
    if (tenant === null) throw errors.notFound("Tenant");
    return c.json(tenantView(tenant));
  })
  .patch("/tenants/:tenantId", async (c) => {
    const patch = await readJson(c, patchTenantRequest);
    const tenantId = c.req.param("tenantId");
    const tenant = await updateTenant(c.env.DB, tenantId, patch, new Date().toISOString());
    if (tenant === null) throw errors.notFound("Tenant");
    // In force for launches and runs once this answers: the tenant's quota object re-reads the row now. A failure
    // here is a 500 the operator retries (the patch is idempotent); meanwhile the object re-reads on its own.
    await tenantQuota(c.env, tenantId).refreshSettings();
    // Keys, launches and new sockets are refused from here on; open sockets are closed in the background.
    if (patch.status === "disabled") c.executionCtx.waitUntil(disconnectTenant(c.env, tenantId));
    return c.json(tenantView(tenant));
  })
  .post("/tenants/:tenantId/api-keys", async (c) => {
    const input = await readJson(c, createTenantApiKeyRequest);
    const tenant = await getTenantRecord(c.env.DB, c.req.param("tenantId"));
    if (tenant === null) throw errors.notFound("Tenant");
    return c.json(await issueApiKey(c.env, tenant.id, input), 201);
  });
