// The deterministic offline model (`provider: "local"`): streams replies, tool calls, failures and hangs on demand.
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import type { z } from "zod";
import type { localModelOptionsSchema } from "../control/artifact";
import { base64Decode } from "../shared/bytes";
import { toHex } from "../shared/hex";

export type LocalModelOptions = z.infer<typeof localModelOptionsSchema>;

export const LOCAL_DEFAULT_CHUNKS = 8;

/** The failure a `failAfterChunks` stream reports, shaped like a provider's 5xx so it maps the same way. */
export class LocalModelFailure extends Error {
  readonly statusCode = 503;
  readonly isRetryable = true;
  constructor() {
    super("Local model failure requested by failAfterChunks.");
    this.name = "LocalModelFailure";
  }
}

const LOREM = (
  "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore " +
  "magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo " +
  "consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint " +
  "occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum"
).split(" ");

const encoder = new TextEncoder();

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

const tokens = (chars: number): number => Math.ceil(chars / 4);

function usage(inputChars: number, outputChars: number): LanguageModelV4Usage {
  const input = tokens(inputChars);
  const output = tokens(outputChars);
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

function outputText(output: LanguageModelV4ToolResultOutput): string {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value;
    case "json":
    case "error-json":
      return JSON.stringify(output.value);
    // Spelled as the runtime's own denial result (docs/tools.md#approvals), so a test reads the same either way.
    case "execution-denied":
      return JSON.stringify({ denied: true, reason: output.reason ?? null });
    case "content":
      return output.value.map((part) => (part.type === "text" ? part.text : "")).join("");
  }
}

/** Every character the prompt would cost a real model: system, text, tool inputs and tool outputs. */
function promptChars(prompt: LanguageModelV4Prompt): number {
  let chars = 0;
  for (const message of prompt) {
    if (message.role === "system") {
      chars += message.content.length;
      continue;
    }
    for (const part of message.content) {
      if (part.type === "text" || part.type === "reasoning") chars += part.text.length;
      else if (part.type === "tool-call") chars += JSON.stringify(part.input ?? null).length;
      else if (part.type === "tool-result") chars += outputText(part.output).length;
    }
  }
  return chars;
}

/** An attachment of the latest user message as the local model saw it: from the part's own bytes. */
interface SeenAttachment {
  name: string;
  mediaType: string;
  size: number;
  sha256: string;
}

interface PromptFacts {
  instructions: string;
  userText: string;
  attachments: SeenAttachment[];
  /** Tool results that arrived after the latest user message: this is a follow-up step of a tool round trip. */
  toolResults: { toolName: string; text: string }[];
}

async function readPrompt(prompt: LanguageModelV4Prompt): Promise<PromptFacts> {
  const instructions = prompt
    .filter((m) => m.role === "system")
    .map((m) => m.content)
    .join("\n");
  let lastUser = -1;
  prompt.forEach((m, i) => {
    if (m.role === "user") lastUser = i;
  });
  const user = prompt[lastUser];
  // The message's own text is its first part; attachments follow it (src/models/prompt.ts).
  const [first, ...rest] = user?.role === "user" ? user.content : [];
  const userText = first?.type === "text" ? first.text : "";
  const attachments = user?.role === "user" ? await seenAttachments(rest) : [];
  const toolResults: PromptFacts["toolResults"] = [];
  for (const message of prompt.slice(lastUser + 1)) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-result")
        toolResults.push({ toolName: part.toolName, text: outputText(part.output) });
    }
  }
  return { instructions, userText, attachments, toolResults };
}

/** An inlined text attachment: `Attachment <name> (<type>):` on its own line, then its text. */
const TEXT_ATTACHMENT = /^Attachment (.+) \((text\/[^)\s]+)\):\n/;

