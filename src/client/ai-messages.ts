// A thread's stored branch as AI SDK UI messages (docs/api.md#ai-sdk-transport): user and assistant messages, and a
// run's approvals and client tool calls as tool parts of its assistant message.
import type { UIMessage } from "ai";
import type { AttachmentRef, WireEntry } from "../shared/protocol";
import { metadataOfEntry } from "./ai-run-log";

/** What each UI message carries about the thread entry behind it. */
export interface AgentThreadsMessageMetadata {
  /** The stored entry (absent on an assistant message until its reply is sealed). */
  entryId?: string;
  parentId?: string | null;
  /** The run that wrote (or writes) an assistant message. */
  runId?: string;
  /** How the reply ended: `complete`, `interrupted` or `failed`. */
  status?: "complete" | "interrupted" | "failed";
  /** A person's reply in handoff (`role: "human_agent"`), shown as an assistant message. */
  authorName?: string;
  /**
   * A user message's files as the thread stores them (docs/client.md#attachments): read one's bytes with the
   * connection's `downloadAttachment(id)` (they need the launch token, so no URL is given).
   */
  attachments?: AttachmentRef[];
}

export type AgentThreadsUIMessage = UIMessage<AgentThreadsMessageMetadata>;
type Part = AgentThreadsUIMessage["parts"][number];
/** A tool part as this module writes it (the union's members share these fields). */
type ToolPart = Extract<Part, { type: `tool-${string}` }>;

/** A user message is named by its `clientMessageId`, an assistant message by its run (known before its entry). */
export function messageIdOf(entry: WireEntry): string {
  if (entry.role === "user") return entry.clientMessageId ?? entry.id;
  return entry.runId ?? entry.id;
}

const isReply = (entry: WireEntry): boolean =>
  entry.kind === "message" && (entry.role === "assistant" || entry.role === "human_agent");

function toolPart(parts: Part[], toolCallId: string): ToolPart | undefined {
  return parts.find((part): part is ToolPart => "toolCallId" in part && part.toolCallId === toolCallId);
}

/** Applies an action entry (approval request, decision, client tool request) to its run's message parts. */
function applyAction(parts: Part[], entry: WireEntry): void {
  if (entry.approval !== undefined) {
    const { approvalId, toolCallId, name, input } = entry.approval;
    if (toolPart(parts, toolCallId) !== undefined) return;
    parts.push({
      type: `tool-${name}`,
      toolCallId,
      state: "approval-requested",
      input,
      providerExecuted: true,
      approval: { id: approvalId },
    } as ToolPart);
  } else if (entry.decision !== undefined) {
    const { approvalId, decision, reason } = entry.decision;
    const part = parts.find((p) => "approval" in p && p.approval?.id === approvalId) as ToolPart | undefined;
    if (part === undefined) return;
    const approved = decision === "approve";
    Object.assign(part, {
      state: approved ? "approval-responded" : "output-denied",
      approval: { id: approvalId, approved, ...(reason !== null ? { reason } : {}) },
    });
  } else if (entry.toolRequest !== undefined) {
    const { toolCallId, name, input } = entry.toolRequest;
    const part = toolPart(parts, toolCallId);
    if (part !== undefined) Object.assign(part, { state: "input-available", providerExecuted: false });
    else parts.push({ type: `tool-${name}`, toolCallId, state: "input-available", input } as ToolPart);
  }
}

/**
 * UI messages for a branch of entries. A run's approval and client tool entries become tool parts of its assistant
 * message (in a step before its text); a client tool of a run that ended shows `output-available` with `output: null`
 * (the thread keeps its answer, not the page). Event entries are left out.
 */
export function entriesToUIMessages(entries: WireEntry[]): AgentThreadsUIMessage[] {
  const messages: AgentThreadsUIMessage[] = [];
  const byRun = new Map<string, AgentThreadsUIMessage>();
  for (const entry of entries) {
    if (entry.kind === "message" && entry.role === "user") {
      messages.push({
        id: messageIdOf(entry),
        role: "user",
        metadata: metadataOfEntry(entry),
        parts: [{ type: "text", text: entry.text, state: "done" }],
      });
    } else if (isReply(entry)) {
      const text: Part = { type: "text", text: entry.text, state: "done" };
      const pending = entry.runId !== null ? byRun.get(entry.runId) : undefined;
      if (pending !== undefined) {
        byRun.delete(entry.runId as string);
        for (const part of pending.parts) {
          if ("toolCallId" in part && part.state === "input-available")
            Object.assign(part, { state: "output-available", output: null });
        }
        pending.parts.push({ type: "step-start" }, text);
        pending.metadata = metadataOfEntry(entry);
      } else {
        messages.push({
          id: messageIdOf(entry),
          role: "assistant",
          metadata: metadataOfEntry(entry),
          parts: [text],
        });
      }
    } else if (
      entry.runId !== null &&
      (entry.approval ?? entry.decision ?? entry.toolRequest) !== undefined
    ) {
      let message = byRun.get(entry.runId);
      if (message === undefined) {
        message = {
          id: entry.runId,
          role: "assistant",
          metadata: { runId: entry.runId },
          parts: [{ type: "step-start" }],
        };
        byRun.set(entry.runId, message);
        messages.push(message);
      }
      applyAction(message.parts, entry);
    }
  }
  return messages;
}
