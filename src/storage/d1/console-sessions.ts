// SQL for console sessions (docs/api.md). Every statement binds tenant_id, except the look-up by session id that runs
// before the tenant is known and the job's deletion of expired rows.
import { z } from "zod";
import { API_KEY_SCOPES, type ApiKeyScope, TENANT_STATUSES, type TenantStatus } from "../../shared/api";

export interface NewConsoleSession {
  tenantId: string;
  id: string;
  apiKeyId: string;
  digest: string;
  createdAt: string;
  expiresAt: string;
}

/** A session with what decides whether it still stands: its key and its tenant, as they are now. */
export interface ConsoleSessionRecord {
  tenantId: string;
  tenantName: string;
  tenantStatus: TenantStatus;
  id: string;
  apiKeyId: string;
  scope: ApiKeyScope;
  digest: string;
  expiresAt: string;
  revokedAt: string | null;
  keyRevokedAt: string | null;
}

const sessionRow = z
  .object({
    tenant_id: z.string(),
    tenant_name: z.string(),
    tenant_status: z.enum(TENANT_STATUSES),
    id: z.string(),
    api_key_id: z.string(),
    scope: z.enum(API_KEY_SCOPES),
    digest: z.string(),
    expires_at: z.string(),
    revoked_at: z.string().nullable(),
    key_revoked_at: z.string().nullable(),
  })
  .transform(
    (r): ConsoleSessionRecord => ({
      tenantId: r.tenant_id,
      tenantName: r.tenant_name,
      tenantStatus: r.tenant_status,
      id: r.id,
      apiKeyId: r.api_key_id,
      scope: r.scope,
      digest: r.digest,
      expiresAt: r.expires_at,
      revokedAt: r.revoked_at,
      keyRevokedAt: r.key_revoked_at,
    }),
  );

export async function insertConsoleSession(db: D1Database, session: NewConsoleSession): Promise<void> {
  await db
    .prepare(
      `INSERT INTO console_sessions (tenant_id, id, api_key_id, digest, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      session.tenantId,
      session.id,
      session.apiKeyId,
      session.digest,
      session.createdAt,
      session.expiresAt,
    )
    .run();
}

/**
 * The credential look-up: by session id alone, because the cookie is what names the tenant. Callers must verify the
 * secret against `digest` before trusting `tenantId`. The key and tenant are joined in, so each request sees a
 * revocation or a disabled tenant at once.
 */
export async function findConsoleSessionForAuthentication(
  db: D1Database,
  id: string,
): Promise<ConsoleSessionRecord | null> {
  const row = await db
    .prepare(
      `SELECT s.tenant_id, t.name AS tenant_name, t.status AS tenant_status, s.id, s.api_key_id, k.scope, s.digest,
         s.expires_at, s.revoked_at, k.revoked_at AS key_revoked_at
       FROM console_sessions s
         JOIN api_keys k ON k.tenant_id = s.tenant_id AND k.id = s.api_key_id
         JOIN tenants t ON t.id = s.tenant_id
       WHERE s.id = ?`,
    )
    .bind(id)
    .first();
  return row === null ? null : sessionRow.parse(row);
}

/** Signs a session out; idempotent. */
export async function revokeConsoleSession(
  db: D1Database,
  tenantId: string,
  id: string,
  at: string,
): Promise<void> {
  await db
    .prepare(
      "UPDATE console_sessions SET revoked_at = COALESCE(revoked_at, ?) WHERE tenant_id = ? AND id = ?",
    )
    .bind(at, tenantId, id)
    .run();
}

/** Deletes sessions that expired before `before` (whoever's: they authenticate no one); how many went. */
export async function deleteExpiredConsoleSessions(db: D1Database, before: string): Promise<number> {
  const result = await db.prepare("DELETE FROM console_sessions WHERE expires_at < ?").bind(before).run();
  return result.meta.changes;
}
