// What D1 is sent for one thread, computed from the thread's own records: pure mapping, no I/O, so the drain reads
// and writes while this file only decides each column.
import { z } from "zod";
import { zeroRetentionIdleMinutes } from "../../control/artifact";
import { environmentSchema } from "../../shared/api";
import { approvalView } from "../../shared/approvals-api";
import { firstDeltaBucket } from "../d1/analytics";
import type { MessageRow } from "../d1/message-row";
import type {
  ApprovalRow,
  FeedbackRow,
  RetentionPass,
  RunRow,
  SessionSnapshot,
  ToolCallRow,
  UsageRow,
} from "../d1/projection-writer";
import type { Entry } from "../thread/entry-store";
import type { Feedback } from "../thread/feedback-store";
import type { ThreadBinding } from "../thread/pin-store";
import type { Run } from "../thread/run-store";
import type { RetentionMark } from "../thread/thread-retention";
import type { ToolCall } from "../thread/tool-call-store";
import type { UsageRecord } from "../thread/usage-store";

const TITLE_MAX_CHARS = 80;
const DAY_MS = 86_400_000;

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));
const day = (ms: number): string => iso(ms).slice(0, 10);

/**
 * A session's title: its first user message on one line (line breaks and tabs become spaces, outer spaces go), cut
 * to 80 characters. The D1 retention job computes the same in SQL, so the two never disagree.
 */
export function titleFrom(text: string): string | null {
  const line = text.replace(/[\r\n\t]/g, " ").replace(/^ +| +$/g, "");
  if (line.length === 0) return null;
  const chars = Array.from(line);
  return chars.length <= TITLE_MAX_CHARS ? line : `${chars.slice(0, TITLE_MAX_CHARS - 1).join("")}…`;
}

