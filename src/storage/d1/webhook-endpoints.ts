// SQL for a tenant's event webhook endpoints (docs/webhooks.md). Every statement binds tenant_id; the secret stays sealed.
import { z } from "zod";
import { EVENT_TYPES, type EventType } from "../../shared/webhooks-api";
import { parseJsonColumn } from "../json-column";

export interface WebhookEndpointRecord {
  tenantId: string;
  id: string;
  url: string;
  events: EventType[];
  description: string | null;
  secretCiphertext: string;
  secretIv: string;
  secretKeyId: string;
  createdAt: string;
  updatedAt: string;
}

const row = z
  .object({
    tenant_id: z.string(),
    id: z.string(),
    url: z.string(),
    events_json: z.string(),
    description: z.string().nullable(),
    secret_ciphertext: z.string(),
    secret_iv: z.string(),
    secret_key_id: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .transform(
    (r): WebhookEndpointRecord => ({
      tenantId: r.tenant_id,
      id: r.id,
      url: r.url,
      events: z.array(z.enum(EVENT_TYPES)).parse(parseJsonColumn(r.events_json)),
      description: r.description,
      secretCiphertext: r.secret_ciphertext,
      secretIv: r.secret_iv,
      secretKeyId: r.secret_key_id,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    }),
  );

const COLUMNS =
  "tenant_id, id, url, events_json, description, secret_ciphertext, secret_iv, secret_key_id, created_at, updated_at";

/** How many endpoints one tenant may have (the events object fans every event out to each). */
export const MAX_WEBHOOK_ENDPOINTS = 20;

export async function insertWebhookEndpoint(db: D1Database, e: WebhookEndpointRecord): Promise<void> {
  await db
    .prepare(`INSERT INTO webhook_endpoints (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .bind(
      e.tenantId,
      e.id,
      e.url,
      JSON.stringify(e.events),
      e.description,
      e.secretCiphertext,
      e.secretIv,
      e.secretKeyId,
      e.createdAt,
      e.updatedAt,
    )
    .run();
}

export async function countWebhookEndpoints(db: D1Database, tenantId: string): Promise<number> {
  const r = await db
    .prepare("SELECT COUNT(*) AS n FROM webhook_endpoints WHERE tenant_id = ?")
    .bind(tenantId)
    .first();
  return z.object({ n: z.number() }).parse(r).n;
}

export async function getWebhookEndpoint(
  db: D1Database,
  tenantId: string,
  id: string,
): Promise<WebhookEndpointRecord | null> {
  const r = await db
    .prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE tenant_id = ? AND id = ?`)
    .bind(tenantId, id)
    .first();
  return r === null ? null : row.parse(r);
}

/** Ordered by id; `after` is the last id of the previous page. At most `MAX_WEBHOOK_ENDPOINTS` exist. */
export async function listWebhookEndpoints(
  db: D1Database,
  tenantId: string,
  page: { limit: number; after?: string } = { limit: MAX_WEBHOOK_ENDPOINTS },
): Promise<{ items: WebhookEndpointRecord[]; hasMore: boolean }> {
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?`)
    .bind(tenantId, page.after ?? "", page.limit + 1)
    .all();
  const items = results.map((r) => row.parse(r));
  return { items: items.slice(0, page.limit), hasMore: items.length > page.limit };
}

export async function updateWebhookEndpoint(
  db: D1Database,
  tenantId: string,
  id: string,
  patch: {
    url: string;
    events: EventType[];
    description: string | null;
    secret?: { ciphertext: string; iv: string; keyId: string };
    updatedAt: string;
  },
): Promise<boolean> {
  const result = await db
    .prepare(
      `UPDATE webhook_endpoints SET url = ?, events_json = ?, description = ?,
         secret_ciphertext = COALESCE(?, secret_ciphertext), secret_iv = COALESCE(?, secret_iv),
         secret_key_id = COALESCE(?, secret_key_id), updated_at = ?
       WHERE tenant_id = ? AND id = ?`,
    )
    .bind(
      patch.url,
      JSON.stringify(patch.events),
      patch.description,
      patch.secret?.ciphertext ?? null,
      patch.secret?.iv ?? null,
      patch.secret?.keyId ?? null,
      patch.updatedAt,
      tenantId,
      id,
    )
    .run();
  return result.meta.changes > 0;
}

export async function deleteWebhookEndpoint(db: D1Database, tenantId: string, id: string): Promise<boolean> {
  const result = await db
    .prepare("DELETE FROM webhook_endpoints WHERE tenant_id = ? AND id = ?")
    .bind(tenantId, id)
    .run();
  return result.meta.changes > 0;
}
