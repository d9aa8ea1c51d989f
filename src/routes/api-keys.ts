// Tenant admin: the tenant's own API keys. Plaintext exists only in the creation response.
import { Hono } from "hono";
import { z } from "zod";
import { AppError, errors } from "../errors";
import type { AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { apiKeyView, issueApiKey } from "../http/issue-api-key";
import { readJson } from "../http/json-body";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import { createApiKeyRequest } from "../shared/api";
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
  .post("/", async (c) => {
    const input = await readJson(c, createApiKeyRequest);
    return c.json(await issueApiKey(c.env, c.get("tenant").tenantId, input), 201);
  })
  .get("/", async (c) => {
    const page = await readPage(c, LIST);
    const after = page.after === undefined ? undefined : keyPosition(page.after);
    const tenantId = c.get("tenant").tenantId;
    const result = await listApiKeys(c.env.DB, tenantId, { limit: page.limit, ...(after ? { after } : {}) });
    const last = result.items.at(-1);
    const next = result.hasMore && last ? JSON.stringify([last.createdAt, last.id]) : undefined;
    return c.json(await pageBody(c, LIST, result.items.map(apiKeyView), next));
  })
  .get("/:keyId", async (c) => {
    const key = await getApiKey(c.env.DB, c.get("tenant").tenantId, c.req.param("keyId"));
    if (key === null) throw errors.notFound("API key");
    return c.json(apiKeyView(key));
  })
  .delete("/:keyId", async (c) => {
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
    return c.body(null, 204);
  });
