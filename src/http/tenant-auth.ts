// Tenant authentication: `Authorization: Bearer sk_…`, or the console's session cookie when no Authorization header is
// sent (src/http/console-auth.ts), becomes a verified TenantPrincipal, or one uniform 401.
import { createMiddleware } from "hono/factory";
import { apiKeyDigest, parseApiKey, verifyApiKeySecret } from "../auth/api-keys";
import { AppError } from "../errors";
import { constantTimeEqual } from "../shared/bytes";
import { findApiKeyForAuthentication } from "../storage/d1/tenant-credentials";
import { bearerToken } from "./bearer";
import { consoleCookie, consolePrincipal } from "./console-auth";
import type { AppEnv, TenantPrincipal } from "./context";

const MAX_AUTHORIZATION_LENGTH = 512;

// Unknown ids still pay for one digest and one comparison, so they answer in about the same time as wrong secrets.
const UNKNOWN_KEY_DIGEST = "0".repeat(64);

/** Verifies an API key; `null` for every failure (missing, malformed, unknown, revoked, wrong secret, tenant off). */
export async function authenticateApiKey(
  env: Env,
  authorization: string | undefined,
): Promise<TenantPrincipal | null> {
  const token = bearerToken(authorization, MAX_AUTHORIZATION_LENGTH);
  return token === null ? null : verifyApiKey(env, token);
}

/** The same check for a key presented on its own (the console's sign-in body). */
export async function verifyApiKey(env: Env, key: string): Promise<TenantPrincipal | null> {
  const parsed = parseApiKey(key);
  if (parsed === null) return null;
  const record = await findApiKeyForAuthentication(env.DB, parsed.id);
  if (record === null) {
    constantTimeEqual(await apiKeyDigest(env.API_KEY_PEPPER, parsed.secret), UNKNOWN_KEY_DIGEST);
    return null;
  }
  const secretMatches = await verifyApiKeySecret(env.API_KEY_PEPPER, parsed.secret, record.digest);
  if (!secretMatches || record.revoked_at !== null || record.tenant_status !== "active") return null;
  return { kind: "tenant", tenantId: record.tenant_id, apiKeyId: record.id, scope: record.scope };
}

export const INVALID_API_KEY_MESSAGE = "A valid API key is required.";

/**
 * Sets `c.var.tenant`; every failure is the same 401 so the response tells nothing about the key. The console cookie
 * counts only when no Authorization header is sent: a request never mixes the two.
 */
export const tenantAuth = createMiddleware<AppEnv>(async (c, next) => {
  const authorization = c.req.header("Authorization");
  const cookie = authorization === undefined ? consoleCookie(c) : undefined;
  const principal =
    cookie === undefined ? await authenticateApiKey(c.env, authorization) : await consolePrincipal(c, cookie);
  if (principal === null) throw new AppError("unauthenticated", INVALID_API_KEY_MESSAGE);
  c.set("tenant", principal);
  await next();
});

const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** A `read` key may look but not change anything: every non-read method needs an `admin` key. */
export const requireAdminForWrites = createMiddleware<AppEnv>(async (c, next) => {
  if (!READ_METHODS.has(c.req.method) && c.get("tenant").scope !== "admin") {
    throw new AppError("forbidden", "This API key is read-only.");
  }
  await next();
});
