// The one read path to projected threads: every statement binds the caller's tenant, and an end user's subject.
//
// A scope comes only from verified credentials: `tenant` from an API key, `subject` from a launch token (its
// tenant, agent and `sub`). SQL is built here from fixed fragments; `sessionsSql` enumerates every variant so a
// test can check each one binds `tenant_id = ?` (and `user_id = ?` for subjects).
import { z } from "zod";
import { type Environment, environmentSchema } from "../../shared/api";
import { MESSAGE_COLUMNS, type MessageRecord, messageRecordSchema } from "./message-row";
import { mirrorTombstone, projectionWriteDbs } from "./shards";

export type ReadScope =
  | { kind: "tenant"; tenantId: string }
  | { kind: "subject"; tenantId: string; agentId: string; subject: string };

export interface SessionFilter {
  agentId?: string;
  mode?: "agent" | "handoff";
  subject?: string;
  /** ISO time; sessions updated strictly after it. */
  updatedAfter?: string;
  /** Only the console's preview threads (docs/api.md); without it, every session but those. */
  preview?: boolean;
}

export interface SessionRecord {
  tenantId: string;
  threadId: string;
  agentId: string;
  agentName: string;
  environment: Environment;
  /** The pinned version. */
  agentVersion: number;
  artifactDigest: string;
  /** The version of the current leaf (docs/api.md). */
  leafVersion: number;
  subject: string;
  state: { leafId: string | null; lastRun: { id: string; status: RunStatusName } | null };
  mode: "agent" | "handoff";
  title: string | null;
  messageCount: number;
  lastMessageAt: string | null;
  createdAt: string;
  updatedAt: string;
  /** A preview thread of the console (docs/api.md). */
  preview: boolean;
}

export interface UsageDay {
  day: string;
  runs: number;
  inputTokens: number;
  outputTokens: number;
}

/** Keyset positions: sessions newest first by (updated_at, id); messages by (seq, id). */
export interface SessionPosition {
  updatedAt: string;
  id: string;
}
export interface MessagePosition {
  seq: number;
  id: string;
}

const RUN_STATUS_NAMES = ["queued", "running", "requires_action", "succeeded", "failed", "aborted"] as const;
type RunStatusName = (typeof RUN_STATUS_NAMES)[number];

export const SESSION_COLUMNS = `tenant_id, id, agent_id, agent_name, environment, agent_version, artifact_digest,
  leaf_version, user_id, state, mode, title, message_count, last_message_at, created_at, updated_at, preview`;

/** Messages with their current feedback; the join stays inside the message's tenant and session. */
const MESSAGES_FROM = `FROM agent_messages m LEFT JOIN agent_message_feedback f
  ON f.tenant_id = m.tenant_id AND f.session_id = m.session_id AND f.message_id = m.id
  LEFT JOIN agent_runs r ON r.tenant_id = m.tenant_id AND r.session_id = m.session_id AND r.id = m.run_id
    AND m.role = 'assistant'`;

/** Every read of agent_sessions starts here: the tenant, and for end users the subject and agent, always bound. */
const SESSIONS_FROM = {
  tenant: `SELECT ${SESSION_COLUMNS} FROM agent_sessions WHERE tenant_id = ?`,
  subject: `SELECT ${SESSION_COLUMNS} FROM agent_sessions WHERE tenant_id = ? AND user_id = ? AND agent_id = ?`,
} as const;

type ScopeKind = ReadScope["kind"];

interface ListShape {
  scope: ScopeKind;
  agentId: boolean;
  subject: boolean;
  updatedAfter: boolean;
  cursor: boolean;
  /** A literal, never a binding, so the partial index of threads in handoff applies. */
  mode?: "agent" | "handoff";
  /** Preview threads only, or (false) none of them; a literal, for the partial index of previews. */
  preview: boolean;
}

