// SQL for erasure by subject (docs/privacy.md): the subject's threads, the erasure jobs and their receipts, and the
// revoked visitors. Nothing here stores a subject id; jobs and revocations are keyed by HMACs of it.
import { z } from "zod";
import type { Environment } from "../../control/deployment-store";
import { eraseSessionStatements } from "./sessions-repository";
import { mirrorTombstone, projectionWriteDbs } from "./shards";

export type ErasureScope = { kind: "subject" | "me"; agentId?: string };

export interface ErasureJob {
  tenantId: string;
  id: string;
  scope: ErasureScope;
  status: "pending" | "completed";
  threadIds: string[];
  done: number;
  createdAt: string;
  erasedAt: string | null;
  receipt: string | null;
  /** SHA-256s of the attachment objects the job's erasures deleted so far (docs/privacy.md#attachments). */
  attachments: string[];
}

const scopeSchema = z.object({
  kind: z.enum(["subject", "me"]),
  agentId: z.string().optional(),
});

const jobRow = z
  .object({
    tenant_id: z.string(),
    id: z.string(),
    scope_json: z.string(),
    status: z.enum(["pending", "completed"]),
    thread_ids: z.string(),
    done: z.number().int(),
    created_at: z.string(),
    erased_at: z.string().nullable(),
    receipt: z.string().nullable(),
    attachments: z.string(),
  })
  .transform(
    (row): ErasureJob => ({
      tenantId: row.tenant_id,
      id: row.id,
      scope: scopeSchema.parse(JSON.parse(row.scope_json)),
      status: row.status,
      threadIds: z.array(z.string()).parse(JSON.parse(row.thread_ids)),
      done: row.done,
      createdAt: row.created_at,
      erasedAt: row.erased_at,
      receipt: row.receipt,
      attachments: z.array(z.string()).parse(JSON.parse(row.attachments)),
    }),
  );

const JOB_COLUMNS =
  "tenant_id, id, scope_json, status, thread_ids, done, created_at, erased_at, receipt, attachments";

/** The ids of a subject's live threads (all agents, or one), oldest first. */
export async function subjectThreadIds(
  db: D1Database,
  tenantId: string,
  subject: string,
  agentId: string | undefined,
): Promise<string[]> {
  const statement =
    agentId === undefined
      ? db
          .prepare(
            `SELECT id FROM threads WHERE tenant_id = ? AND subject = ? AND deleted_at IS NULL
             ORDER BY created_at, id`,
          )
          .bind(tenantId, subject)
      : db
          .prepare(
            `SELECT id FROM threads WHERE tenant_id = ? AND subject = ? AND agent_id = ? AND deleted_at IS NULL
             ORDER BY created_at, id`,
          )
          .bind(tenantId, subject, agentId);
  const { results } = await statement.all<{ id: string }>();
  return results.map((row) => row.id);
}

/** The newest job for a scope hash, pending or completed. */
export async function latestJobForScope(
  db: D1Database,
  tenantId: string,
  scopeHash: string,
): Promise<ErasureJob | null> {
  const row = await db
    .prepare(
      `SELECT ${JOB_COLUMNS} FROM erasures WHERE tenant_id = ? AND scope_hash = ?
       ORDER BY created_at DESC, id DESC LIMIT 1`,
    )
    .bind(tenantId, scopeHash)
    .first();
  return row === null ? null : jobRow.parse(row);
}

export async function findJob(db: D1Database, tenantId: string, id: string): Promise<ErasureJob | null> {
  const row = await db
    .prepare(`SELECT ${JOB_COLUMNS} FROM erasures WHERE tenant_id = ? AND id = ?`)
    .bind(tenantId, id)
    .first();
  return row === null ? null : jobRow.parse(row);
}

