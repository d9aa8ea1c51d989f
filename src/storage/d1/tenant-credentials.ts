// SQL for a tenant's API keys and encrypted provider secrets. Every statement binds tenant_id, except the one
// credential look-up by key id that runs before the tenant is known.
import { z } from "zod";
import { API_KEY_SCOPES, type ApiKeyScope } from "../../shared/api";

export interface ApiKeyRecord {
  tenantId: string;
  id: string;
  name: string;
  scope: ApiKeyScope;
  digest: string;
  prefix: string;
  last4: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface TenantSecretRecord {
  tenantId: string;
  alias: string;
  ciphertext: string;
  iv: string;
  keyId: string;
  createdAt: string;
  updatedAt: string;
}

export type TenantSecretSummary = Pick<TenantSecretRecord, "alias" | "createdAt" | "updatedAt">;

const apiKeyRow = z
  .object({
    tenant_id: z.string(),
    id: z.string(),
    name: z.string(),
    scope: z.enum(API_KEY_SCOPES),
    digest: z.string(),
    prefix: z.string(),
    last4: z.string(),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
  })
  .transform(
    (row): ApiKeyRecord => ({
      tenantId: row.tenant_id,
      id: row.id,
      name: row.name,
      scope: row.scope,
      digest: row.digest,
      prefix: row.prefix,
      last4: row.last4,
      createdAt: row.created_at,
      revokedAt: row.revoked_at,
    }),
  );

const authRow = z.object({
  tenant_id: z.string(),
  id: z.string(),
  scope: z.enum(API_KEY_SCOPES),
  digest: z.string(),
  revoked_at: z.string().nullable(),
  tenant_status: z.enum(["active", "disabled"]),
});

const secretRow = z
  .object({
    tenant_id: z.string(),
    alias: z.string(),
    ciphertext: z.string(),
    iv: z.string(),
    key_id: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .transform(
    (row): TenantSecretRecord => ({
      tenantId: row.tenant_id,
      alias: row.alias,
      ciphertext: row.ciphertext,
      iv: row.iv,
      keyId: row.key_id,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }),
  );

const secretSummaryRow = z
  .object({ alias: z.string(), created_at: z.string(), updated_at: z.string() })
  .transform(
    (row): TenantSecretSummary => ({
      alias: row.alias,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    }),
  );

const API_KEY_COLUMNS = "tenant_id, id, name, scope, digest, prefix, last4, created_at, revoked_at";

export async function insertApiKey(db: D1Database, key: Omit<ApiKeyRecord, "revokedAt">): Promise<void> {
  await db
    .prepare(
      `INSERT INTO api_keys (tenant_id, id, name, scope, digest, prefix, last4, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(key.tenantId, key.id, key.name, key.scope, key.digest, key.prefix, key.last4, key.createdAt)
    .run();
}

/**
 * The credential look-up: by key id alone, because the key is what names the tenant. Callers must verify the
 * secret against `digest` before trusting `tenantId`.
 */
export async function findApiKeyForAuthentication(
  db: D1Database,
  id: string,
): Promise<z.output<typeof authRow> | null> {
  const row = await db
    .prepare(
      `SELECT k.tenant_id, k.id, k.scope, k.digest, k.revoked_at, t.status AS tenant_status
       FROM api_keys k JOIN tenants t ON t.id = k.tenant_id
       WHERE k.id = ?`,
    )
    .bind(id)
    .first();
  return row === null ? null : authRow.parse(row);
}

export async function getApiKey(db: D1Database, tenantId: string, id: string): Promise<ApiKeyRecord | null> {
  const row = await db
    .prepare(`SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE tenant_id = ? AND id = ?`)
    .bind(tenantId, id)
    .first();
  return row === null ? null : apiKeyRow.parse(row);
}

/** Oldest first; `after` is the (created_at, id) of the last key of the previous page. */
export async function listApiKeys(
  db: D1Database,
  tenantId: string,
  page: { limit: number; after?: { createdAt: string; id: string } },
): Promise<{ items: ApiKeyRecord[]; hasMore: boolean }> {
  const after = page.after;
  const statement =
    after === undefined
      ? db
          .prepare(
            `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id LIMIT ?`,
          )
          .bind(tenantId, page.limit + 1)
      : db
          .prepare(
            `SELECT ${API_KEY_COLUMNS} FROM api_keys
             WHERE tenant_id = ? AND (created_at > ? OR (created_at = ? AND id > ?))
             ORDER BY created_at, id LIMIT ?`,
          )
          .bind(tenantId, after.createdAt, after.createdAt, after.id, page.limit + 1);
  const { results } = await statement.all();
  const items = results.map((row) => apiKeyRow.parse(row));
  return { items: items.slice(0, page.limit), hasMore: items.length > page.limit };
}

export type RevokeOutcome = "revoked" | "already_revoked" | "not_found" | "last_admin_key";

/**
 * Revokes a key unless it is the tenant's last active admin key. One guarded UPDATE, so two concurrent
 * revocations cannot both remove the last two admin keys.
 */
export async function revokeApiKey(
  db: D1Database,
  tenantId: string,
  id: string,
  now: string,
): Promise<RevokeOutcome> {
  const result = await db
    .prepare(
      `UPDATE api_keys SET revoked_at = ?
       WHERE tenant_id = ? AND id = ? AND revoked_at IS NULL
         AND (scope <> 'admin' OR EXISTS (
           SELECT 1 FROM api_keys other
           WHERE other.tenant_id = ? AND other.id <> ? AND other.scope = 'admin' AND other.revoked_at IS NULL))`,
    )
    .bind(now, tenantId, id, tenantId, id)
    .run();
  if (result.meta.changes > 0) return "revoked";
  const existing = await getApiKey(db, tenantId, id);
  if (existing === null) return "not_found";
  return existing.revokedAt !== null ? "already_revoked" : "last_admin_key";
}

/** Creates or replaces a secret; `created_at` survives a replacement. */
export async function upsertTenantSecret(
  db: D1Database,
  secret: Omit<TenantSecretRecord, "createdAt" | "updatedAt">,
  now: string,
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO tenant_secrets (tenant_id, alias, ciphertext, iv, key_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, alias) DO UPDATE SET
         ciphertext = excluded.ciphertext, iv = excluded.iv, key_id = excluded.key_id,
         updated_at = excluded.updated_at`,
    )
    .bind(secret.tenantId, secret.alias, secret.ciphertext, secret.iv, secret.keyId, now, now)
    .run();
}

export async function getTenantSecret(
  db: D1Database,
  tenantId: string,
  alias: string,
): Promise<TenantSecretRecord | null> {
  const row = await db
    .prepare(
      `SELECT tenant_id, alias, ciphertext, iv, key_id, created_at, updated_at
       FROM tenant_secrets WHERE tenant_id = ? AND alias = ?`,
    )
    .bind(tenantId, alias)
    .first();
  return row === null ? null : secretRow.parse(row);
}

export async function deleteTenantSecret(db: D1Database, tenantId: string, alias: string): Promise<boolean> {
  const result = await db
    .prepare("DELETE FROM tenant_secrets WHERE tenant_id = ? AND alias = ?")
    .bind(tenantId, alias)
    .run();
  return result.meta.changes > 0;
}

/** Aliases in order; `after` is the last alias of the previous page. */
export async function listTenantSecrets(
  db: D1Database,
  tenantId: string,
  page: { limit: number; after?: string },
): Promise<{ items: TenantSecretSummary[]; hasMore: boolean }> {
  const statement =
    page.after === undefined
      ? db
          .prepare(
            "SELECT alias, created_at, updated_at FROM tenant_secrets WHERE tenant_id = ? ORDER BY alias LIMIT ?",
          )
          .bind(tenantId, page.limit + 1)
      : db
          .prepare(
            `SELECT alias, created_at, updated_at FROM tenant_secrets
             WHERE tenant_id = ? AND alias > ? ORDER BY alias LIMIT ?`,
          )
          .bind(tenantId, page.after, page.limit + 1);
  const { results } = await statement.all();
  const items = results.map((row) => secretSummaryRow.parse(row));
  return { items: items.slice(0, page.limit), hasMore: items.length > page.limit };
}
