// Tool calls as part of the branch: recorded on the assistant entry of their run, replayed as prompt messages.
import type { JSONValue } from "@ai-sdk/provider";
import { z } from "zod";
import type { BranchMessage } from "../../models/prompt";
import type { TurnStep } from "../../models/turn";

/**
 * One tool round trip as the assistant entry's body stores it (`body.toolCalls`, redacted like the rest of the body).
 * `step` is the model call that asked for it; `textOffset` is how much of the entry's `text` had been written when
 * that step ended, so a later prompt can put each stretch of text before the calls that followed it.
 */
export interface StoredToolCall {
  toolCallId: string;
  toolName: string;
  input: JSONValue;
  output: JSONValue;
  isError?: boolean;
  step: number;
  textOffset: number;
}

const storedToolCallSchema = z.object({
  toolCallId: z.string(),
  toolName: z.string(),
  input: z.json(),
  output: z.json(),
  isError: z.boolean().optional(),
  step: z.number().int().min(0),
  textOffset: z.number().int().min(0),
});

const storedToolCallsSchema = z.array(storedToolCallSchema);

/**
 * The characters of tool answers one reply keeps for later prompts (each answer is at most 64 KiB; a turn has at
 * most a few rounds). Past it an answer is kept as `OMITTED_OUTPUT`, so the call still has its result.
 */
export const MAX_STORED_TOOL_OUTPUT_CHARS = 256 * 1024;
export const OMITTED_OUTPUT = "[The tool's answer was too large to keep in the conversation history.]";

const jsonChars = (value: JSONValue): number =>
  (typeof value === "string" ? value : JSON.stringify(value)).length;

/**
 * The tool calls of a turn's steps that got an answer, in order; a call the turn never answered (it was cancelled or
 * died first) is left out, so what is stored is always whole pairs.
 */
export function toolCallsOfSteps(steps: readonly TurnStep[], text: string): StoredToolCall[] {
  const out: StoredToolCall[] = [];
  let written = 0;
  let outputChars = 0;
  steps.forEach((step, index) => {
    written += step.text.length;
    const waiting = new Set(step.waiting ?? []);
    for (const call of step.toolCalls) {
      if (waiting.has(call.toolCallId)) continue;
      outputChars += jsonChars(call.outcome.output);
      out.push({
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        // Providers want an object here; a call whose arguments were not JSON was answered with an error.
        input: (call.input ?? {}) as JSONValue,
        output: outputChars > MAX_STORED_TOOL_OUTPUT_CHARS ? OMITTED_OUTPUT : call.outcome.output,
        ...(call.outcome.isError ? { isError: true } : {}),
        step: index,
        textOffset: Math.min(written, text.length),
      });
    }
  });
  return out;
}

/** The stored tool calls of an entry body; none when it holds none (or holds something else under the name). */
export function storedToolCalls(body: unknown): StoredToolCall[] {
  if (typeof body !== "object" || body === null || !("toolCalls" in body)) return [];
  const parsed = storedToolCallsSchema.safeParse(body.toolCalls);
  // zod's JSON is a narrower type than the provider's: every value it admits is one.
  return parsed.success ? (parsed.data as StoredToolCall[]) : [];
}

/**
 * An assistant reply as prompt messages: for each step that called tools, the text written so far and its calls,
 * then their results (role "tool"); then the rest of the text. A reply without tool calls is one message.
 */
export function assistantMessages(text: string, calls: readonly StoredToolCall[]): BranchMessage[] {
  const out: BranchMessage[] = [];
  let from = 0;
  let i = 0;
  while (i < calls.length) {
    const first = calls[i];
    if (first === undefined) break;
    const round: StoredToolCall[] = [];
    while (i < calls.length && calls[i]?.step === first.step) {
      const call = calls[i];
      if (call !== undefined) round.push(call);
      i++;
    }
    const to = Math.max(from, Math.min(first.textOffset, text.length));
    out.push({
      role: "assistant",
      text: text.slice(from, to),
      toolCalls: round.map((call) => ({
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: call.input,
      })),
    });
    for (const call of round) {
      out.push({
        role: "tool",
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: call.output,
        ...(call.isError ? { isError: true } : {}),
      });
    }
    from = to;
  }
  const rest = text.slice(from);
  if (rest.length > 0) out.push({ role: "assistant", text: rest });
  return out;
}
