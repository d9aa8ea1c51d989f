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
