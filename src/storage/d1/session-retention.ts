// SQL for the retention job over D1: a tenant's due sessions, and one session's messages past its agent's policy.
//
// The policy is stored on the session row at projection time (from the pinned version's `limits.retention`), so
// the job needs no artifact; an agent's own max age (`PATCH /v1/agents/:id {retention}`) is joined in, and the
// shorter of the two applies. Sessions of such an agent that no version policy scheduled are found by age (only one
// created before the cutoff can hold an older message); once pruned they are scheduled like the others. Held
// sessions (docs/privacy.md legal hold) are never selected, and are again as soon as the hold is lifted. It mirrors the thread's own rule: messages older than the max age, and everything
// older than the newest N messages, except entries of a run the projection still shows as live. It never
// re-roots: a row projected ahead of its parent would look orphaned here; the thread's own pass (mirrored by the
// drain) re-roots exactly.
import { z } from "zod";
import { type Environment, environmentSchema } from "../../shared/api";

/** A session `s` none of the tenant's holds covers (?4: held thread ids, ?5: held subjects, both JSON). */
const NOT_HELD = `s.id NOT IN (SELECT value FROM json_each(?4)) AND s.user_id NOT IN (SELECT value FROM json_each(?5))`;

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
  /**
   * The agents' own max ages and the tenant's holds are control-plane rows (`DB`) and the sessions may be in another
   * shard, so they come in as JSON: ?2 `{agentId: days}`, ?4 held thread ids, ?5 held subjects.
   */
  dueSessions: `SELECT s.id, s.agent_id, s.environment, s.retention_max_age_days, s.retention_max_messages,
      (SELECT a.value FROM json_each(?2) a WHERE a.key = s.agent_id) AS agent_max_age_days
    FROM agent_sessions s
    WHERE s.tenant_id = ?1 AND s.retention_due_at IS NOT NULL AND s.retention_due_at <= ?3 AND ${NOT_HELD}
    ORDER BY s.retention_due_at LIMIT ?6`,
  /** Sessions never scheduled, of agents with their own max age, old enough to hold a message past it. */
  agentAgedSessions: `SELECT s.id, s.agent_id, s.environment, s.retention_max_age_days, s.retention_max_messages,
      a.value AS agent_max_age_days
    FROM json_each(?2) a JOIN agent_sessions s ON s.tenant_id = ?1 AND s.agent_id = a.key
    WHERE s.retention_due_at IS NULL
      AND s.created_at < strftime('%Y-%m-%dT%H:%M:%fZ', ?3, '-' || a.value || ' days')
      AND ${NOT_HELD}
    LIMIT ?6`,
  /** The tenant's agents with their own max age (in `DB`). */
  agentAges:
    "SELECT id, retention_max_age_days FROM agents WHERE tenant_id = ? AND retention_max_age_days IS NOT NULL",
  /** The tenant's holds (in `DB`): few, so all of them. */
  holds: "SELECT scope, target FROM legal_holds WHERE tenant_id = ?",
  /** What the thread object's own pass needs from D1: whether it is held, and its agent's own max age. */
  threadOverrides: `SELECT
      (SELECT retention_max_age_days FROM agents WHERE tenant_id = ?1 AND id = ?2) AS agent_max_age_days,
      EXISTS (SELECT 1 FROM legal_holds h WHERE h.tenant_id = ?1 AND ((h.scope = 'thread' AND h.target = ?3)
        OR (h.scope = 'subject' AND h.target = (SELECT t.subject FROM threads t WHERE t.tenant_id = ?1
          AND t.id = ?3)))) AS held`,
  deleteOlderThan: `DELETE FROM agent_messages WHERE tenant_id = ? AND session_id = ? AND created_at < ? AND ${NOT_LIVE}`,
  deleteBeyondNewest: `DELETE FROM agent_messages WHERE tenant_id = ? AND session_id = ? AND seq < (
      SELECT seq FROM agent_messages WHERE tenant_id = ? AND session_id = ? AND kind = 'message'
      ORDER BY seq DESC, id DESC LIMIT 1 OFFSET ?) AND ${NOT_LIVE}`,
  deleteToolCallsOlderThan: `DELETE FROM agent_tool_calls WHERE tenant_id = ? AND session_id = ? AND created_at < ?
    AND run_id NOT IN (SELECT r.id FROM agent_runs r WHERE r.tenant_id = ? AND r.session_id = ?
      AND r.status IN ('queued', 'running'))`,
  /** Settled approvals requested before the cutoff (docs/api.md#approvals); a pending one belongs to a live run. */
  deleteApprovalsOlderThan: `DELETE FROM agent_approvals WHERE tenant_id = ? AND thread_id = ? AND requested_at < ?
    AND status <> 'pending'`,
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
  agent_max_age_days: z.number().int().nullable(),
});

