// One `agent_messages` row, typed once: the projection writes it and the sessions API reads it back.
import { z } from "zod";
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
  /** Only the projection's upsert guard reads it. */
  version: number;
  createdAt: string;
}

/** The row as a reader gets it: its tool calls parsed (null when unreadable), without the projection's version. */
export type MessageRecord = Omit<MessageRow, "toolCalls" | "version"> & { toolCalls: JsonValue | null };

/** The columns a read selects, in the order of `messageRecordSchema`. */
export const MESSAGE_COLUMNS = `id, seq, parent_id, run_id, kind, role, content, status, tool_call_id, tool_name,
  tool_calls, created_at`;

function jsonOrNull(text: string): JsonValue | null {
  try {
    return parseJsonColumn(text);
  } catch {
    return null;
  }
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
      createdAt: r.created_at,
    }),
  );
