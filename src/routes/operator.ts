// Operator API: creating, listing and changing tenants (status, quotas), and issuing a tenant's API keys.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { invalidateGateTenant } from "../auth/gate-agent-cache";
import { launchBudget } from "../auth/launch-budget";
import { invalidateLaunchStanding } from "../auth/launch-standing";
import { dailyLaunchQuota } from "../auth/rate-limit";
import { tenantQuota } from "../auth/tenant-quota";
import { timeIdCursor } from "../control/page-cursor";
import { errors } from "../errors";
import type { AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { operation } from "../http/openapi";
import { operatorAuth } from "../http/operator-auth";
import { deploymentStore } from "../http/store";
import { issueApiKey } from "../services/issue-api-key";
import { disconnectTenant } from "../services/tenant-disconnect";
import {
  createdApiKeyResponse,
  createdTenantResponse,
  createTenantApiKeyRequest,
  createTenantRequest,
  listResponse,
  moveTenantShardRequest,
  patchTenantRequest,
  type TenantResponse,
  type TenantShardResponse,
  tenantResponse,
  tenantShardResponse,
} from "../shared/api";
import { pageQuery } from "../shared/sessions-api";
import { startMove } from "../storage/d1/shard-move-state";
import { forgetTenantShard, isShardName, placeTenant, SHARDS, type TenantShard } from "../storage/d1/shards";
import { getTenantRecord, listTenants, type TenantRecord, updateTenant } from "../storage/d1/tenants";

const LIST = "operator-tenants";
/** What the operator's cursors are bound to instead of a tenant (tenant ids start with `ten_`, so never this). */
const OPERATOR_SCOPE = "operator";

/** A tenant as the operator sees it: its own settings, and the launch budget they come to on this platform. */
function tenantView(env: Env, tenant: TenantRecord): TenantResponse {
  return {
    id: tenant.id,
    name: tenant.name,
    status: tenant.status,
    quotas: tenant.quotas,
    launchBudget: launchBudget(tenant.quotas, dailyLaunchQuota(env)),
    createdAt: tenant.createdAt,
  };
}

function shardView(p: TenantShard): TenantShardResponse {
  let step: string | null = null;
  if (p.cursor !== null) {
    try {
      const parsed = z.object({ step: z.string() }).safeParse(JSON.parse(p.cursor));
      step = parsed.success ? parsed.data.step : null;
    } catch {
      step = null;
    }
  }
  return {
    tenantId: p.tenantId,
    shard: p.shard,
    state: p.state,
    movingTo: p.movingTo,
    movingFrom: p.movingFrom,
    step,
    stepAt: p.stepAt,
    movedAt: p.movedAt,
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
  .post(
    "/tenants",
    describeRoute(
      operation({
        tag: "Operator",
        summary: "Create a tenant and its first admin key",
        auth: "operatorToken",
        body: createTenantRequest,
        response: { status: 201, schema: createdTenantResponse },
      }),
    ),
    async (c) => {
      const { name } = await readJson(c, createTenantRequest);
      const tenant = await deploymentStore(c).createTenant({ name });
      // Its projection's shard is chosen now, by weight, and never changes unless an operator moves it.
      await placeTenant(c.env.DB, tenant.id, new Date().toISOString());
      const key = await issueApiKey(c.env, tenant.id, { name: "Initial admin key", scope: "admin" });
      return c.json({ tenantId: tenant.id, apiKey: key.apiKey }, 201);
    },
  )
  .get(
    "/tenants",
    describeRoute(
      operation({
        tag: "Operator",
        summary: "List tenants",
        auth: "operatorToken",
        query: pageQuery,
        response: { status: 200, schema: listResponse(tenantResponse) },
        errors: [400],
      }),
    ),
    async (c) => {
      const page = await readPage(c, LIST, OPERATOR_SCOPE);
      const after = page.after === undefined ? undefined : tenantPosition(page.after);
      const result = await listTenants(c.env.DB, { limit: page.limit, ...(after ? { after } : {}) });
      const last = result.items.at(-1);
      const next = result.hasMore && last ? JSON.stringify([last.createdAt, last.id]) : undefined;
      return c.json(
        await pageBody(
          c,
          LIST,
          result.items.map((tenant) => tenantView(c.env, tenant)),
          next,
          OPERATOR_SCOPE,
        ),
      );
    },
  )
  .get(
    "/tenants/:tenantId",
    describeRoute(
      operation({
        tag: "Operator",
        summary: "Get a tenant",
        auth: "operatorToken",
        response: { status: 200, schema: tenantResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const tenant = await getTenantRecord(c.env.DB, c.req.param("tenantId"));
      if (tenant === null) throw errors.notFound("Tenant");
      return c.json(tenantView(c.env, tenant));
    },
  )
  .patch(
    "/tenants/:tenantId",
    describeRoute(
      operation({
        tag: "Operator",
        summary: "Change a tenant's status, quotas or launch shares",
        auth: "operatorToken",
        body: patchTenantRequest,
        response: { status: 200, schema: tenantResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const patch = await readJson(c, patchTenantRequest);
      const tenantId = c.req.param("tenantId");
      const tenant = await updateTenant(c.env.DB, tenantId, patch, new Date().toISOString());
      if (tenant === null) throw errors.notFound("Tenant");
      invalidateGateTenant(tenantId);
      invalidateLaunchStanding(tenantId);
      // In force for launches and runs once this answers: the tenant's quota object re-reads the row now. A failure
      // here is a 500 the operator retries (the patch is idempotent); meanwhile the object re-reads on its own.
      await tenantQuota(c.env, tenantId).refreshSettings();
      // Keys, launches and new sockets are refused from here on; open sockets close within the minute, by a round
      // the quota object records before this answers (a failure is a 500 the operator retries, as above).
      if (patch.status === "disabled") await disconnectTenant(c.env, tenantId);
      return c.json(tenantView(c.env, tenant));
    },
  )
  .get(
    "/tenants/:tenantId/shard",
    describeRoute(
      operation({
        tag: "Operator",
        summary: "Where a tenant's projection lives (its D1 shard) and how far a move of it has got",
        auth: "operatorToken",
        response: { status: 200, schema: tenantShardResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const tenant = await getTenantRecord(c.env.DB, c.req.param("tenantId"));
      if (tenant === null) throw errors.notFound("Tenant");
      return c.json(shardView(await placeTenant(c.env.DB, tenant.id, new Date().toISOString())));
    },
  )
  .post(
    "/tenants/:tenantId/shard",
    describeRoute(
      operation({
        tag: "Operator",
        summary:
          "Move a tenant's projection to another D1 shard (copy, then switch; the scheduled job runs it)",
        auth: "operatorToken",
        body: moveTenantShardRequest,
        response: { status: 202, schema: tenantShardResponse },
        errors: [400, 404, 409],
      }),
    ),
    async (c) => {
      const { shard } = await readJson(c, moveTenantShardRequest);
      if (!isShardName(shard)) {
        throw errors.badRequest(`Unknown shard; this deployment has ${SHARDS.join(", ")}.`);
      }
      const tenant = await getTenantRecord(c.env.DB, c.req.param("tenantId"));
      if (tenant === null) throw errors.notFound("Tenant");
      const at = new Date().toISOString();
      const placement = await placeTenant(c.env.DB, tenant.id, at);
      const started = await startMove(c.env.DB, placement, shard, at);
      if (!started.ok) {
        if (started.reason === "unknown_tenant") throw errors.notFound("Tenant");
        throw errors.conflict("Another move of this tenant is under way.", {
          movingTo: started.placement?.movingTo ?? null,
        });
      }
      forgetTenantShard(tenant.id);
      return c.json(shardView(started.placement), 202);
    },
  )
  .post(
    "/tenants/:tenantId/api-keys",
    describeRoute(
      operation({
        tag: "Operator",
        summary: "Issue an API key for a tenant",
        auth: "operatorToken",
        body: createTenantApiKeyRequest,
        response: { status: 201, schema: createdApiKeyResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const input = await readJson(c, createTenantApiKeyRequest);
      const tenant = await getTenantRecord(c.env.DB, c.req.param("tenantId"));
      if (tenant === null) throw errors.notFound("Tenant");
      return c.json(await issueApiKey(c.env, tenant.id, input), 201);
    },
  );