/** The shorter of two max ages, either absent. */
export function shorterAge(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || a === undefined) return b ?? null;
  if (b === null || b === undefined) return a;
  return Math.min(a, b);
}

export async function tenantsPage(db: D1Database, after: string, limit: number): Promise<string[]> {
  const { results } = await db.prepare(RETENTION_SQL.tenantsPage).bind(after, limit).all();
  return results.map((r) => z.object({ id: z.string() }).parse(r).id);
}

/**
 * A tenant's sessions due for retention, from the shard holding them (`db`); the agents' own ages and the holds are
 * read from the control plane (`control`) first.
 */
export async function dueSessions(
  db: { shard: D1Database; control: D1Database },
  tenantId: string,
  nowIso: string,
  limit: number,
): Promise<DueSession[]> {
  const [ages, holds] = await db.control.batch([
    db.control.prepare(RETENTION_SQL.agentAges).bind(tenantId),
    db.control.prepare(RETENTION_SQL.holds).bind(tenantId),
  ]);
  const agentAges: Record<string, number> = {};
  for (const r of ages?.results ?? []) {
    const row = z.object({ id: z.string(), retention_max_age_days: z.number().int() }).parse(r);
    agentAges[row.id] = row.retention_max_age_days;
  }
  const heldThreads: string[] = [];
  const heldSubjects: string[] = [];
  for (const r of holds?.results ?? []) {
    const row = z.object({ scope: z.enum(["thread", "subject"]), target: z.string() }).parse(r);
    (row.scope === "thread" ? heldThreads : heldSubjects).push(row.target);
  }
  const bind = (n: number) =>
    [
      tenantId,
      JSON.stringify(agentAges),
      nowIso,
      JSON.stringify(heldThreads),
      JSON.stringify(heldSubjects),
      n,
    ] as const;
  const { results } = await db.shard
    .prepare(RETENTION_SQL.dueSessions)
    .bind(...bind(limit))
    .all();
  const due = results.map((r) => toDue(tenantId, r));
  if (due.length >= limit || Object.keys(agentAges).length === 0) return due;
  const aged = await db.shard
    .prepare(RETENTION_SQL.agentAgedSessions)
    .bind(...bind(limit - due.length))
    .all();
  return [...due, ...aged.results.map((r) => toDue(tenantId, r))];
}

function toDue(tenantId: string, r: unknown): DueSession {
  const row = dueRow.parse(r);
  return {
    tenantId,
    threadId: row.id,
    agentId: row.agent_id,
    environment: row.environment,
    maxAgeDays: shorterAge(row.retention_max_age_days, row.agent_max_age_days),
    maxMessages: row.retention_max_messages,
  };
}

/** One thread's retention inputs from D1: whether a legal hold covers it, and its agent's own max age. */
export async function threadRetentionOverrides(
  db: D1Database,
  thread: { tenantId: string; agentId: string; threadId: string },
): Promise<{ held: boolean; agentMaxAgeDays: number | null }> {
  const row = await db
    .prepare(RETENTION_SQL.threadOverrides)
    .bind(thread.tenantId, thread.agentId, thread.threadId)
    .first();
  const parsed = z
    .object({ agent_max_age_days: z.number().int().nullable(), held: z.number().int() })
    .parse(row);
  return { held: parsed.held === 1, agentMaxAgeDays: parsed.agent_max_age_days };
}

/**
 * Applies one session's policy in one transaction and schedules its next check (none without a policy). Returns how
 * many messages went. `ageCutoff` is the ISO time before which messages are too old (null without an age limit).
 */
export async function pruneSession(
  db: D1Database,
  session: DueSession,
  at: { ageCutoff: string | null; nextDueAt: string | null },
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
    tail.push(db.prepare(RETENTION_SQL.deleteApprovalsOlderThan).bind(t, s, at.ageCutoff));
  }
  tail.push(db.prepare(RETENTION_SQL.refreshSession).bind(t, s, t, s, t, s, at.nextDueAt, t, s));
  const results = await db.batch([...deletes, ...tail]);
  return results.slice(0, deletes.length).reduce((n, r) => n + (r.meta.changes ?? 0), 0);
}
