// Tenant admin: the tenant's own API keys. Plaintext exists only in the creation response.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { invalidateLaunchStanding } from "../auth/launch-standing";
import { AppError, errors } from "../errors";
import { apiKeyView } from "../http/api-key-view";
import type { AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { operation } from "../http/openapi";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import { issueApiKey } from "../services/issue-api-key";
import { recheckTenantSockets } from "../services/tenant-disconnect";
import { apiKeyResponse, createApiKeyRequest, createdApiKeyResponse, listResponse } from "../shared/api";
import { pageQuery } from "../shared/sessions-api";
import { getApiKey, listApiKeys, revokeApiKey } from "../storage/d1/tenant-credentials";

const LIST = "api-keys";
const positionSchema = z.tuple([z.string(), z.string()]);

/** The (createdAt, id) keyset position a signed cursor carries. */
function keyPosition(after: string): { createdAt: string; id: string } {
  let value: unknown;
  try {
    value = JSON.parse(after);
  } catch {
    throw errors.badRequest("Invalid cursor.");
  }
  const parsed = positionSchema.safeParse(value);
  if (!parsed.success) throw errors.badRequest("Invalid cursor.");
  return { createdAt: parsed.data[0], id: parsed.data[1] };
}

export const apiKeys = new Hono<AppEnv>()
  .use("*", tenantAuth, requireAdminForWrites)
  .post(
    "/",
    describeRoute(
      operation({
        tag: "API keys",
        summary: "Create an API key (plaintext shown once)",
        auth: "tenantKey",
        body: createApiKeyRequest,
        response: { status: 201, schema: createdApiKeyResponse },
      }),
    ),
    async (c) => {
      const input = await readJson(c, createApiKeyRequest);
      return c.json(await issueApiKey(c.env, c.get("tenant").tenantId, input), 201);
    },
  )
  .get(
    "/",
    describeRoute(
      operation({
        tag: "API keys",
        summary: "List API keys (prefix and last 4 only)",
        auth: "tenantKey",
        query: pageQuery,
        response: { status: 200, schema: listResponse(apiKeyResponse) },
        errors: [400],
      }),
    ),
    async (c) => {
      const page = await readPage(c, LIST);
      const after = page.after === undefined ? undefined : keyPosition(page.after);
      const tenantId = c.get("tenant").tenantId;
      const result = await listApiKeys(c.env.DB, tenantId, {
        limit: page.limit,
        ...(after ? { after } : {}),
      });
      const last = result.items.at(-1);
      const next = result.hasMore && last ? JSON.stringify([last.createdAt, last.id]) : undefined;
      return c.json(await pageBody(c, LIST, result.items.map(apiKeyView), next));
    },
  )
  .get(
    "/:keyId",
    describeRoute(
      operation({
        tag: "API keys",
        summary: "Get an API key",
        auth: "tenantKey",
        response: { status: 200, schema: apiKeyResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const key = await getApiKey(c.env.DB, c.get("tenant").tenantId, c.req.param("keyId"));
      if (key === null) throw errors.notFound("API key");
      return c.json(apiKeyView(key));
    },
  )
  .delete(
    "/:keyId",
    describeRoute(
      operation({
        tag: "API keys",
        summary: "Revoke an API key",
        auth: "tenantKey",
        response: { status: 204, description: "Revoked." },
        errors: [404, 409],
      }),
    ),
    async (c) => {
      const outcome = await revokeApiKey(
        c.env.DB,
        c.get("tenant").tenantId,
        c.req.param("keyId"),
        new Date().toISOString(),
      );
      if (outcome === "not_found") throw errors.notFound("API key");
      if (outcome === "last_admin_key") {
        throw new AppError(
          "conflict",
          "The last active admin key cannot be revoked; create another admin key first.",
        );
      }
      // Its tokens stop on the thread's HTTP routes now in this isolate, within a few seconds in any other.
      if (outcome === "revoked") invalidateLaunchStanding(c.get("tenant").tenantId);
      // Sockets opened with the key's private launches close 4403 within the minute: the round is recorded before
      // this answers, also on a repeat (one whose first answer was an error), and merges with one still pending.
      await recheckTenantSockets(c.env, c.get("tenant").tenantId);
      return c.body(null, 204);
    },
  );
