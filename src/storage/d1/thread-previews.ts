// SQL for preview threads (docs/api.md): the registry row of a thread the console opened on a draft or a version, marked
// `preview = 1`, and its `thread_previews` row — what it previews and when the scheduled job erases it.
import { z } from "zod";
import type { Environment } from "../../control/deployment-store";

/** What a preview thread is bound to: exactly one of a draft revision or a published version. */
export type PreviewTarget = { draftRevision: number } | { version: number };

export interface PreviewRecord {
  tenantId: string;
  threadId: string;
  agentId: string;
  target: PreviewTarget;
  digest: string;
  createdAt: string;
  expiresAt: string;
}

const previewRow = z.object({
  tenant_id: z.string(),
  thread_id: z.string(),
  agent_id: z.string(),
  draft_revision: z.number().int().nullable(),
  version: z.number().int().nullable(),
  digest: z.string(),
  created_at: z.string(),
  expires_at: z.string(),
});

function fromRow(raw: unknown): PreviewRecord {
  const row = previewRow.parse(raw);
  return {
    tenantId: row.tenant_id,
    threadId: row.thread_id,
    agentId: row.agent_id,
    target:
      row.draft_revision !== null ? { draftRevision: row.draft_revision } : { version: row.version ?? 0 },
    digest: row.digest,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

/**
 * A new preview thread's registry row (`preview = 1`, so no rollup, usage or default list counts it) and its
 * preview row, in one transaction.
 */
export async function insertPreviewThread(
  db: D1Database,
  preview: PreviewRecord & { environment: Environment; subject: string },
): Promise<void> {
  const draftRevision = "draftRevision" in preview.target ? preview.target.draftRevision : null;
  const version = "version" in preview.target ? preview.target.version : null;
  await db.batch([
    db
      .prepare(
        `INSERT INTO threads (tenant_id, id, agent_id, environment, subject, subject_kind, created_at, context,
           context_version, preview)
         VALUES (?, ?, ?, ?, ?, 'user', ?, NULL, 0, 1)`,
      )
      .bind(
        preview.tenantId,
        preview.threadId,
        preview.agentId,
        preview.environment,
        preview.subject,
        preview.createdAt,
      ),
    db
      .prepare(
        `INSERT INTO thread_previews (tenant_id, thread_id, agent_id, draft_revision, version, digest, created_at,
           expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        preview.tenantId,
        preview.threadId,
        preview.agentId,
        draftRevision,
        version,
        preview.digest,
        preview.createdAt,
        preview.expiresAt,
      ),
  ]);
}

/** A live preview thread of the tenant's agent (not erased, not expired at `now`), or null. */
export async function findPreview(
  db: D1Database,
  tenantId: string,
  agentId: string,
  threadId: string,
  now: string,
): Promise<PreviewRecord | null> {
  const row = await db
    .prepare(
      `SELECT p.tenant_id, p.thread_id, p.agent_id, p.draft_revision, p.version, p.digest, p.created_at, p.expires_at
       FROM thread_previews p JOIN threads t ON t.tenant_id = p.tenant_id AND t.id = p.thread_id
       WHERE p.tenant_id = ? AND p.thread_id = ? AND p.agent_id = ? AND p.expires_at > ? AND t.deleted_at IS NULL`,
    )
    .bind(tenantId, threadId, agentId, now)
    .first();
  return row === null ? null : fromRow(row);
}

/**
 * Previews expired at `now`, oldest first, across tenants: the scheduled job erases them. A preview under a legal hold
 * (its own, or its subject's) is left out until the hold is lifted: holds bind previews too (docs/privacy.md).
 */
export async function expiredPreviews(db: D1Database, now: string, limit: number): Promise<PreviewRecord[]> {
  const { results } = await db
    .prepare(
      `SELECT p.tenant_id, p.thread_id, p.agent_id, p.draft_revision, p.version, p.digest, p.created_at, p.expires_at
       FROM thread_previews p WHERE p.expires_at <= ?
         AND NOT EXISTS (SELECT 1 FROM legal_holds h WHERE h.tenant_id = p.tenant_id
           AND ((h.scope = 'thread' AND h.target = p.thread_id)
             OR (h.scope = 'subject' AND h.target = (SELECT t.subject FROM threads t
               WHERE t.tenant_id = p.tenant_id AND t.id = p.thread_id))))
       ORDER BY p.expires_at LIMIT ?`,
    )
    .bind(now, limit)
    .all();
  return results.map(fromRow);
}

/** Forgets previews whose threads are erased. */
export async function deletePreviews(
  db: D1Database,
  tenantId: string,
  threadIds: readonly string[],
): Promise<void> {
  if (threadIds.length === 0) return;
  await db
    .prepare(
      "DELETE FROM thread_previews WHERE tenant_id = ? AND thread_id IN (SELECT value FROM json_each(?))",
    )
    .bind(tenantId, JSON.stringify(threadIds))
    .run();
}
