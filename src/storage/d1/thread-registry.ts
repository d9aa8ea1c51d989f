// SQL for the `threads` registry: which tenant, agent, environment and subject own a launched thread.
import type { Environment } from "../../control/deployment-store";

export interface ThreadRecord {
  tenantId: string;
  id: string;
  agentId: string;
  environment: Environment;
  subject: string;
  subjectKind: "visitor" | "user";
  createdAt: string;
  deletedAt: string | null;
}

interface ThreadRow {
  tenant_id: string;
  id: string;
  agent_id: string;
  environment: Environment;
  subject: string;
  subject_kind: "visitor" | "user";
  created_at: string;
  deleted_at: string | null;
}

const fromRow = (row: ThreadRow): ThreadRecord => ({
  tenantId: row.tenant_id,
  id: row.id,
  agentId: row.agent_id,
  environment: row.environment,
  subject: row.subject,
  subjectKind: row.subject_kind,
  createdAt: row.created_at,
  deletedAt: row.deleted_at,
});

export async function insertThread(db: D1Database, record: Omit<ThreadRecord, "deletedAt">): Promise<void> {
  await db
    .prepare(
      `INSERT INTO threads (tenant_id, id, agent_id, environment, subject, subject_kind, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      record.tenantId,
      record.id,
      record.agentId,
      record.environment,
      record.subject,
      record.subjectKind,
      record.createdAt,
    )
    .run();
}

export async function findThread(
  db: D1Database,
  tenantId: string,
  threadId: string,
): Promise<ThreadRecord | null> {
  const row = await db
    .prepare(
      `SELECT tenant_id, id, agent_id, environment, subject, subject_kind, created_at, deleted_at
       FROM threads WHERE tenant_id = ? AND id = ?`,
    )
    .bind(tenantId, threadId)
    .first<ThreadRow>();
  return row === null ? null : fromRow(row);
}

/**
 * Erasure's registry step: the row stays as a tombstone (tokens for the thread are refused from here on, late
 * projections write nothing) but keeps no subject, and the thread's pin row goes. `subject` is NOT NULL, so an
 * erased thread's is the empty string, which no verified claim can carry. Idempotent.
 */
export async function eraseThreadRecord(db: D1Database, tenantId: string, threadId: string, at: string) {
  await db.batch([
    db
      .prepare(
        "UPDATE threads SET deleted_at = COALESCE(deleted_at, ?), subject = '' WHERE tenant_id = ? AND id = ?",
      )
      .bind(at, tenantId, threadId),
    db.prepare("DELETE FROM thread_pins WHERE tenant_id = ? AND thread_id = ?").bind(tenantId, threadId),
  ]);
}
