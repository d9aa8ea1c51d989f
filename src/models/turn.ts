// Our thin turn loop over `LanguageModelV4.doStream` (not `streamText`, which costs ~10 ms CPU per turn in workerd).
import type {
  JSONValue,
  LanguageModelV4,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4ToolResultPart,
} from "@ai-sdk/provider";
import { toolResultOutput } from "./prompt";
import { isTimeoutError, type ModelError, modelErrors, toModelError } from "./provider-error";

export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface ToolCallRequest {
  toolCallId: string;
  toolName: string;
  /** The model's arguments, parsed from JSON (`undefined` when the model sent invalid JSON). */
  input: unknown;
}

/** What a tool execution hands back to the model. */
export interface ToolCallOutcome {
  output: JSONValue;
  isError?: boolean;
}

export interface TurnStep {
  text: string;
  /** In the order the model asked; a waiting call's outcome is filled in when it is decided or answered. */
  toolCalls: (ToolCallRequest & { outcome: ToolCallOutcome })[];
  usage: TurnUsage;
  finishReason: string;
  /** The calls of this step that wait for a person (the run's last step, while it is `requires_action`). */
  waiting?: string[];
}

/** What `onToolCall` answers for a call that waits for a decision or a client's answer: the turn stops after its step. */
export const WAIT = Symbol("wait");

export type TurnResult =
  | { status: "succeeded"; text: string; usage: TurnUsage; steps: TurnStep[] }
  /** The last step has calls waiting for a person (`waiting`): the run continues from `steps` later (`resume`). */
  | { status: "requires_action"; text: string; usage: TurnUsage; steps: TurnStep[] }
  | { status: "failed"; error: ModelError; text: string; usage: TurnUsage; steps: TurnStep[] }
  | { status: "aborted"; text: string; usage: TurnUsage; steps: TurnStep[] };

export interface RunTurnInput {
  model: LanguageModelV4;
  prompt: LanguageModelV4Prompt;
  tools?: LanguageModelV4FunctionTool[];
  signal: AbortSignal;
  /** Model calls allowed in this turn; each tool round trip costs one. */
  maxSteps: number;
  /** Fails the turn when the model sends nothing for this long (a stuck upstream); off when absent. */
  stallTimeoutMs?: number;
  onDelta: (text: string) => void;
  /** Runs a call, or answers `WAIT` when it waits for a person; the step's other calls still run. */
  onToolCall: (call: ToolCallRequest, signal: AbortSignal) => Promise<ToolCallOutcome | typeof WAIT>;
  /**
   * The model calls a waiting run already made, every call answered: the turn continues after them (their text is
   * already the reply's; their usage was already counted).
   */
  resume?: readonly TurnStep[];
  /** Called once per model call with that call's usage. */
  onUsage?: (usage: TurnUsage & { step: number }) => void;
  /**
   * Called as each model call starts, with its step (0 first) and the prompt it is handed (a copy the turn never
   * changes): what the run's audit digests (docs/api.md#audit-record). Must not block: it runs on the hot path.
   */
  onModelCall?: (call: { step: number; prompt: LanguageModelV4Prompt }) => void;
}

type Next =
  | { kind: "part"; part: LanguageModelV4StreamPart }
  | { kind: "done" }
  | { kind: "aborted" }
  | { kind: "stalled" };

/**
 * Reads a model stream part by part, but gives up the moment the turn is aborted or the stream stalls. One abort
 * listener and one stall timer serve the whole stream (re-armed only when it would fire early): a listener and a
 * timer per part cost more than the rest of reading a fast stream.
 */
class PartReader {
  readonly #reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>;
  readonly #signal: AbortSignal;
  readonly #stallTimeoutMs: number | undefined;
  #interrupted: Next | null = null;
  #waiter: { resolve: (next: Next) => void; reject: (error: unknown) => void; since: number } | null = null;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #onAbort = () => this.#interrupt({ kind: "aborted" });