/** The SQL of one session-list variant. Filters that a subject scope already fixes are not repeated. */
export function sessionListSql(shape: ListShape): string {
  let sql = SESSIONS_FROM[shape.scope];
  if (shape.scope === "tenant" && shape.agentId) sql += " AND agent_id = ?";
  if (shape.scope === "tenant" && shape.subject) sql += " AND user_id = ?";
  if (shape.mode === "handoff") sql += " AND mode = 'handoff'";
  if (shape.mode === "agent") sql += " AND mode = 'agent'";
  sql += shape.preview ? " AND preview = 1" : " AND preview = 0";
  if (shape.updatedAfter) sql += " AND updated_at > ?";
  if (shape.cursor) sql += " AND (updated_at < ? OR (updated_at = ? AND id < ?))";
  return `${sql} ORDER BY updated_at DESC, id DESC LIMIT ?`;
}

export const SESSIONS_SQL = {
  getSession: {
    tenant: `${SESSIONS_FROM.tenant} AND id = ?`,
    subject: `${SESSIONS_FROM.subject} AND id = ?`,
  },
  listMessages: {
    first: `SELECT ${MESSAGE_COLUMNS} ${MESSAGES_FROM} WHERE m.tenant_id = ? AND m.session_id = ?
      ORDER BY m.seq, m.id LIMIT ?`,
    after: `SELECT ${MESSAGE_COLUMNS} ${MESSAGES_FROM} WHERE m.tenant_id = ? AND m.session_id = ?
      AND (m.seq > ? OR (m.seq = ? AND m.id > ?)) ORDER BY m.seq, m.id LIMIT ?`,
  },
  listMessagesOfSubject: {
    first: `SELECT ${MESSAGE_COLUMNS} ${MESSAGES_FROM} WHERE m.tenant_id = ? AND m.session_id = ? AND m.user_id = ?
      ORDER BY m.seq, m.id LIMIT ?`,
    after: `SELECT ${MESSAGE_COLUMNS} ${MESSAGES_FROM} WHERE m.tenant_id = ? AND m.session_id = ? AND m.user_id = ?
      AND (m.seq > ? OR (m.seq = ? AND m.id > ?)) ORDER BY m.seq, m.id LIMIT ?`,
  },
  /**
   * Usage is billing data: read from the analytics rollup, which erasure and retention never subtract from (they
   * remove text, never counts), so `GET /v1/usage` and `GET /v1/analytics` agree after an erasure (docs/privacy.md).
   * Preview threads never enter the rollup. Days with only threads or feedback (no run, no token) are left out.
   */
  usage: {
    all: `SELECT day, SUM(turns) AS runs, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens
      FROM agent_analytics_daily WHERE tenant_id = ? AND day >= ? AND day <= ?
      GROUP BY day HAVING SUM(turns) <> 0 OR SUM(input_tokens) <> 0 OR SUM(output_tokens) <> 0 ORDER BY day`,
    agent: `SELECT day, SUM(turns) AS runs, SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens
      FROM agent_analytics_daily WHERE tenant_id = ? AND day >= ? AND day <= ? AND agent_id = ?
      GROUP BY day HAVING SUM(turns) <> 0 OR SUM(input_tokens) <> 0 OR SUM(output_tokens) <> 0 ORDER BY day`,
  },
  erase: [
    "DELETE FROM agent_message_feedback WHERE tenant_id = ? AND session_id = ?",
    "DELETE FROM agent_messages WHERE tenant_id = ? AND session_id = ?",
    "DELETE FROM agent_tool_calls WHERE tenant_id = ? AND session_id = ?",
    "DELETE FROM agent_approvals WHERE tenant_id = ? AND thread_id = ?",
    "DELETE FROM agent_usage WHERE tenant_id = ? AND session_id = ?",
    "DELETE FROM agent_runs WHERE tenant_id = ? AND session_id = ?",
    "DELETE FROM agent_sessions WHERE tenant_id = ? AND id = ?",
  ],
} as const;

