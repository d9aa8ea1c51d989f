// Reading the parts of a projected message that arrive as JSON (tool calls, version changes) without trusting them:
// anything of an unexpected shape is left out rather than shown wrongly.
import type { MessageResponse } from "../../client/admin";

export interface ToolCallView {
  toolCallId: string;
  toolName: string;
  input: unknown;
  output: unknown;
  isError: boolean;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** `toolCalls` of a reply (docs/storage.md, "Tool history on the reply entry"). */
export function toolCallsOf(message: Pick<MessageResponse, "toolCalls">): ToolCallView[] {
  const raw = message.toolCalls;
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((call): ToolCallView[] => {
    if (!isRecord(call) || typeof call.toolName !== "string") return [];
    return [
      {
        toolCallId: typeof call.toolCallId === "string" ? call.toolCallId : "",
        toolName: call.toolName,
        input: call.input,
        output: call.output,
        isError: call.isError === true,
      },
    ];
  });
}

/** A `version_change` entry's move (its content is the entry body as JSON). */
export function versionChangeOf(
  message: Pick<MessageResponse, "kind" | "content">,
): { fromVersion: number; toVersion: number; by: string } | null {
  if (message.kind !== "version_change") return null;
  try {
    const body: unknown = JSON.parse(message.content);
    if (!isRecord(body) || typeof body.fromVersion !== "number" || typeof body.toVersion !== "number")
      return null;
    return {
      fromVersion: body.fromVersion,
      toVersion: body.toVersion,
      by: body.by === "visitor" ? "the visitor" : "the tenant",
    };
  } catch {
    return null;
  }
}

/** What an `approval_request`, `approval_decision` or `tool_request` entry says (its content is its body as JSON). */
export type ActionView =
  | {
      kind: "approval_request";
      approvalId: string;
      toolName: string;
      input: unknown;
      by: string;
      expiresAt: string | null;
      title: string | null;
    }
  | { kind: "approval_decision"; approvalId: string; decision: string; by: string; reason: string | null }
  | { kind: "tool_request"; toolCallId: string; toolName: string; input: unknown; expiresAt: string | null };

const text = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** The approval or client tool request an action entry carries; null for any other entry or a body it cannot read. */
export function actionOf(message: Pick<MessageResponse, "kind" | "content">): ActionView | null {
  if (!["approval_request", "approval_decision", "tool_request"].includes(message.kind)) return null;
  let body: unknown;
  try {
    body = JSON.parse(message.content);
  } catch {
    return null;
  }
  if (!isRecord(body)) return null;
  if (message.kind === "approval_request" && isRecord(body.approval)) {
    const a = body.approval;
    if (typeof a.approvalId !== "string" || typeof a.name !== "string") return null;
    return {
      kind: "approval_request",
      approvalId: a.approvalId,
      toolName: a.name,
      input: a.input,
      by: text(a.by) ?? "any",
      expiresAt: text(a.expiresAt),
      title: text(a.title),
    };
  }
  if (message.kind === "approval_decision" && isRecord(body.decision)) {
    const d = body.decision;
    if (typeof d.approvalId !== "string" || typeof d.decision !== "string") return null;
    return {
      kind: "approval_decision",
      approvalId: d.approvalId,
      decision: d.decision,
      by: text(d.by) ?? "system",
      reason: text(d.reason),
    };
  }
  if (message.kind === "tool_request" && isRecord(body.toolRequest)) {
    const t = body.toolRequest;
    if (typeof t.toolCallId !== "string" || typeof t.name !== "string") return null;
    return {
      kind: "tool_request",
      toolCallId: t.toolCallId,
      toolName: t.name,
      input: t.input,
      expiresAt: text(t.expiresAt),
    };
  }
  return null;
}

/** Who an approval's `by` or a decision's `by` names, in words. */
export function deciderLabel(by: string): string {
  switch (by) {
    case "user":
      return "the user";
    case "tenant":
      return "your team";
    case "any":
      return "the user or your team";
    case "timeout":
      return "the clock (it expired)";
    default:
      return "the platform";
  }
}

export function roleLabel(message: Pick<MessageResponse, "role" | "kind" | "authorName">): string {
  switch (message.role) {
    case "user":
      return "User";
    case "assistant":
      return "Assistant";
    case "human_agent":
      return message.authorName ? `${message.authorName} (team)` : "Team member";
    case "system":
      return "System";
    case "tool":
      return "Tool";
    default:
      return message.kind.replaceAll("_", " ");
  }
}

/** What the alternatives at a fork are, from their roles. */
export function forkLabel(siblings: readonly Pick<MessageResponse, "role">[]): string {
  if (siblings.every((s) => s.role === "user")) return "edited or resent message";
  if (siblings.every((s) => s.role === "assistant")) return "regenerated reply";
  return "branch";
}

/** Pretty JSON for a <pre>: the value as text, never markup. */
export function jsonText(value: unknown): string {
  if (value === undefined) return "—";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}
