// Builds the model prompt from a thread branch: instructions first, then the newest history that fits the budget.
import type {
  JSONValue,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
} from "@ai-sdk/provider";

export interface BranchToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** One message on the branch path, oldest first, as the thread stores it. */
export type BranchMessage =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; toolCalls?: BranchToolCall[] }
  | { role: "tool"; toolCallId: string; toolName: string; output: JSONValue; isError?: boolean };

/** A tool's answer as the model is handed it: text stays text, anything else is JSON, errors marked as errors. */
export function toolResultOutput(outcome: {
  output: JSONValue;
  isError?: boolean;
}): LanguageModelV4ToolResultOutput {
  if (outcome.isError) {
    return typeof outcome.output === "string"
      ? { type: "error-text", value: outcome.output }
      : { type: "error-json", value: outcome.output };
  }
  return typeof outcome.output === "string"
    ? { type: "text", value: outcome.output }
    : { type: "json", value: outcome.output };
}

export interface BuildPromptInput {
  instructions: string;
  branch: readonly BranchMessage[];
  maxContextTokens: number;
}

/** The estimate every budget in the product uses: about four characters per token. */
export const estimateTokens = (chars: number): number => Math.ceil(chars / 4);

export function messageChars(message: BranchMessage): number {
  if (message.role === "tool") {
    const output = typeof message.output === "string" ? message.output : JSON.stringify(message.output);
    return message.toolName.length + output.length;
  }
  let chars = message.text.length;
  if (message.role === "assistant") {
    for (const call of message.toolCalls ?? [])
      chars += call.toolName.length + JSON.stringify(call.input ?? null).length;
  }
  return chars;
}

function toModelMessage(message: BranchMessage): LanguageModelV4Message | null {
  switch (message.role) {
    case "user":
      return { role: "user", content: [{ type: "text", text: message.text }] };
    case "assistant": {
      const calls = message.toolCalls ?? [];
      // Providers refuse an assistant turn with no content (an interrupted, empty reply).
      if (message.text === "" && calls.length === 0) return null;
      return {
        role: "assistant",
        content: [
          ...(message.text === "" ? [] : [{ type: "text" as const, text: message.text }]),
          ...calls.map((call) => ({
            type: "tool-call" as const,
            toolCallId: call.toolCallId,
            toolName: call.toolName,
            input: call.input,
          })),
        ],
      };
    }
    case "tool":
      return {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: message.toolCallId,
            toolName: message.toolName,
            output: toolResultOutput(message),
          },
        ],
      };
  }
}

/**
 * Groups the branch into units that must be kept or dropped together: an assistant turn with tool calls and the
 * tool results answering it (providers refuse a tool result whose call is missing, and vice versa).
 */
function units(branch: readonly BranchMessage[]): BranchMessage[][] {
  const out: BranchMessage[][] = [];
  for (const message of branch) {
    const last = out.at(-1);
    const previous = last?.at(-1);
    const continuesToolUnit =
      message.role === "tool" &&
      previous !== undefined &&
      (previous.role === "tool" || (previous.role === "assistant" && (previous.toolCalls?.length ?? 0) > 0));
    if (continuesToolUnit && last) last.push(message);
    else out.push([message]);
  }
  return out;
}

/**
 * System instructions, then the newest units that fit in `maxContextTokens` (instructions included). The latest user
 * message and everything after it are always kept, even over budget: a turn without its question is useless. The
 * kept window starts at a user message, since some providers refuse a conversation that opens otherwise.
 */
export function buildPrompt({
  instructions,
  branch,
  maxContextTokens,
}: BuildPromptInput): LanguageModelV4Prompt {
  const grouped = units(branch);
  let required = grouped.length;
  for (let i = grouped.length - 1; i >= 0; i--) {
    if (grouped[i]?.[0]?.role === "user") {
      required = i;
      break;
    }
  }
  const cost = (unit: BranchMessage[]) => unit.reduce((sum, m) => sum + estimateTokens(messageChars(m)), 0);
  let used = estimateTokens(instructions.length);
  for (const unit of grouped.slice(required)) used += cost(unit);
  let start = required;
  while (start > 0) {
    const unit = grouped[start - 1];
    if (unit === undefined || used + cost(unit) > maxContextTokens) break;
    used += cost(unit);
    start--;
  }
  while (start < required && grouped[start]?.[0]?.role !== "user") start++;

  const prompt: LanguageModelV4Prompt = [];
  if (instructions !== "") prompt.push({ role: "system", content: instructions });
  for (const unit of grouped.slice(start)) {
    for (const message of unit) {
      const converted = toModelMessage(message);
      if (converted) prompt.push(converted);
    }
  }
  return prompt;
}