/** The attachments among a user message's parts after its text: file parts by their bytes, text ones by their header. */
async function seenAttachments(
  parts: Extract<LanguageModelV4Prompt[number], { role: "user" }>["content"],
): Promise<SeenAttachment[]> {
  const seen: SeenAttachment[] = [];
  for (const part of parts) {
    let bytes: Uint8Array | null = null;
    let name = "";
    let mediaType = "";
    if (part.type === "file" && part.data.type === "data") {
      const data = part.data.data;
      bytes = typeof data === "string" ? base64Decode(data) : data;
      name = part.filename ?? "";
      mediaType = part.mediaType;
    } else if (part.type === "text") {
      const header = TEXT_ATTACHMENT.exec(part.text);
      if (header === null) continue;
      bytes = encoder.encode(part.text.slice(header[0].length));
      name = header[1] ?? "";
      mediaType = header[2] ?? "";
    }
    if (bytes === null) continue;
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    seen.push({ name, mediaType, size: bytes.byteLength, sha256: toHex(digest) });
  }
  return seen;
}

/** The line the reply opens with when the message had attachments (docs/protocol.md#attachments): what the model saw. */
export function attachmentsLine(attachments: readonly SeenAttachment[]): string {
  const named = attachments.map(
    (a) => `${a.name} (${a.mediaType}, ${a.size} bytes, sha256 ${a.sha256.slice(0, 12)})`,
  );
  return `Attachments: ${named.join("; ")}\n`;
}

/** Pseudo-random but reproducible words: SHA-256 chained over the seed, one byte per word. */
async function lorem(seed: Uint8Array, minWords: number): Promise<string> {
  const wordCount = Math.max(minWords, 12 + ((seed[0] ?? 0) % 24));
  const words: string[] = [];
  let block = seed;
  while (words.length < wordCount) {
    for (const byte of block) {
      if (words.length === wordCount) break;
      words.push(LOREM[byte % LOREM.length] ?? "lorem");
    }
    block = await sha256(toHex(block));
  }
  const sentence = words.join(" ");
  return `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.`;
}

/** Splits text into at most `count` near-equal pieces on code-point boundaries (never splits a surrogate pair). */
export function splitIntoChunks(text: string, count: number): string[] {
  const points = Array.from(text);
  const n = Math.max(1, Math.min(count, points.length));
  const pieces: string[] = [];
  for (let i = 0; i < n; i++) {
    pieces.push(
      points.slice(Math.floor((i * points.length) / n), Math.floor(((i + 1) * points.length) / n)).join(""),
    );
  }
  return pieces;
}

interface PlannedCall {
  toolCallId: string;
  toolName: string;
  /** The input as JSON text. */
  input: string;
}

type Plan = { kind: "text"; text: string; chunks: string[] } | { kind: "tool-calls"; calls: PlannedCall[] };

async function plan(
  modelId: string,
  options: LocalModelOptions,
  prompt: LanguageModelV4Prompt,
): Promise<Plan> {
  const facts = await readPrompt(prompt);
  const chunkCount = options.chunks ?? LOCAL_DEFAULT_CHUNKS;
  const seed = await sha256(`${facts.instructions}\n${facts.userText}`);
  if (facts.toolResults.length === 0) {
    const callId = `call_${toHex(seed.slice(0, 8))}`;
    // One call keeps its id; several in one step get the same id suffixed with their index.
    if (options.toolCall !== undefined) {
      const { name, input } = options.toolCall;
      return {
        kind: "tool-calls",
        calls: [{ toolCallId: callId, toolName: name, input: JSON.stringify(input) }],
      };
    }
    if (options.toolCalls !== undefined) {
      return {
        kind: "tool-calls",
        calls: options.toolCalls.map(({ name, input }, index) => ({
          toolCallId: `${callId}_${index}`,
          toolName: name,
          input: JSON.stringify(input),
        })),
      };
    }
  }
  let text: string;
  if (facts.toolResults.length > 0) {
    text = facts.toolResults.map((r) => `The ${r.toolName} tool returned: ${r.text}`).join("\n");
  } else if (modelId === "echo") {
    text = `Echo: ${facts.userText}`;
  } else {
    text = await lorem(seed, chunkCount);
  }
  if (facts.toolResults.length === 0 && facts.attachments.length > 0)
    text = attachmentsLine(facts.attachments) + text;
  return { kind: "text", text, chunks: splitIntoChunks(text, chunkCount) };
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

/** Waits `ms`, or rejects as soon as the signal aborts; `scheduler.wait` where workerd offers it. */
async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) throw abortReason(signal);
  if (ms <= 0) return;
  if (typeof scheduler !== "undefined" && typeof scheduler.wait === "function") {
    await scheduler.wait(ms, signal ? { signal } : {});
    return;
  }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal ? abortReason(signal) : undefined);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Never resolves on its own: only an abort ends it (how a stuck upstream looks from here). */
