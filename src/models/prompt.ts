// Builds the model prompt from a thread branch: instructions first, then the newest history that fits the budget.
import type {
  JSONValue,
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4TextPart,
  LanguageModelV4ToolResultOutput,
} from "@ai-sdk/provider";
import { base64Decode } from "../shared/bytes";

export interface BranchToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/**
 * An attachment of a user message (docs/protocol.md#attachments): its metadata and, once read for a prompt, its bytes
 * as standard base64 (`data`; `null` when the bytes are no longer stored). Absent `data` = not read.
 */
export interface PromptAttachment {
  id: string;
  sha256: string;
  mediaType: string;
  size: number;
  name: string;
  data?: string | null;
}

/** One message on the branch path, oldest first, as the thread stores it. */
export type BranchMessage =
  | { role: "user"; text: string; attachments?: PromptAttachment[] }
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

/** What an image costs a prompt budget: a fixed estimate (providers charge roughly 800–1,600 tokens an image). */
export const IMAGE_TOKENS = 1000;
/** A PDF is estimated by its size: this many tokens per started `PDF_PAGE_BYTES` (about a page). */
export const PDF_PAGE_TOKENS = 1500;
export const PDF_PAGE_BYTES = 50 * 1024;

/** The header of an inlined text attachment, which the `local` model also reads back to name it. */
export const textAttachmentHeader = (a: { name: string; mediaType: string }): string =>
  `Attachment ${a.name} (${a.mediaType}):\n`;

const isInlinedText = (mediaType: string): boolean => mediaType.startsWith("text/");

/** The fixed estimate an attachment costs a prompt budget (docs/api.md#attachments): never its bytes read. */
export function attachmentTokens(a: { name: string; mediaType: string; size: number }): number {
  if (a.mediaType.startsWith("image/")) return IMAGE_TOKENS;
  if (a.mediaType === "application/pdf")
    return Math.max(1, Math.ceil(a.size / PDF_PAGE_BYTES)) * PDF_PAGE_TOKENS;
  return estimateTokens(textAttachmentHeader(a).length + a.size);
}

/** A message's cost in a prompt budget: its text, and each attachment's fixed estimate. */
export function messageTokens(message: BranchMessage): number {
  const text = estimateTokens(messageChars(message));
  if (message.role !== "user" || message.attachments === undefined) return text;
  return message.attachments.reduce((sum, a) => sum + attachmentTokens(a), text);
}

/**
 * An attachment as a prompt part: images and PDF as file parts with base64 data (a string, so the audit digest covers
 * the bytes), text inlined after a header line, and a note when its bytes are no longer stored.
 */
function attachmentPart(a: PromptAttachment): LanguageModelV4TextPart | LanguageModelV4FilePart {
  if (a.data === undefined || a.data === null) {
    return { type: "text", text: `Attachment ${a.name} (${a.mediaType}) is no longer stored.` };
  }
  if (isInlinedText(a.mediaType)) {
    const bytes = base64Decode(a.data) ?? new Uint8Array();
    return { type: "text", text: textAttachmentHeader(a) + new TextDecoder().decode(bytes) };
  }
  return { type: "file", mediaType: a.mediaType, filename: a.name, data: { type: "data", data: a.data } };
}

function toModelMessage(message: BranchMessage): LanguageModelV4Message | null {
  switch (message.role) {
    case "user":
      return {
        role: "user",
        content: [{ type: "text", text: message.text }, ...(message.attachments ?? []).map(attachmentPart)],
      };
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
 * The messages of the branch a prompt keeps: the newest units that fit in `maxContextTokens` (instructions included).
 * The latest user message and everything after it are always kept, even over budget: a turn without its question is
 * useless. The kept window starts at a user message, since some providers refuse a conversation that opens otherwise.
 * Attachments cost their fixed estimate, so the window is the same before and after their bytes are read.
 */
export function keptMessages({ instructions, branch, maxContextTokens }: BuildPromptInput): BranchMessage[] {
  const grouped = units(branch);
  let required = grouped.length;
  for (let i = grouped.length - 1; i >= 0; i--) {
    if (grouped[i]?.[0]?.role === "user") {
      required = i;
      break;
    }
  }
  const cost = (unit: BranchMessage[]) => unit.reduce((sum, m) => sum + messageTokens(m), 0);
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
  return grouped.slice(start).flat();
}

/** System instructions, then the kept messages (`keptMessages`), attachments as their parts. */
export function buildPrompt(input: BuildPromptInput): LanguageModelV4Prompt {
  const prompt: LanguageModelV4Prompt = [];
  if (input.instructions !== "") prompt.push({ role: "system", content: input.instructions });
  for (const message of keptMessages(input)) {
    const converted = toModelMessage(message);
    if (converted) prompt.push(converted);
  }
  return prompt;
}
