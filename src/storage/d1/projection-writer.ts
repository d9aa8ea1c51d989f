// SQL that projects one thread into D1: idempotent, version-guarded upserts that only land while the thread exists.
//
// Every write selects its tenant, thread and subject from the `threads` registry row (`deleted_at IS NULL`), so a
// projection that arrives after erasure writes nothing, and the subject comes from the server's own record.
import { z } from "zod";
import type { MessageRow } from "./message-row";
import { searchableTerms } from "./search-terms";

const watermarkRow = z.object({ projected_seq: z.number().int() });

export interface ThreadScope {
  tenantId: string;
  threadId: string;
}

export interface SessionSnapshot {
  agentId: string;
  agentName: string;
  environment: string;
  agentVersion: number;
  versionId: string;
  artifactDigest: string;
  /** The version of the current leaf (docs/api.md); the pinned one until an upgrade. */
  leafVersion: number;
  /** JSON text. */
  state: string;
  /** `agent` | `handoff`. */
  mode: string;
  title: string | null;
  messageCount: number;
  lastMessageAt: string | null;
  projectedSeq: number;
  retentionMaxAgeDays: number | null;
  retentionMaxMessages: number | null;
  /** First retention check for a session with a policy; null without one. */
  retentionDueAt: string | null;
  version: number;
  updatedAt: string;
}

export interface RunRow {
  id: string;
  agentId: string;
  versionId: string | null;
  status: string;
  day: string;
  userEntryId: string | null;
  assistantEntryId: string | null;
  abortReason: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  version: number;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  /** `sha256:` of the run's first model call input (docs/api.md); null when it never reached a model. */
  inputDigest: string | null;
  firstDeltaMs: number | null;
  /** `firstDeltaBucket(firstDeltaMs)`, for the analytics histogram. */
  firstDeltaBucket: number | null;
}

export interface ToolCallRow {
  id: string;
  runId: string;
  name: string;
  /** JSON text. */
  input: string;
  /** JSON text. */
  output: string | null;
  status: string;
  version: number;
  createdAt: string;
  endedAt: string | null;
}

export interface UsageRow {
  runId: string;
  turn: number;
  agentId: string;
  day: string;
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
  version: number;
  createdAt: string;
}