/** Every statement text this file can send, for the tenancy test. */
export function sessionsSql(): { scope: ScopeKind | "tenant-only"; sql: string }[] {
  const out: { scope: ScopeKind | "tenant-only"; sql: string }[] = [];
  for (const scope of ["tenant", "subject"] as const) {
    for (const bits of Array.from({ length: 96 }, (_, n) => n)) {
      const modeBits = bits % 48;
      const mode = modeBits >= 32 ? "handoff" : modeBits >= 16 ? "agent" : undefined;
      out.push({
        scope,
        sql: sessionListSql({
          scope,
          agentId: (bits & 1) > 0,
          subject: (bits & 2) > 0,
          updatedAfter: (bits & 4) > 0,
          cursor: (bits & 8) > 0,
          ...(mode !== undefined ? { mode } : {}),
          preview: bits >= 48,
        }),
      });
    }
    out.push({ scope, sql: SESSIONS_SQL.getSession[scope] });
  }
  out.push({ scope: "tenant", sql: SESSIONS_SQL.listMessages.first });
  out.push({ scope: "tenant", sql: SESSIONS_SQL.listMessages.after });
  out.push({ scope: "subject", sql: SESSIONS_SQL.listMessagesOfSubject.first });
  out.push({ scope: "subject", sql: SESSIONS_SQL.listMessagesOfSubject.after });
  for (const sql of [SESSIONS_SQL.usage.all, SESSIONS_SQL.usage.agent, ...SESSIONS_SQL.erase]) {
    out.push({ scope: "tenant-only", sql });
  }
  return out;
}

const stateSchema = z
  .object({
    leafId: z.string().nullable().catch(null),
    lastRun: z
      .object({ id: z.string(), status: z.enum(RUN_STATUS_NAMES) })
      .nullable()
      .catch(null),
  })
  .catch({ leafId: null, lastRun: null });

/** An agent_sessions row (SESSION_COLUMNS) as a record; search reads the same columns. */
export const sessionRow = z
  .object({
    tenant_id: z.string(),
    id: z.string(),
    agent_id: z.string(),
    agent_name: z.string(),
    environment: environmentSchema,
    agent_version: z.number().int(),
    artifact_digest: z.string(),
    leaf_version: z.number().int().nullable(),
    user_id: z.string(),
    state: z.string(),
    mode: z.enum(["agent", "handoff"]).catch("agent"),
    title: z.string().nullable(),
    message_count: z.number().int(),
    last_message_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
    preview: z.number().int(),
  })
  .transform(
    (r): SessionRecord => ({
      tenantId: r.tenant_id,
      threadId: r.id,
      agentId: r.agent_id,
      agentName: r.agent_name,
      environment: r.environment,
      agentVersion: r.agent_version,
      artifactDigest: r.artifact_digest,
      leafVersion: r.leaf_version ?? r.agent_version,
      subject: r.user_id,
      state: stateSchema.parse(parseJsonText(r.state)),
      mode: r.mode,
      title: r.title,
      messageCount: r.message_count,
      lastMessageAt: r.last_message_at,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      preview: r.preview === 1,
    }),
  );