const bodyFieldsSchema = z.object({
  text: z.string().optional(),
  status: z.enum(["complete", "interrupted", "failed"]).optional(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
  toolCalls: z.json().optional(),
  authorName: z.string().optional(),
});

/**
 * Kinds whose D1 `content` is a structured fact, never conversation text: kept under zero retention. Every other
 * kind's content is empty there (docs/privacy.md: D1 never receives message text).
 */
const FACT_KINDS: ReadonlySet<string> = new Set(["event", "model_change"]);

/** `zero`: the thread is under zero retention — no text, no tool calls, only metadata. */
export function messageRow(entry: Entry, pinnedVersion: number, zero = false): MessageRow {
  const fields = bodyFieldsSchema.safeParse(entry.body);
  const f = fields.success ? fields.data : {};
  return {
    id: entry.id,
    seq: entry.seq,
    parentId: entry.parentId,
    runId: entry.runId,
    kind: entry.kind,
    role: entry.role,
    content:
      zero && !FACT_KINDS.has(entry.kind)
        ? ""
        : entry.kind === "message" && f.text !== undefined
          ? f.text
          : JSON.stringify(entry.body),
    status: f.status ?? null,
    toolCallId: f.toolCallId ?? null,
    toolName: f.toolName ?? null,
    toolCalls: zero || f.toolCalls === undefined ? null : JSON.stringify(f.toolCalls),
    // A file's name is the user's words too: none under zero retention.
    attachments: zero || entry.attachments === undefined ? null : JSON.stringify(entry.attachments),
    authorName: entry.role === "human_agent" ? (f.authorName ?? null) : null,
    agentVersion: entry.agentVersion ?? pinnedVersion,
    // Entries never change after append; a retention re-rooting is mirrored by its own statement.
    version: 1,
    createdAt: iso(entry.createdAt),
  };
}

export function feedbackRow(f: Feedback, zero = false): FeedbackRow {
  return {
    messageId: f.entryId,
    rating: f.rating,
    comment: zero ? null : f.comment,
    subject: f.subject,
    version: f.revision,
    createdAt: iso(f.createdAt),
    updatedAt: iso(f.updatedAt),
  };
}

/** `inputDigest`: the digest its audit record holds (run-audit-store), null when it never reached a model. */
export function runRow(run: Run, agentId: string, inputDigest: string | null): RunRow {
  return {
    id: run.id,
    agentId,
    versionId: run.versionId,
    // D1 keeps the statuses of runs before approvals: a run waiting for a person is still in progress there, as
    // retention and analytics need it (docs/api.md#approvals lists what it waits for).
    status: run.status === "requires_action" ? "running" : run.status,
    day: day(run.createdAt),
    userEntryId: run.userEntryId,
    assistantEntryId: run.assistantEntryId,
    abortReason: run.abortReason,
    errorCode: run.error?.code ?? null,
    errorMessage: run.error?.message ?? null,
    version: run.revision,
    createdAt: iso(run.createdAt),
    startedAt: isoOrNull(run.startedAt),
    endedAt: isoOrNull(run.endedAt),
    inputDigest,
    firstDeltaMs: run.firstDeltaMs,
    firstDeltaBucket: run.firstDeltaMs === null ? null : firstDeltaBucket(run.firstDeltaMs),
  };
}

/** An `approval` outbox row's payload (approval-outbox.ts): the approval as the API shows it, and its scope. */
export const approvalPayloadSchema = approvalView.extend({
  tenantId: z.string().optional(),
  environment: environmentSchema.optional(),
});
export type ApprovalPayload = z.infer<typeof approvalPayloadSchema>;

/** `version`: the run action's revision the payload was queued at; `environment`: the thread's. */
export function approvalRow(a: ApprovalPayload, version: number, environment: string): ApprovalRow {
  return {
    id: a.id,
    environment: a.environment ?? environment,
    agentId: a.agentId,
    runId: a.runId,
    toolCallId: a.toolCallId,
    toolName: a.toolName,
    status: a.status,
    by: a.by,
    requestedAt: a.requestedAt,
    expiresAt: a.expiresAt,
    decidedAt: a.decidedAt,
    decidedBy: a.decidedBy,
    reason: a.reason,
    version,
  };
}

/** `zero`: the call's name, status and times only; its input and output stay in the thread. */
export function toolCallRow(call: ToolCall, zero = false): ToolCallRow {
  return {
    id: call.id,
    runId: call.runId,
    name: call.name,
    input: zero ? "{}" : JSON.stringify(call.input),
    output: zero || call.output === null ? null : JSON.stringify(call.output),
    status: call.status,
    version: call.revision,
    createdAt: iso(call.createdAt),
    endedAt: isoOrNull(call.endedAt),
  };
}

export function usageRow(u: UsageRecord, agentId: string, version: number): UsageRow {
  return {
    runId: u.runId,
    turn: u.turn,
    agentId,
    day: day(u.createdAt),
    provider: u.provider,
    model: u.model,
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    version,
    createdAt: iso(u.createdAt),
  };
}

/** The facts of the session row that the drain reads from the thread's SQLite in one statement. */
export const sessionFactsSchema = z.object({
  /** The leaf as `EntryStore.latestLeaf` finds it; null for a thread without entries. */
  leaf_id: z.string().nullable(),
  leaf_agent_version: z.number().int().nullable(),
  message_count: z.number(),
  last_message_at: z.number().nullable(),
  last_entry_at: z.number().nullable(),
  last_run_at: z.number().nullable(),
  first_user_text: z.unknown(),
  last_run_id: z.string().nullable(),
  last_run_status: z.string().nullable(),
  /** The `handoff` meta value; null in agent mode. */
  handoff_json: z.string().nullable(),
});
export type SessionFacts = z.infer<typeof sessionFactsSchema>;

/** The session row as the thread sees it now. `projectedSeq` is the watermark this batch carries D1 to. */
export function sessionSnapshot(
  binding: ThreadBinding,
  facts: SessionFacts,
  leaf: { id: string; agentVersion: number | null } | null,
  version: number,
  projectedSeq: number,
): SessionSnapshot {
  const retention = binding.artifact.limits?.retention;
  const hasRetention = retention?.maxAgeDays !== undefined || retention?.maxMessagesPerThread !== undefined;
  return {
    agentId: binding.agentId,
    agentName: binding.artifact.name,
    environment: binding.environment,
    agentVersion: binding.version,
    versionId: binding.versionId,
    artifactDigest: binding.digest,
    leafVersion: leaf?.agentVersion ?? binding.version,
    state: JSON.stringify({
      leafId: leaf?.id ?? null,
      lastRun:
        facts.last_run_id === null ? null : { id: facts.last_run_id, status: String(facts.last_run_status) },
    }),
    mode: facts.handoff_json === null ? "agent" : "handoff",
    // Zero retention: the title is the first user message, so there is none.
    title:
      zeroRetentionIdleMinutes(binding.artifact) === null && typeof facts.first_user_text === "string"
        ? titleFrom(facts.first_user_text)
        : null,
    messageCount: facts.message_count,
    lastMessageAt: isoOrNull(facts.last_message_at),
    projectedSeq,
    retentionMaxAgeDays: retention?.maxAgeDays ?? null,
    retentionMaxMessages: retention?.maxMessagesPerThread ?? null,
    retentionDueAt: hasRetention ? iso(binding.boundAt + DAY_MS) : null,
    version,
    updatedAt: iso(Math.max(binding.boundAt, facts.last_entry_at ?? 0, facts.last_run_at ?? 0)),
  };
}

/** A retention mark as D1 mirrors it, given what the thread still holds. */
export function retentionPass(
  mark: RetentionMark,
  held: { survivorIds: string[]; rootIds: string[]; survivingToolCallIds: string[] },
): RetentionPass {
  return {
    throughSeq: mark.throughSeq,
    survivorIds: held.survivorIds,
    rootIds: held.rootIds,
    toolCallsBefore: mark.toolCallsBefore === null ? null : iso(mark.toolCallsBefore),
    survivingToolCallIds: held.survivingToolCallIds,
  };
}
