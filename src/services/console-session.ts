// The console's sign-in (docs/api.md): an API key exchanged once for a cookie session, read back after a reload, and
// ended. The key itself is never stored; the session holds only its key's id.
import { consoleCsrfToken, consoleSessionDigest, generateConsoleSession } from "../auth/console-sessions";
import { AppError, fromDatabase } from "../errors";
import { deploymentStoreOf } from "../http/store";
import { INVALID_API_KEY_MESSAGE, verifyApiKey } from "../http/tenant-auth";
import { CONSOLE_SESSION_SECONDS, type ConsoleSessionResponse } from "../shared/console-api";
import {
  type ConsoleSessionRecord,
  insertConsoleSession,
  revokeConsoleSession,
} from "../storage/d1/console-sessions";

/** What the session routes answer: the tenant, the key's scope, and the CSRF token the console sends back. */
export async function consoleSessionBody(
  env: Env,
  session: Pick<ConsoleSessionRecord, "tenantId" | "tenantName" | "id" | "apiKeyId" | "scope" | "expiresAt">,
): Promise<ConsoleSessionResponse> {
  return {
    tenantId: session.tenantId,
    tenantName: session.tenantName,
    keyId: session.apiKeyId,
    scope: session.scope,
    csrfToken: await consoleCsrfToken(env.API_KEY_PEPPER, session.id),
    expiresAt: session.expiresAt,
  };
}

/** A new session: the cookie's value (its only copy of the secret) and the body the sign-in answers. */
export interface ConsoleSignIn {
  cookieValue: string;
  body: ConsoleSessionResponse;
}

/**
 * Starts a session for `apiKey`, or null when the key does not verify (the caller counts that failure against the
 * client's network). A key whose tenant is gone gets the same 401, uncounted.
 */
export async function signInToConsole(env: Env, apiKey: string): Promise<ConsoleSignIn | null> {
  const principal = await fromDatabase(verifyApiKey(env, apiKey));
  if (principal === null) return null;
  const tenant = await fromDatabase(deploymentStoreOf(env).getTenant(principal.tenantId));
  if (tenant === null) throw new AppError("unauthenticated", INVALID_API_KEY_MESSAGE);
  const generated = generateConsoleSession();
  const now = Date.now();
  const expiresAt = new Date(now + CONSOLE_SESSION_SECONDS * 1000).toISOString();
  await fromDatabase(
    insertConsoleSession(env.DB, {
      tenantId: principal.tenantId,
      id: generated.id,
      apiKeyId: principal.apiKeyId,
      digest: await consoleSessionDigest(env.API_KEY_PEPPER, generated.secret),
      createdAt: new Date(now).toISOString(),
      expiresAt,
    }),
  );
  const session = {
    tenantId: principal.tenantId,
    tenantName: tenant.name,
    id: generated.id,
    apiKeyId: principal.apiKeyId,
    scope: principal.scope,
    expiresAt,
  };
  return { cookieValue: generated.value, body: await consoleSessionBody(env, session) };
}

/** Signs out: the session no longer authenticates anything, whatever cookie still names it. */
export async function signOutOfConsole(env: Env, session: ConsoleSessionRecord): Promise<void> {
  await fromDatabase(revokeConsoleSession(env.DB, session.tenantId, session.id, new Date().toISOString()));
}
