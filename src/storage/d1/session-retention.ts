// SQL for the retention job over D1: a tenant's due sessions, and one session's messages past its agent's policy.
//
// The policy is stored on the session row at projection time (from the pinned version's `limits.retention`), so
// the job needs no artifact. It mirrors the thread's own rule: messages older than the max age, and everything
// older than the newest N messages, except entries of a run the projection still shows as live. It never
// re-roots: a row projected ahead of its parent would look orphaned here; the thread's own pass (mirrored by the
// drain) re-roots exactly.
import { z } from "zod";
import { type Environment, environmentSchema } from "../../shared/api";

/** Entries of a live run and a live run's user message are kept (four placeholders: tenant, session, tenant, session). */
const NOT_LIVE = `id NOT IN (SELECT r.user_entry_id FROM agent_runs r WHERE r.tenant_id = ? AND r.session_id = ?
      AND r.status IN ('queued', 'running') AND r.user_entry_id IS NOT NULL)
    AND (run_id IS NULL OR run_id NOT IN (SELECT r.id FROM agent_runs r WHERE r.tenant_id = ? AND r.session_id = ?
      AND r.status IN ('queued', 'running')))`;

/** A title from SQL that matches `titleFrom` in the drain: line breaks and tabs to spaces, trimmed, 80 characters. */
const TITLE = `(SELECT CASE WHEN length(t) > 80 THEN substr(t, 1, 79) || '…' ELSE NULLIF(t, '') END FROM (
    SELECT trim(replace(replace(replace(content, char(13), ' '), char(10), ' '), char(9), ' '), ' ') AS t
    FROM agent_messages WHERE tenant_id = ? AND session_id = ? AND kind = 'message' AND role = 'user'
    ORDER BY seq, id LIMIT 1))`;

export const RETENTION_SQL = {
  /** Tenants are not tenant data: the job walks them to bind each tenant's statements. */
  tenantsPage: "SELECT id FROM tenants WHERE id > ? ORDER BY id LIMIT ?",
  dueSessions: `SELECT id, agent_id, environment, retention_max_age_days, retention_max_messages FROM agent_sessions
    WHERE tenant_id = ? AND retention_due_at IS NOT NULL AND retention_due_at <= ?
    ORDER BY retention_due_at LIMIT ?`,
  deleteOlderThan: `DELETE FROM agent_messages WHERE tenant_id = ? AND session_id = ? AND created_at < ? AND ${NOT_LIVE}`,
  deleteBeyondNewest: `DELETE FROM agent_messages WHERE tenant_id = ? AND session_id = ? AND seq < (
      SELECT seq FROM agent_messages WHERE tenant_id = ? AND session_id = ? AND kind = 'message'
      ORDER BY seq DESC, id DESC LIMIT 1 OFFSET ?) AND ${NOT_LIVE}`,
  deleteToolCallsOlderThan: `DELETE FROM agent_tool_calls WHERE tenant_id = ? AND session_id = ? AND created_at < ?
    AND run_id NOT IN (SELECT r.id FROM agent_runs r WHERE r.tenant_id = ? AND r.session_id = ?
      AND r.status IN ('queued', 'running'))`,
  refreshSession: `UPDATE agent_sessions SET
      message_count = (SELECT COUNT(*) FROM agent_messages WHERE tenant_id = ? AND session_id = ? AND kind = 'message'),
      last_message_at = (SELECT MAX(created_at) FROM agent_messages WHERE tenant_id = ? AND session_id = ?
        AND kind = 'message'),
      title = ${TITLE},
      retention_due_at = ?
    WHERE tenant_id = ? AND id = ?`,
} as const;

export interface DueSession {
  tenantId: string;
  threadId: string;
  agentId: string;
  environment: Environment;
  maxAgeDays: number | null;
  maxMessages: number | null;
}

const dueRow = z.object({
  id: z.string(),
  agent_id: z.string(),
  environment: environmentSchema,
  retention_max_age_days: z.number().int().nullable(),
  retention_max_messages: z.number().int().nullable(),
});

export async function tenantsPage(db: D1Database, after: string, limit: number): Promise<string[]> {
  const { results } = await db.prepare(RETENTION_SQL.tenantsPage).bind(after, limit).all();
  return results.map((r) => z.object({ id: z.string() }).parse(r).id);
}

export async function dueSessions(
  db: D1Database,
  tenantId: string,
  nowIso: string,
  limit: number,
): Promise<DueSession[]> {
  const { results } = await db.prepare(RETENTION_SQL.dueSessions).bind(tenantId, nowIso, limit).all();
  return results.map((r) => {
    const row = dueRow.parse(r);
    return {
      tenantId,
      threadId: row.id,
      agentId: row.agent_id,
      environment: row.environment,
      maxAgeDays: row.retention_max_age_days,
      maxMessages: row.retention_max_messages,
    };
  });
}

/**
 * Applies one session's policy in one transaction and schedules its next check. Returns how many messages went.
 * `ageCutoff` is the ISO time before which messages are too old (null without an age limit).
 */
export async function pruneSession(
  db: D1Database,
  session: DueSession,
  at: { ageCutoff: string | null; nextDueAt: string },
): Promise<number> {
  const t = session.tenantId;
  const s = session.threadId;
  const live = [t, s, t, s];
  const deletes: D1PreparedStatement[] = [];
  if (at.ageCutoff !== null) {
    deletes.push(db.prepare(RETENTION_SQL.deleteOlderThan).bind(t, s, at.ageCutoff, ...live));
  }
  if (session.maxMessages !== null) {
    deletes.push(
      db.prepare(RETENTION_SQL.deleteBeyondNewest).bind(t, s, t, s, session.maxMessages - 1, ...live),
    );
  }
  const tail: D1PreparedStatement[] = [];
  if (at.ageCutoff !== null) {
    tail.push(db.prepare(RETENTION_SQL.deleteToolCallsOlderThan).bind(t, s, at.ageCutoff, t, s));
  }
  tail.push(db.prepare(RETENTION_SQL.refreshSession).bind(t, s, t, s, t, s, at.nextDueAt, t, s));
  const results = await db.batch([...deletes, ...tail]);
  return results.slice(0, deletes.length).reduce((n, r) => n + (r.meta.changes ?? 0), 0);
}