export async function insertJob(
  db: D1Database,
  job: Pick<ErasureJob, "tenantId" | "id" | "scope" | "threadIds" | "createdAt"> & { scopeHash: string },
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO erasures (tenant_id, id, scope_hash, scope_json, status, thread_ids, done, created_at)
       VALUES (?, ?, ?, ?, 'pending', ?, 0, ?)
       ON CONFLICT DO NOTHING`,
    )
    .bind(
      job.tenantId,
      job.id,
      job.scopeHash,
      JSON.stringify(job.scope),
      JSON.stringify(job.threadIds),
      job.createdAt,
    )
    .run();
}

/**
 * The D1 side of erasing these threads, in one transaction: each registry row becomes a subject-less tombstone
 * (as `eraseThreadRecord`), its pin and projected rows go (as `eraseSessionRows`; deleting `agent_messages` rows is
 * also what removes them from any search index kept on that table by triggers).
 */
export async function eraseThreadsRows(
  env: Env,
  tenantId: string,
  threadIds: readonly string[],
  at: string,
): Promise<void> {
  if (threadIds.length === 0) return;
  const shards = await projectionWriteDbs(env, tenantId);
  const db = env.DB;
  const statements: D1PreparedStatement[] = [];
  for (const threadId of threadIds) {
    statements.push(
      db
        .prepare(
          "UPDATE threads SET deleted_at = COALESCE(deleted_at, ?), subject = '', context = NULL WHERE tenant_id = ? AND id = ?",
        )
        .bind(at, tenantId, threadId),
      db.prepare("DELETE FROM thread_pins WHERE tenant_id = ? AND thread_id = ?").bind(tenantId, threadId),
    );
    // Shard `DB` is this database: its projected rows go in the same transaction as the tombstones.
    if (shards.some((s) => s.shard === "DB"))
      statements.push(...eraseSessionStatements(db, tenantId, threadId));
  }
  await db.batch(statements);
  // Then each other shard, one transaction each: the threads' mirrors become tombstones and their rows go.
  for (const { shard, db: shardDb } of shards) {
    if (shard === "DB") continue;
    await shardDb.batch(
      threadIds.flatMap((threadId) => [
        mirrorTombstone(shardDb, { tenantId, threadId }, at),
        ...eraseSessionStatements(shardDb, tenantId, threadId),
      ]),
    );
  }
}

/** Records how many of the job's threads are fully erased; never moves backwards. */
export async function recordProgress(db: D1Database, tenantId: string, id: string, done: number) {
  await db
    .prepare("UPDATE erasures SET done = MAX(done, ?) WHERE tenant_id = ? AND id = ? AND status = 'pending'")
    .bind(done, tenantId, id)
    .run();
}

/**
 * Adds the SHA-256s of attachment objects a batch's erasures deleted to the job's list (sorted, each once), before the
 * batch counts as done: a batch done again after a cut-off adds what its repeat deleted to what the first try did.
 */
export async function recordReleasedAttachments(
  db: D1Database,
  tenantId: string,
  id: string,
  sha256s: readonly string[],
): Promise<void> {
  if (sha256s.length === 0) return;
  await db
    .prepare(
      `UPDATE erasures SET attachments = (
         SELECT json_group_array(value) FROM (
           SELECT value FROM json_each(erasures.attachments) UNION SELECT value FROM json_each(?) ORDER BY value))
       WHERE tenant_id = ? AND id = ? AND status = 'pending'`,
    )
    .bind(JSON.stringify(sha256s), tenantId, id)
    .run();
}

/** Completes a job with its receipt; a job already completed keeps the receipt it has. */
export async function completeJob(
  db: D1Database,
  job: { tenantId: string; id: string; erasedAt: string; receipt: string },
): Promise<void> {
  await db
    .prepare(
      `UPDATE erasures SET status = 'completed', done = json_array_length(thread_ids), erased_at = ?, receipt = ?
       WHERE tenant_id = ? AND id = ? AND status = 'pending'`,
    )
    .bind(job.erasedAt, job.receipt, job.tenantId, job.id)
    .run();
}

/** Refuses the visitor's tokens from now until `expiresAt` (the longest a token issued before now can live). */
export async function revokeVisitor(
  db: D1Database,
  tenantId: string,
  visitorHash: string,
  at: string,
  expiresAt: string,
): Promise<void> {
  await db.batch([
    // The tenant's revocations that outlived every token they refused go at the same time.
    db.prepare("DELETE FROM revoked_visitors WHERE tenant_id = ? AND expires_at <= ?").bind(tenantId, at),
    db
      .prepare(
        `INSERT INTO revoked_visitors (tenant_id, visitor_hash, revoked_at, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (tenant_id, visitor_hash) DO UPDATE SET revoked_at = excluded.revoked_at,
           expires_at = excluded.expires_at`,
      )
      .bind(tenantId, visitorHash, at, expiresAt),
  ]);
}

export async function visitorRevoked(
  db: D1Database,
  tenantId: string,
  visitorHash: string,
  now: string,
): Promise<boolean> {
  const row = await db
    .prepare(
      "SELECT 1 AS hit FROM revoked_visitors WHERE tenant_id = ? AND visitor_hash = ? AND expires_at > ?",
    )
    .bind(tenantId, visitorHash, now)
    .first();
  return row !== null;
}

/** The registry rows (live or tombstoned) of these threads: what names each one's object. */
export async function threadAddresses(
  db: D1Database,
  tenantId: string,
  threadIds: readonly string[],
): Promise<{ id: string; agentId: string; environment: Environment }[]> {
  if (threadIds.length === 0) return [];
  const { results } = await db
    .prepare(
      `SELECT id, agent_id, environment FROM threads
       WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))`,
    )
    .bind(tenantId, JSON.stringify(threadIds))
    .all<{ id: string; agent_id: string; environment: Environment }>();
  return results.map((row) => ({ id: row.id, agentId: row.agent_id, environment: row.environment }));
}