/** The user's current feedback on one assistant message (rating null: cleared). */
export interface FeedbackRow {
  messageId: string;
  rating: string | null;
  comment: string | null;
  subject: string;
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** An approval as `agent_approvals` holds it (docs/api.md#approvals). */
export interface ApprovalRow {
  id: string;
  environment: string;
  agentId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  status: string;
  by: string;
  requestedAt: string;
  expiresAt: string;
  decidedAt: string | null;
  decidedBy: string | null;
  reason: string | null;
  version: number;
}

/** One retention pass as D1 mirrors it. */
export interface RetentionPass {
  throughSeq: number;
  survivorIds: readonly string[];
  rootIds: readonly string[];
  /** ISO time; null when only a message count applied. */
  toolCallsBefore: string | null;
  /** The thread's tool calls created before `toolCallsBefore` (a live run's, kept). */
  survivingToolCallIds: readonly string[];
}

/** The registry row that every projection write hangs on; its two placeholders are (tenant_id, thread id). */
const LIVE_THREAD = "FROM threads t WHERE t.tenant_id = ? AND t.id = ? AND t.deleted_at IS NULL";

/** Every statement this file sends, exported so a test can check that each binds the tenant. */
export const PROJECTION_SQL = {
  upsertSession: `INSERT INTO agent_sessions (tenant_id, id, agent_id, agent_name, environment, agent_version,
      version_id, artifact_digest, leaf_version, user_id, state, mode, title, message_count, last_message_at,
      projected_seq, retention_max_age_days, retention_max_messages, retention_due_at, version, created_at, updated_at,
      preview)
    SELECT t.tenant_id, t.id, ?, ?, ?, ?, ?, ?, ?, t.subject, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, t.created_at, ?, t.preview
    ${LIVE_THREAD}
    ON CONFLICT (tenant_id, id) DO UPDATE SET
      agent_id = excluded.agent_id, agent_name = excluded.agent_name, environment = excluded.environment,
      agent_version = excluded.agent_version, version_id = excluded.version_id,
      artifact_digest = excluded.artifact_digest, leaf_version = excluded.leaf_version, state = excluded.state,
      mode = excluded.mode,
      title = excluded.title,
      message_count = excluded.message_count, last_message_at = excluded.last_message_at,
      projected_seq = excluded.projected_seq, retention_max_age_days = excluded.retention_max_age_days,
      retention_max_messages = excluded.retention_max_messages,
      retention_due_at = COALESCE(agent_sessions.retention_due_at, excluded.retention_due_at),
      version = excluded.version, updated_at = excluded.updated_at
    WHERE excluded.version > agent_sessions.version`,
  upsertMessage: `INSERT INTO agent_messages (tenant_id, session_id, id, seq, parent_id, run_id, kind, role, content,
      status, tool_call_id, tool_name, tool_calls, author_name, agent_version, user_id, version, created_at, search_terms,
      attachments)
    SELECT t.tenant_id, t.id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, t.subject, ?, ?, ?, ?
    ${LIVE_THREAD}
    ON CONFLICT (tenant_id, session_id, id) DO UPDATE SET
      seq = excluded.seq, parent_id = excluded.parent_id, run_id = excluded.run_id, kind = excluded.kind,
      role = excluded.role, content = excluded.content, status = excluded.status,
      tool_call_id = excluded.tool_call_id, tool_name = excluded.tool_name, tool_calls = excluded.tool_calls,
      author_name = excluded.author_name, agent_version = excluded.agent_version, user_id = excluded.user_id,
      version = excluded.version, created_at = excluded.created_at, search_terms = excluded.search_terms,
      attachments = excluded.attachments
    WHERE excluded.version > agent_messages.version`,
  upsertRun: `INSERT INTO agent_runs (tenant_id, session_id, id, agent_id, version_id, status, day, user_entry_id,
      assistant_entry_id, abort_reason, error_code, error_message, version, created_at, started_at, ended_at,
      input_digest, first_delta_ms, first_delta_bucket)
    SELECT t.tenant_id, t.id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
    ${LIVE_THREAD}
    ON CONFLICT (tenant_id, session_id, id) DO UPDATE SET
      agent_id = excluded.agent_id, version_id = excluded.version_id, status = excluded.status, day = excluded.day,
      user_entry_id = excluded.user_entry_id, assistant_entry_id = excluded.assistant_entry_id,
      abort_reason = excluded.abort_reason, error_code = excluded.error_code,
      error_message = excluded.error_message, version = excluded.version, created_at = excluded.created_at,
      started_at = excluded.started_at, ended_at = excluded.ended_at, input_digest = excluded.input_digest,
      first_delta_ms = excluded.first_delta_ms, first_delta_bucket = excluded.first_delta_bucket
    WHERE excluded.version > agent_runs.version`,
  upsertToolCall: `INSERT INTO agent_tool_calls (tenant_id, session_id, id, run_id, name, input, output, status, version,
      created_at, ended_at)
    SELECT t.tenant_id, t.id, ?, ?, ?, ?, ?, ?, ?, ?, ?
    ${LIVE_THREAD}
    ON CONFLICT (tenant_id, session_id, id) DO UPDATE SET
      run_id = excluded.run_id, name = excluded.name, input = excluded.input, output = excluded.output,
      status = excluded.status, version = excluded.version, created_at = excluded.created_at,
      ended_at = excluded.ended_at
    WHERE excluded.version > agent_tool_calls.version`,
  upsertUsage: `INSERT INTO agent_usage (tenant_id, session_id, run_id, turn, agent_id, day, provider, model,
      input_tokens, output_tokens, version, created_at)
    SELECT t.tenant_id, t.id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
    ${LIVE_THREAD}
    ON CONFLICT (tenant_id, session_id, run_id, turn) DO UPDATE SET
      agent_id = excluded.agent_id, day = excluded.day, provider = excluded.provider, model = excluded.model,
      input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, version = excluded.version,
      created_at = excluded.created_at
    WHERE excluded.version > agent_usage.version`,
  upsertFeedback: `INSERT INTO agent_message_feedback (tenant_id, session_id, message_id, rating, comment, user_id,
      version, created_at, updated_at)
    SELECT t.tenant_id, t.id, ?, ?, ?, ?, ?, ?, ?
    ${LIVE_THREAD}
    ON CONFLICT (tenant_id, session_id, message_id) DO UPDATE SET
      rating = excluded.rating, comment = excluded.comment, user_id = excluded.user_id, version = excluded.version,
      updated_at = excluded.updated_at
    WHERE excluded.version > agent_message_feedback.version`,
  upsertApproval: `INSERT INTO agent_approvals (tenant_id, thread_id, id, environment, agent_id, run_id, tool_call_id,
      tool_name, status, by, requested_at, expires_at, decided_at, decided_by, reason, version)
    SELECT t.tenant_id, t.id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
    ${LIVE_THREAD}
    ON CONFLICT (tenant_id, thread_id, id) DO UPDATE SET
      environment = excluded.environment, agent_id = excluded.agent_id, run_id = excluded.run_id,
      tool_call_id = excluded.tool_call_id, tool_name = excluded.tool_name, status = excluded.status,
      by = excluded.by, requested_at = excluded.requested_at, expires_at = excluded.expires_at,
      decided_at = excluded.decided_at, decided_by = excluded.decided_by, reason = excluded.reason,
      version = excluded.version
    WHERE excluded.version > agent_approvals.version`,
  /** Feedback on messages retention removed (run after the messages' own delete). */
  deleteRetainedFeedback: `DELETE FROM agent_message_feedback
    WHERE tenant_id = ? AND session_id = ? AND message_id NOT IN
      (SELECT id FROM agent_messages WHERE tenant_id = ? AND session_id = ?)`,
  /** Messages the thread deleted by retention: seq at or below its high-water mark and no longer in the thread. */
  deleteRetainedMessages: `DELETE FROM agent_messages
    WHERE tenant_id = ? AND session_id = ? AND seq <= ? AND id NOT IN (SELECT value FROM json_each(?))`,
  deleteRetainedToolCalls: `DELETE FROM agent_tool_calls
    WHERE tenant_id = ? AND session_id = ? AND created_at < ? AND id NOT IN (SELECT value FROM json_each(?))`,
  /** Settled approvals as old as the tool calls retention removed (a pending one belongs to a live run). */
  deleteRetainedApprovals: `DELETE FROM agent_approvals
    WHERE tenant_id = ? AND thread_id = ? AND requested_at < ? AND status <> 'pending'`,
  /** Entries that are roots in the thread (their parent was deleted) are roots here too. */
  rerootEntries: `UPDATE agent_messages SET parent_id = NULL
    WHERE tenant_id = ? AND session_id = ? AND parent_id IS NOT NULL AND id IN (SELECT value FROM json_each(?))`,
  readWatermark: "SELECT projected_seq FROM agent_sessions WHERE tenant_id = ? AND id = ?",
} as const;

export function upsertSession(db: D1Database, scope: ThreadScope, s: SessionSnapshot): D1PreparedStatement {
  return db
    .prepare(PROJECTION_SQL.upsertSession)
    .bind(
      s.agentId,
      s.agentName,
      s.environment,
      s.agentVersion,
      s.versionId,
      s.artifactDigest,
      s.leafVersion,
      s.state,
      s.mode,
      s.title,
      s.messageCount,
      s.lastMessageAt,
      s.projectedSeq,
      s.retentionMaxAgeDays,
      s.retentionMaxMessages,
      s.retentionDueAt,
      s.version,
      s.updatedAt,
      scope.tenantId,
      scope.threadId,
    );
}

export function upsertMessage(db: D1Database, scope: ThreadScope, m: MessageRow): D1PreparedStatement {
  return db
    .prepare(PROJECTION_SQL.upsertMessage)
    .bind(
      m.id,
      m.seq,
      m.parentId,
      m.runId,
      m.kind,
      m.role,
      m.content,
      m.status,
      m.toolCallId,
      m.toolName,
      m.toolCalls,
      m.authorName,
      m.agentVersion,
      m.version,
      m.createdAt,
      searchableTerms(scope.tenantId, m),
      m.attachments,
      scope.tenantId,
      scope.threadId,
    );
}

export function upsertFeedback(db: D1Database, scope: ThreadScope, f: FeedbackRow): D1PreparedStatement {
  return db
    .prepare(PROJECTION_SQL.upsertFeedback)
    .bind(
      f.messageId,
      f.rating,
      f.comment,
      f.subject,
      f.version,
      f.createdAt,
      f.updatedAt,
      scope.tenantId,
      scope.threadId,
    );
}

export function upsertRun(db: D1Database, scope: ThreadScope, r: RunRow): D1PreparedStatement {
  return db
    .prepare(PROJECTION_SQL.upsertRun)
    .bind(
      r.id,
      r.agentId,
      r.versionId,
      r.status,
      r.day,
      r.userEntryId,
      r.assistantEntryId,
      r.abortReason,
      r.errorCode,
      r.errorMessage,
      r.version,
      r.createdAt,
      r.startedAt,
      r.endedAt,
      r.inputDigest,
      r.firstDeltaMs,
      r.firstDeltaBucket,
      scope.tenantId,
      scope.threadId,
    );
}

export function upsertToolCall(db: D1Database, scope: ThreadScope, t: ToolCallRow): D1PreparedStatement {
  return db
    .prepare(PROJECTION_SQL.upsertToolCall)
    .bind(
      t.id,
      t.runId,
      t.name,
      t.input,
      t.output,
      t.status,
      t.version,
      t.createdAt,
      t.endedAt,
      scope.tenantId,
      scope.threadId,
    );
}

export function upsertUsage(db: D1Database, scope: ThreadScope, u: UsageRow): D1PreparedStatement {
  return db
    .prepare(PROJECTION_SQL.upsertUsage)
    .bind(
      u.runId,
      u.turn,
      u.agentId,
      u.day,
      u.provider,
      u.model,
      u.inputTokens,
      u.outputTokens,
      u.version,
      u.createdAt,
      scope.tenantId,
      scope.threadId,
    );
}

export function upsertApproval(db: D1Database, scope: ThreadScope, a: ApprovalRow): D1PreparedStatement {
  return db
    .prepare(PROJECTION_SQL.upsertApproval)
    .bind(
      a.id,
      a.environment,
      a.agentId,
      a.runId,
      a.toolCallId,
      a.toolName,
      a.status,
      a.by,
      a.requestedAt,
      a.expiresAt,
      a.decidedAt,
      a.decidedBy,
      a.reason,
      a.version,
      scope.tenantId,
      scope.threadId,
    );
}

/**
 * Mirrors the thread's retention passes: removes every message at or below `throughSeq` that the thread no longer
 * holds (`survivorIds` are the thread's entries at or below it), tool calls older than `toolCallsBefore` that it no
 * longer holds, and makes
 * the thread's roots (`rootIds`, entries whose parent was deleted among them) roots here too.
 */
export function mirrorRetention(
  db: D1Database,
  scope: ThreadScope,
  pass: RetentionPass,
): D1PreparedStatement[] {
  const statements = [
    db
      .prepare(PROJECTION_SQL.deleteRetainedMessages)
      .bind(scope.tenantId, scope.threadId, pass.throughSeq, JSON.stringify(pass.survivorIds)),
  ];
  if (pass.toolCallsBefore !== null) {
    statements.push(
      db
        .prepare(PROJECTION_SQL.deleteRetainedToolCalls)
        .bind(
          scope.tenantId,
          scope.threadId,
          pass.toolCallsBefore,
          JSON.stringify(pass.survivingToolCallIds),
        ),
      db
        .prepare(PROJECTION_SQL.deleteRetainedApprovals)
        .bind(scope.tenantId, scope.threadId, pass.toolCallsBefore),
    );
  }
  statements.push(
    db
      .prepare(PROJECTION_SQL.deleteRetainedFeedback)
      .bind(scope.tenantId, scope.threadId, scope.tenantId, scope.threadId),
  );
  statements.push(
    db
      .prepare(PROJECTION_SQL.rerootEntries)
      .bind(scope.tenantId, scope.threadId, JSON.stringify(pass.rootIds)),
  );
  return statements;
}

/** D1's watermark for a thread: every entry with seq at or below it is projected; null before the first drain. */
export async function readWatermark(db: D1Database, scope: ThreadScope): Promise<number | null> {
  const row = await db.prepare(PROJECTION_SQL.readWatermark).bind(scope.tenantId, scope.threadId).first();
  return row === null ? null : watermarkRow.parse(row).projected_seq;
}
