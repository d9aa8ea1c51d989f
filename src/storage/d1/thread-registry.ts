// SQL for the `threads` registry: which tenant, agent, environment and subject own a launched thread.

import type { Environment } from "../../control/deployment-store";
import type { TenantStatus } from "../../shared/api";

export interface ThreadRecord {
  tenantId: string;
  id: string;
  agentId: string;
  environment: Environment;
  subject: string;
  subjectKind: "visitor" | "user";
  createdAt: string;
  deletedAt: string | null;
  /** The latest private launch's context variables as canonical JSON; null when it carried none. */
  context: string | null;
  /** The latest private launch's tool policy as canonical JSON (docs/tools.md#tool-policy); null when it carried none. */
  toolPolicy: string | null;
  /** Grows by one with every change of `context` or `toolPolicy`; 0 while no launch ever set either. */
  contextVersion: number;
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
  context: string | null;
  tool_policy: string | null;
  context_version: number;
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
  context: row.context,
  // Absent from the reads that do not select it (they never need it).
  toolPolicy: row.tool_policy ?? null,
  contextVersion: row.context_version,
});

/** A new thread's row; a context or tool policy given here is its version 1. */
export async function insertThread(
  db: D1Database,
  record: Omit<ThreadRecord, "deletedAt" | "context" | "toolPolicy" | "contextVersion"> & {
    context?: string | null;
    toolPolicy?: string | null;
  },
): Promise<void> {
  const context = record.context ?? null;
  const toolPolicy = record.toolPolicy ?? null;
  await db
    .prepare(
      `INSERT INTO threads (tenant_id, id, agent_id, environment, subject, subject_kind, created_at, context,
         tool_policy, context_version)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      record.tenantId,
      record.id,
      record.agentId,
      record.environment,
      record.subject,
      record.subjectKind,
      record.createdAt,
      context,
      toolPolicy,
      context === null && toolPolicy === null ? 0 : 1,
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
      `SELECT tenant_id, id, agent_id, environment, subject, subject_kind, created_at, deleted_at, context,
         tool_policy, context_version
       FROM threads WHERE tenant_id = ? AND id = ?`,
    )
    .bind(tenantId, threadId)
    .first<ThreadRow>();
  return row === null ? null : fromRow(row);
}

/**
 * Replaces a live thread's context and tool policy (null clears either); the new version, or null when no live row
 * matched.
 */
export async function replaceThreadContext(
  db: D1Database,
  tenantId: string,
  threadId: string,
  next: { context: string | null; toolPolicy: string | null },
): Promise<number | null> {
  const row = await db
    .prepare(
      `UPDATE threads SET context = ?, tool_policy = ?, context_version = context_version + 1
       WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL
       RETURNING context_version`,
    )
    .bind(next.context, next.toolPolicy, tenantId, threadId)
    .first<{ context_version: number }>();
  return row === null ? null : row.context_version;
}

/**
 * Zero retention's idle purge: drops a thread's context variables (docs/privacy.md#zero-retention). The version is
 * kept, so no token's claim becomes newer than the object's copy; a later launch with context sets the next version.
 * The tool policy stays: it says nothing about the person, and dropping it would widen what the model may call.
 */
export async function clearThreadContext(db: D1Database, tenantId: string, threadId: string): Promise<void> {
  await db
    .prepare("UPDATE threads SET context = NULL WHERE tenant_id = ? AND id = ? AND context IS NOT NULL")
    .bind(tenantId, threadId)
    .run();
}

/** A live thread's context, tool policy and their version, for the thread object catching up; null for no live row. */
export async function findThreadContext(
  db: D1Database,
  tenantId: string,
  threadId: string,
): Promise<{ context: string | null; toolPolicy: string | null; contextVersion: number } | null> {
  const row = await db
    .prepare(
      `SELECT context, tool_policy, context_version FROM threads
       WHERE tenant_id = ? AND id = ? AND deleted_at IS NULL`,
    )
    .bind(tenantId, threadId)
    .first<{ context: string | null; tool_policy: string | null; context_version: number }>();
  return row === null
    ? null
    : { context: row.context, toolPolicy: row.tool_policy, contextVersion: row.context_version };
}

/** A thread's row with its tenant's status, for the launch-token gate: one read answers both. */
export async function findThreadAndTenantStatus(
  db: D1Database,
  tenantId: string,
  threadId: string,
): Promise<(ThreadRecord & { tenantStatus: TenantStatus }) | null> {
  const row = await db
    .prepare(
      `SELECT threads.tenant_id, threads.id, threads.agent_id, threads.environment, threads.subject,
              threads.subject_kind, threads.created_at, threads.deleted_at,
              threads.context, threads.tool_policy, threads.context_version, tenants.status AS tenant_status
       FROM threads JOIN tenants ON tenants.id = threads.tenant_id
       WHERE threads.tenant_id = ? AND threads.id = ?`,
    )
    .bind(tenantId, threadId)
    .first<ThreadRow & { tenant_status: TenantStatus }>();
  return row === null ? null : { ...fromRow(row), tenantStatus: row.tenant_status };
}

/** A page of a tenant's live threads marked active at or after `since`, in (active_at, id) order. */
export async function listActiveThreads(
  db: D1Database,
  tenantId: string,
  page: { since: string; limit: number; after?: { activeAt: string; id: string } },
): Promise<(ThreadRecord & { activeAt: string })[]> {
  const after = page.after ?? { activeAt: page.since, id: "" };
  const { results } = await db
    .prepare(
      `SELECT tenant_id, id, agent_id, environment, subject, subject_kind, created_at, deleted_at, active_at
       FROM threads
       WHERE tenant_id = ?1 AND active_at >= ?2 AND (active_at > ?3 OR (active_at = ?3 AND id > ?4))
         AND deleted_at IS NULL
       ORDER BY active_at, id LIMIT ?5`,
    )
    .bind(tenantId, page.since, after.activeAt, after.id, page.limit)
    .all<ThreadRow & { active_at: string }>();
  return results.map((row) => ({ ...fromRow(row), activeAt: row.active_at }));
}

/**
 * Erasure's registry step: the row stays as a tombstone (tokens for the thread are refused from here on, late
 * projections write nothing) but keeps no subject, no context variables and no tool policy, and the thread's pin row
 * goes.
 * `subject` is NOT NULL, so an erased thread's is the empty string, which no verified claim can carry. Idempotent.
 */
export async function eraseThreadRecord(db: D1Database, tenantId: string, threadId: string, at: string) {
  await db.batch([
    db
      .prepare(
        "UPDATE threads SET deleted_at = COALESCE(deleted_at, ?), subject = '', context = NULL, tool_policy = NULL WHERE tenant_id = ? AND id = ?",
      )
      .bind(at, tenantId, threadId),
    db.prepare("DELETE FROM thread_pins WHERE tenant_id = ? AND thread_id = ?").bind(tenantId, threadId),
  ]);
}