function parseJsonText(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const usageRow = z.object({
  day: z.string(),
  runs: z.number(),
  input_tokens: z.number(),
  output_tokens: z.number(),
});

function scopeBindings(scope: ReadScope): string[] {
  return scope.kind === "tenant" ? [scope.tenantId] : [scope.tenantId, scope.subject, scope.agentId];
}

export async function listSessions(
  db: D1Database,
  scope: ReadScope,
  filter: SessionFilter,
  page: { limit: number; after?: SessionPosition },
): Promise<{ items: SessionRecord[]; next?: SessionPosition }> {
  const tenantFilters = scope.kind === "tenant";
  const sql = sessionListSql({
    scope: scope.kind,
    agentId: tenantFilters && filter.agentId !== undefined,
    subject: tenantFilters && filter.subject !== undefined,
    updatedAfter: filter.updatedAfter !== undefined,
    cursor: page.after !== undefined,
    ...(filter.mode !== undefined ? { mode: filter.mode } : {}),
    preview: filter.preview === true,
  });
  const bindings: (string | number)[] = scopeBindings(scope);
  if (tenantFilters && filter.agentId !== undefined) bindings.push(filter.agentId);
  if (tenantFilters && filter.subject !== undefined) bindings.push(filter.subject);
  if (filter.updatedAfter !== undefined) bindings.push(filter.updatedAfter);
  if (page.after !== undefined) bindings.push(page.after.updatedAt, page.after.updatedAt, page.after.id);
  bindings.push(page.limit + 1);
  const { results } = await db
    .prepare(sql)
    .bind(...bindings)
    .all();
  const rows = results.map((r) => sessionRow.parse(r));
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  return rows.length > page.limit && last !== undefined
    ? { items, next: { updatedAt: last.updatedAt, id: last.threadId } }
    : { items };
}

export async function getSession(
  db: D1Database,
  scope: ReadScope,
  threadId: string,
): Promise<SessionRecord | null> {
  const row = await db
    .prepare(SESSIONS_SQL.getSession[scope.kind])
    .bind(...scopeBindings(scope), threadId)
    .first();
  return row === null ? null : sessionRow.parse(row);
}

/** A visible session's entries in seq order; null when the session is not visible to `scope`. */
export async function listMessages(
  db: D1Database,
  scope: ReadScope,
  threadId: string,
  page: { limit: number; after?: MessagePosition },
): Promise<{ items: MessageRecord[]; next?: MessagePosition } | null> {
  if ((await getSession(db, scope, threadId)) === null) return null;
  const texts = scope.kind === "tenant" ? SESSIONS_SQL.listMessages : SESSIONS_SQL.listMessagesOfSubject;
  const bindings: (string | number)[] =
    scope.kind === "tenant" ? [scope.tenantId, threadId] : [scope.tenantId, threadId, scope.subject];
  if (page.after !== undefined) bindings.push(page.after.seq, page.after.seq, page.after.id);
  bindings.push(page.limit + 1);
  const { results } = await db
    .prepare(page.after === undefined ? texts.first : texts.after)
    .bind(...bindings)
    .all();
  const rows = results.map((r) => messageRecordSchema.parse(r));
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  return rows.length > page.limit && last !== undefined
    ? { items, next: { seq: last.seq, id: last.id } }
    : { items };
}

/** Tokens and runs per day (UTC dates, inclusive), only days with activity. */
export async function usageByDay(
  db: D1Database,
  tenantId: string,
  range: { from: string; to: string; agentId?: string },
): Promise<UsageDay[]> {
  const bindings = [tenantId, range.from, range.to, ...(range.agentId !== undefined ? [range.agentId] : [])];
  const which = range.agentId !== undefined ? "agent" : "all";
  const { results } = await db
    .prepare(SESSIONS_SQL.usage[which])
    .bind(...bindings)
    .all();
  return results.map((r) => {
    const row = usageRow.parse(r);
    return { day: row.day, runs: row.runs, inputTokens: row.input_tokens, outputTokens: row.output_tokens };
  });
}

/**
 * The statements deleting a thread's projected rows (sessions, messages, runs, tool calls, approvals, usage, feedback).
 */
export function eraseSessionStatements(
  db: D1Database,
  tenantId: string,
  threadId: string,
): D1PreparedStatement[] {
  return SESSIONS_SQL.erase.map((sql) => db.prepare(sql).bind(tenantId, threadId));
}

/**
 * Deletes a thread's projected rows in every shard that holds or is receiving them, one transaction per shard. In a
 * shard other than `DB` its registry mirror becomes a tombstone in the same transaction, so a late projection (or a
 * move's copy) writes nothing there either; in `DB` the registry's own tombstone does that.
 */
export async function eraseSessionRows(
  env: Env,
  tenantId: string,
  threadId: string,
  at: string,
): Promise<void> {
  for (const { shard, db } of await projectionWriteDbs(env, tenantId)) {
    const statements = eraseSessionStatements(db, tenantId, threadId);
    if (shard !== "DB") statements.unshift(mirrorTombstone(db, { tenantId, threadId }, at));
    await db.batch(statements);
  }
}
