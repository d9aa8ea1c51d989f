// One `agent_messages` row, typed once: the projection writes it and the sessions API reads it back.
import { z } from "zod";
import { type AttachmentRef, attachmentRef } from "../../shared/protocol";
import { parseJsonColumn } from "../json-column";
import type { JsonValue } from "../redact";

/** An `agent_messages` row as the projection writes it (the tenant, session and subject come from the registry). */
export interface MessageRow {
  id: string;
  seq: number;
  parentId: string | null;
  runId: string | null;
  kind: string;
  role: string | null;
  content: string;
  status: string | null;
  toolCallId: string | null;
  toolName: string | null;
  /** JSON text. */
  toolCalls: string | null;
  /** A user message's attachment refs, JSON text; null when none. */
  attachments: string | null;
  /** `human_agent` messages: the person's display name. */
  authorName: string | null;
  /** The agent version in effect at the entry (docs/api.md): the one that produced it. */
  agentVersion: number;
  /** Only the projection's upsert guard reads it. */
  version: number;
  createdAt: string;
}

/**
 * The row as a reader gets it: its tool calls parsed (null when unreadable), its current feedback (from
 * `agent_message_feedback`; null when none or cleared), without the projection's version.
 */
export type MessageRecord = Omit<MessageRow, "toolCalls" | "attachments" | "version" | "agentVersion"> & {
  toolCalls: JsonValue | null;
  /** The refs (docs/api.md#attachments); null when none or unreadable. */
  attachments: AttachmentRef[] | null;
  /** The agent version that produced it; null for a row projected before versions were recorded and not backfilled. */
  version: number | null;
  feedback: { rating: "up" | "down"; comment: string | null; at: string } | null;
  /** Assistant messages: the input digest of the run that produced it (from `agent_runs`); null otherwise. */
  inputDigest: string | null;
};

/**
 * The columns a read selects (`m`: agent_messages, `f`: its feedback, `r`: the run of an assistant message), in the
 * order of `messageRecordSchema`.
 */
export const MESSAGE_COLUMNS = `m.id, m.seq, m.parent_id, m.run_id, m.kind, m.role, m.content, m.status,
  m.tool_call_id, m.tool_name, m.tool_calls, m.attachments, m.author_name, m.agent_version, f.rating AS feedback_rating,
  f.comment AS feedback_comment, f.updated_at AS feedback_at, r.input_digest, m.created_at`;

function jsonOrNull(text: string): JsonValue | null {
  try {
    return parseJsonColumn(text);
  } catch {
    return null;
  }
}

function attachmentsOrNull(text: string): AttachmentRef[] | null {
  const parsed = z.array(attachmentRef).safeParse(jsonOrNull(text));
  return parsed.success ? parsed.data : null;
}

export const messageRecordSchema = z
  .object({
    id: z.string(),
    seq: z.number().int(),
    parent_id: z.string().nullable(),
    run_id: z.string().nullable(),
    kind: z.string(),
    role: z.string().nullable(),
    content: z.string(),
    status: z.string().nullable(),
    tool_call_id: z.string().nullable(),
    tool_name: z.string().nullable(),
    tool_calls: z.string().nullable(),
    attachments: z.string().nullable(),
    author_name: z.string().nullable(),
    agent_version: z.number().int().nullable(),
    feedback_rating: z.enum(["up", "down"]).nullable(),
    feedback_comment: z.string().nullable(),
    feedback_at: z.string().nullable(),
    input_digest: z.string().nullable(),
    created_at: z.string(),
  })
  .transform(
    (r): MessageRecord => ({
      id: r.id,
      seq: r.seq,
      parentId: r.parent_id,
      runId: r.run_id,
      kind: r.kind,
      role: r.role,
      content: r.content,
      status: r.status,
      toolCallId: r.tool_call_id,
      toolName: r.tool_name,
      toolCalls: r.tool_calls === null ? null : jsonOrNull(r.tool_calls),
      attachments: r.attachments === null ? null : attachmentsOrNull(r.attachments),
      authorName: r.author_name,
      version: r.agent_version,
      feedback:
        r.feedback_rating === null || r.feedback_at === null
          ? null
          : { rating: r.feedback_rating, comment: r.feedback_comment, at: r.feedback_at },
      inputDigest: r.input_digest,
      createdAt: r.created_at,
    }),
  );