  constructor(
    reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>,
    signal: AbortSignal,
    stallTimeoutMs: number | undefined,
  ) {
    this.#reader = reader;
    this.#signal = signal;
    this.#stallTimeoutMs = stallTimeoutMs;
    signal.addEventListener("abort", this.#onAbort, { once: true });
  }

  next(): Promise<Next> {
    if (this.#signal.aborted) return Promise.resolve({ kind: "aborted" });
    if (this.#interrupted !== null) return Promise.resolve(this.#interrupted);
    return new Promise<Next>((resolve, reject) => {
      const waiter = { resolve, reject, since: Date.now() };
      this.#waiter = waiter;
      this.#armStallTimer(this.#stallTimeoutMs);
      this.#reader.read().then(
        (r) => {
          if (this.#waiter !== waiter) return;
          this.#waiter = null;
          resolve(r.done ? { kind: "done" } : { kind: "part", part: r.value });
        },
        (error: unknown) => {
          if (this.#waiter !== waiter) return;
          this.#waiter = null;
          reject(error);
        },
      );
    });
  }

  close(): void {
    this.#signal.removeEventListener("abort", this.#onAbort);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #armStallTimer(delayMs: number | undefined): void {
    if (delayMs === undefined || this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      const waiter = this.#waiter;
      if (waiter === null || this.#stallTimeoutMs === undefined) return;
      const waited = Date.now() - waiter.since;
      if (waited >= this.#stallTimeoutMs) this.#interrupt({ kind: "stalled" });
      else this.#armStallTimer(this.#stallTimeoutMs - waited);
    }, delayMs);
  }

  #interrupt(next: Next): void {
    this.#interrupted ??= next;
    const waiter = this.#waiter;
    this.#waiter = null;
    waiter?.resolve(next);
  }
}

/** How long an aborted model gets to end its own stream (it was handed the signal) before we cancel it. */
const ABORT_GRACE_MS = 1000;

/**
 * Cancelling a piped stream at the very moment its source errors with the abort leaves an unhandled rejection inside
 * workerd's pipe; a model that honours the signal ends the stream itself, so cancel only the ones that do not.
 */
function releaseAfterAbort(reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>): void {
  setTimeout(() => {
    reader.cancel().catch(() => {});
  }, ABORT_GRACE_MS);
}

function parseInput(json: string): unknown {
  try {
    return JSON.parse(json === "" ? "{}" : json);
  } catch {
    return undefined;
  }
}

const sum = (a: TurnUsage, b: TurnUsage): TurnUsage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
});

/**
 * The messages a step that called tools adds to the next model call's prompt: the assistant's text and tool calls,
 * then one tool message with every answer, in the order the model asked. The turn loop and the audit's rebuild of a
 * later step (src/thread/run/run-input.ts) both use it, so the rebuild is the very prompt the model was handed.
 */
export function toolRoundMessages(
  text: string,
  calls: readonly { toolCallId: string; toolName: string; input: unknown; outcome: ToolCallOutcome }[],
): [LanguageModelV4Message, LanguageModelV4Message] {
  const results: LanguageModelV4ToolResultPart[] = calls.map((call) => ({
    type: "tool-result",
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output: toolResultOutput(call.outcome),
  }));
  return [
    {
      role: "assistant",
      content: [
        ...(text === "" ? [] : [{ type: "text" as const, text }]),
        ...calls.map((call) => ({
          type: "tool-call" as const,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input ?? {},
        })),
      ],
    },
    { role: "tool", content: results },
  ];
}

/**
 * Streams one assistant turn: text deltas go to `onDelta`, tool calls run through `onToolCall` and their results are
 * fed back for another model call, up to `maxSteps`. Failures come back as values with a safe message; the text
 * streamed so far is always returned so a caller can keep what the user already saw.
 */
export async function runTurn(input: RunTurnInput): Promise<TurnResult> {
  const { model, signal } = input;
  const prompt: LanguageModelV4Message[] = [...input.prompt];
  const steps: TurnStep[] = [...(input.resume ?? [])];
  let text = "";
  let usage: TurnUsage = { inputTokens: 0, outputTokens: 0 };
  for (const step of steps) {
    text += step.text;
    usage = sum(usage, step.usage);
    prompt.push(...toolRoundMessages(step.text, step.toolCalls));
  }

  const ended = (error?: ModelError): TurnResult => {
    if (signal.aborted && !isTimeoutError(signal.reason)) return { status: "aborted", text, usage, steps };
    if (signal.aborted) return { status: "failed", error: modelErrors.timeout(), text, usage, steps };
    if (error) return { status: "failed", error, text, usage, steps };
    return { status: "succeeded", text, usage, steps };
  };

  for (let stepIndex = steps.length; stepIndex < input.maxSteps; stepIndex++) {
    let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>;
    input.onModelCall?.({ step: stepIndex, prompt: [...prompt] });
    try {
      const { stream } = await model.doStream({
        prompt,
        abortSignal: signal,
        ...(input.tools && input.tools.length > 0
          ? { tools: input.tools, toolChoice: { type: "auto" } }
          : {}),
      });
      reader = stream.getReader();
    } catch (error) {
      return ended(toModelError(error));
    }
    const parts = new PartReader(reader, signal, input.stallTimeoutMs);

    const step: TurnStep = {
      text: "",
      toolCalls: [],
      usage: { inputTokens: 0, outputTokens: 0 },
      finishReason: "unknown",
    };
    const requested: ToolCallRequest[] = [];
    let finished = false;
    let failure: ModelError | undefined;

    try {
      while (failure === undefined) {
        let next: Next;
        try {
          next = await parts.next();
        } catch (error) {
          failure = toModelError(error);
          break;
        }
        if (next.kind === "done") break;
        if (next.kind === "aborted") {
          releaseAfterAbort(reader);
          steps.push(step);
          return ended();
        }
        if (next.kind === "stalled") {
          reader.cancel().catch(() => {});
          failure = modelErrors.timeout();
          break;
        }
        const part = next.part;
        switch (part.type) {
          case "text-delta":
            if (part.delta === "") break;
            step.text += part.delta;
            text += part.delta;
            input.onDelta(part.delta);
            break;
          case "tool-call":
            if (!part.providerExecuted) {
              requested.push({
                toolCallId: part.toolCallId,
                toolName: part.toolName,
                input: parseInput(part.input),
              });
            }
            break;
          case "finish":
            finished = true;
            step.finishReason = part.finishReason.unified;
            step.usage = {
              inputTokens: part.usage.inputTokens.total ?? 0,
              outputTokens: part.usage.outputTokens.total ?? 0,
            };
            if (part.finishReason.unified === "error") failure = modelErrors.interrupted("other");
            else if (part.finishReason.unified === "interrupted") failure = modelErrors.interrupted();
            // The provider's filter ended the reply: a failure the user should see named, not a finished answer.
            else if (part.finishReason.unified === "content-filter") failure = modelErrors.contentFilter();
            break;
          case "error":
            reader.cancel().catch(() => {});
            failure = toModelError(part.error);
            break;
        }
      }
    } finally {
      parts.close();
    }
    if (!finished && failure === undefined) failure = modelErrors.interrupted();

    usage = sum(usage, step.usage);
    if (finished) input.onUsage?.({ step: stepIndex, ...step.usage });
    steps.push(step);
    if (failure !== undefined) return ended(failure);
    if (requested.length === 0) return ended();
    if (stepIndex + 1 >= input.maxSteps) {
      return ended({
        code: "upstream_unavailable",
        reason: "other",
        message: `The model kept calling tools past the limit of ${input.maxSteps} steps.`,
        retryable: false,
      });
    }

    const waiting: string[] = [];
    for (const call of requested) {
      let outcome: ToolCallOutcome | typeof WAIT;
      try {
        outcome =
          call.input === undefined
            ? { output: "The tool input was not valid JSON.", isError: true }
            : await input.onToolCall(call, signal);
      } catch (error) {
        console.error(JSON.stringify({ level: "error", message: "tool call threw", error: String(error) }));
        // Tool executors return failures as outcomes; a throw is a bug and must not pass for a tool answer.
        if (signal.aborted) return ended();
        return ended({
          code: "internal",
          message: "A tool call failed unexpectedly.",
          retryable: false,
        });
      }
      if (signal.aborted) return ended();
      if (outcome === WAIT) {
        waiting.push(call.toolCallId);
        step.toolCalls.push({ ...call, outcome: { output: null } });
      } else step.toolCalls.push({ ...call, outcome });
    }
    if (waiting.length > 0) {
      step.waiting = waiting;
      return { status: "requires_action", text, usage, steps };
    }
    prompt.push(...toolRoundMessages(step.text, step.toolCalls));
  }
  // Only reachable with maxSteps < 1: no model call was allowed.
  return ended({
    code: "bad_request",
    message: "A turn needs at least one model step.",
    retryable: false,
  });
}
