// Tenant admin: the tenant's own API keys. Plaintext exists only in the creation response.
import { Hono } from "hono";
import { z } from "zod";
import { apiKeyDigest, generateApiKey } from "../auth/api-keys";
import { AppError, errors } from "../errors";
import type { AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import { type ApiKeyResponse, type CreatedApiKeyResponse, createApiKeyRequest } from "../shared/api";
import {
  type ApiKeyRecord,
  getApiKey,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
} from "../storage/d1/tenant-credentials";

function apiKeyView(key: ApiKeyRecord): ApiKeyResponse {
  return {
    id: key.id,
    name: key.name,
    scope: key.scope,
    prefix: key.prefix,
    last4: key.last4,
    createdAt: key.createdAt,
    revokedAt: key.revokedAt,
  };
}

/** Creates and stores a key; the returned plaintext must go to its owner once and nowhere else. */
export async function issueApiKey(
  env: Env,
  tenantId: string,
  input: { name: string; scope: "admin" | "read" },
  now = new Date(),
): Promise<CreatedApiKeyResponse> {
  const key = generateApiKey();
  const record: Omit<ApiKeyRecord, "revokedAt"> = {
    tenantId,
    id: key.id,
    name: input.name,
    scope: input.scope,
    digest: await apiKeyDigest(env.API_KEY_PEPPER, key.secret),
    prefix: key.prefix,
    last4: key.last4,
    createdAt: now.toISOString(),
  };
  await insertApiKey(env.DB, record);
  return { ...apiKeyView({ ...record, revokedAt: null }), apiKey: key.plaintext };
}

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