function hang(signal: AbortSignal | undefined): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    if (!signal) return;
    if (signal.aborted) reject(abortReason(signal));
    else signal.addEventListener("abort", () => reject(abortReason(signal)), { once: true });
  });
}

const STOP: LanguageModelV4FinishReason = { unified: "stop", raw: "stop" };
const TOOL_CALLS: LanguageModelV4FinishReason = { unified: "tool-calls", raw: "tool_calls" };

async function* parts(
  modelId: string,
  options: LocalModelOptions,
  call: LanguageModelV4CallOptions,
): AsyncGenerator<LanguageModelV4StreamPart> {
  const signal = call.abortSignal;
  const delay = options.chunkDelayMs ?? 0;
  const step = await plan(modelId, options, call.prompt);
  const inputChars = promptChars(call.prompt);
  yield { type: "stream-start", warnings: [] };
  yield { type: "response-metadata", modelId };
  if (step.kind === "tool-calls") {
    let outputChars = 0;
    for (const call of step.calls) {
      await sleep(delay, signal);
      yield { type: "tool-input-start", id: call.toolCallId, toolName: call.toolName };
      yield { type: "tool-input-delta", id: call.toolCallId, delta: call.input };
      yield { type: "tool-input-end", id: call.toolCallId };
      yield { type: "tool-call", toolCallId: call.toolCallId, toolName: call.toolName, input: call.input };
      outputChars += call.input.length;
    }
    yield { type: "finish", finishReason: TOOL_CALLS, usage: usage(inputChars, outputChars) };
    return;
  }
  const failAt =
    options.failAfterChunks === undefined ? undefined : Math.min(options.failAfterChunks, step.chunks.length);
  const hangAt =
    options.hangAfterChunks === undefined ? undefined : Math.min(options.hangAfterChunks, step.chunks.length);
  yield { type: "text-start", id: "txt-0" };
  for (let sent = 0; ; sent++) {
    if (failAt === sent) {
      yield { type: "error", error: new LocalModelFailure() };
      yield { type: "finish", finishReason: { unified: "error", raw: "error" }, usage: usage(inputChars, 0) };
      return;
    }
    if (hangAt === sent) await hang(signal);
    const delta = step.chunks[sent];
    if (delta === undefined) break;
    await sleep(delay, signal);
    yield { type: "text-delta", id: "txt-0", delta };
  }
  yield { type: "text-end", id: "txt-0" };
  yield { type: "finish", finishReason: STOP, usage: usage(inputChars, step.text.length) };
}

export function createLocalModel(modelId: string, options: LocalModelOptions = {}): LanguageModelV4 {
  const model: LanguageModelV4 = {
    specificationVersion: "v4",
    provider: "local",
    modelId,
    supportedUrls: {},
    async doStream(call) {
      if (call.abortSignal?.aborted) throw abortReason(call.abortSignal);
      const iterator = parts(modelId, options, call);
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        async pull(controller) {
          const next = await iterator.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        async cancel() {
          await iterator.return(undefined);
        },
      });
      return { stream };
    },
    // Non-streaming callers get the same reply by draining the stream; a requested failure or hang applies too.
    async doGenerate(call) {
      const { stream } = await model.doStream(call);
      const content: LanguageModelV4Content[] = [];
      let text = "";
      let finishReason: LanguageModelV4FinishReason = STOP;
      let totals = usage(0, 0);
      for await (const part of stream) {
        if (part.type === "text-delta") text += part.delta;
        else if (part.type === "tool-call") content.push(part);
        else if (part.type === "error") throw part.error;
        else if (part.type === "finish") {
          finishReason = part.finishReason;
          totals = part.usage;
        }
      }
      if (text !== "") content.unshift({ type: "text", text });
      return { content, finishReason, usage: totals, warnings: [] };
    },
  };
  return model;
}
