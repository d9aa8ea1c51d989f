// Operator API: creating tenants, each with its first admin API key.
import { Hono } from "hono";
import type { AppEnv } from "../http/context";
import { issueApiKey } from "../http/issue-api-key";
import { readJson } from "../http/json-body";
import { operatorAuth } from "../http/operator-auth";
import { deploymentStore } from "../http/store";
import { createTenantRequest } from "../shared/api";

export const operator = new Hono<AppEnv>().use("*", operatorAuth).post("/tenants", async (c) => {
  const { name } = await readJson(c, createTenantRequest);
  const tenant = await deploymentStore(c).createTenant({ name });
  const key = await issueApiKey(c.env, tenant.id, { name: "Initial admin key", scope: "admin" });
  return c.json({ tenantId: tenant.id, apiKey: key.apiKey }, 201);
});
