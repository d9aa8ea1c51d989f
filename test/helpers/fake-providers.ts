// Local fakes of the providers' wire formats (OpenAI-compatible, Anthropic, the Workers AI binding) for model tests.

/** What the fake should answer to the next model call. */
export type FakeReply =
  | {
      kind: "text";
      deltas: string[];
      usage?: { input: number; output: number };
      /** The body stream errors (as a dropped connection does) after this many deltas. */
      breakAfter?: number;
      /** The body stream stops after this many deltas and only ends when the request is aborted. */
      hangAfter?: number;
      /** The provider's content filter ends the reply (OpenAI `finish_reason: "content_filter"`, Anthropic `refusal`). */
      filtered?: boolean;
    }
  | {
      kind: "tool-call";
      toolCallId: string;
      toolName: string;
      input: Record<string, unknown>;
      usage?: { input: number; output: number };
      /** Text the model writes before its calls, in the same reply. */
      text?: string;
      /** Further calls made together with the first one (parallel tool calls), in order. */
      more?: { toolCallId: string; toolName: string; input: Record<string, unknown> }[];
    }
  | { kind: "http-error"; status: number; body: unknown; headers?: Record<string, string> }
  /** Nothing listens at the provider's address: fetch rejects (the binding throws) before any response. */
  | { kind: "connection-refused" }
  /** The Workers AI binding throws this message (`"<name>: <internal code>: <text>"`); HTTP fakes do not use it. */
  | { kind: "binding-error"; message: string };

export interface RecordedRequest {
  url: string;
  headers: Headers;
  body: unknown;
  /** The body exactly as sent (for byte-for-byte comparisons). */
  text: string;
}

export interface FakeHttpProvider {
  fetch: typeof fetch;
  requests: RecordedRequest[];
}

const encoder = new TextEncoder();

function abortError(signal: AbortSignal | null | undefined): unknown {
  return signal?.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

/**
 * An SSE byte stream of `events`, delivered one event per read. `cutAt` (an event index) is where it breaks with a
 * network error or hangs until `signal` aborts, as a real upstream body would.
 */
function sseBody(
  events: string[],
  options: { cutAt?: number; mode?: "break" | "hang"; signal?: AbortSignal | null } = {},
): ReadableStream<Uint8Array> {
  let index = 0;
  let cancelled = false;
  const { cutAt, mode, signal } = options;
  return new ReadableStream<Uint8Array>({
    cancel() {
      cancelled = true;
    },
    pull(controller) {
      if (signal?.aborted) {
        controller.error(abortError(signal));
        return;
      }
      if (cutAt !== undefined && index === cutAt) {
        if (mode === "break") {
          controller.error(new TypeError("Network connection lost."));
          return;
        }
        return new Promise<void>((resolve) => {
          signal?.addEventListener(
            "abort",
            () => {
              if (!cancelled) controller.error(abortError(signal));
              resolve();
            },
            { once: true },
          );
        });
      }
      const event = events[index++];
      if (event === undefined) controller.close();
      else controller.enqueue(encoder.encode(event));
    },
  });
}

function cut(reply: FakeReply, firstDeltaIndex: number): { cutAt?: number; mode?: "break" | "hang" } {
  if (reply.kind !== "text") return {};
  if (reply.breakAfter !== undefined) return { cutAt: firstDeltaIndex + reply.breakAfter, mode: "break" };
  if (reply.hangAfter !== undefined) return { cutAt: firstDeltaIndex + reply.hangAfter, mode: "hang" };
  return {};
}

const data = (value: unknown): string => `data: ${JSON.stringify(value)}\n\n`;

async function record(input: RequestInfo | URL, init: RequestInit | undefined): Promise<RecordedRequest> {
  const request = new Request(input, init);
  const text = await request.text();
  return { url: request.url, headers: request.headers, body: text === "" ? null : JSON.parse(text), text };
}

function scripted(replies: FakeReply[]): () => FakeReply {
  let next = 0;
  return () => {
    const reply = replies[next++];
    if (reply === undefined) throw new Error(`The fake provider has no reply #${next} scripted.`);
    return reply;
  };
}

/** What a fetch to an address nobody listens on rejects with (undici's shape, which the AI SDK recognises). */
function connectionRefused(): TypeError {
  const cause = Object.assign(new Error("connect ECONNREFUSED 203.0.113.7:443"), { code: "ECONNREFUSED" });
  return new TypeError("fetch failed", { cause });
}

/** The replies an HTTP fake answers before any stream: an error status, or no connection at all. */
function earlyAnswer(reply: FakeReply): Response | null {
  if (reply.kind === "connection-refused") throw connectionRefused();
  if (reply.kind === "binding-error")
    throw new Error("binding-error replies are for the Workers AI fake only");
  if (reply.kind === "http-error") return errorResponse(reply);
  return null;
}

function errorResponse(reply: Extract<FakeReply, { kind: "http-error" }>): Response {
  return new Response(JSON.stringify(reply.body), {
    status: reply.status,
    headers: { "content-type": "application/json", ...reply.headers },
  });
}

const sseHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache" };

/** `POST {baseURL}/chat/completions` streaming `choices[].delta` chunks, usage in the last chunk, then `[DONE]`. */
type FakeToolCall = { toolCallId: string; toolName: string; input: Record<string, unknown> };

/** Every call of a tool-call reply, the first one first. */
const callsOf = (reply: Extract<FakeReply, { kind: "tool-call" }>): FakeToolCall[] => [
  { toolCallId: reply.toolCallId, toolName: reply.toolName, input: reply.input },
  ...(reply.more ?? []),
];

export function fakeOpenAICompatible(replies: FakeReply[]): FakeHttpProvider {
  const requests: RecordedRequest[] = [];
  const nextReply = scripted(replies);
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    requests.push(await record(input, init));
    const reply = nextReply();
    const early = earlyAnswer(reply);
    if (early !== null) return early;
    if (reply.kind !== "text" && reply.kind !== "tool-call") throw new Error("unreachable");
    const base = {
      id: "chatcmpl-fake",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: "fake",
    };
    const chunk = (delta: unknown, finish: string | null = null) =>
      data({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] });
    const events: string[] = [chunk({ role: "assistant", content: "" })];
    const firstDelta = events.length;
    if (reply.kind === "text") {
      for (const text of reply.deltas) events.push(chunk({ content: text }));
      events.push(chunk({}, reply.filtered ? "content_filter" : "stop"));
    } else {
      if (reply.text !== undefined) events.push(chunk({ content: reply.text }));
      callsOf(reply).forEach((call, index) => {
        const args = JSON.stringify(call.input);
        const half = Math.ceil(args.length / 2);
        events.push(
          chunk({
            tool_calls: [
              {
                index,
                id: call.toolCallId,
                type: "function",
                function: { name: call.toolName, arguments: "" },
              },
            ],
          }),
          chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, half) } }] }),
          chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }),
        );
      });
      events.push(chunk({}, "tool_calls"));
    }
    const usage = reply.usage ?? { input: 0, output: 0 };
    events.push(
      data({
        ...base,
        choices: [],
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
        },
      }),
      "data: [DONE]\n\n",
    );
    return new Response(sseBody(events, { ...cut(reply, firstDelta), signal: init?.signal }), {
      headers: sseHeaders,
    });
  };
  return { fetch: fetch as typeof globalThis.fetch, requests };
}

/** `POST {baseURL}/messages` with `message_start`, content blocks (text or tool_use), `message_delta`, `message_stop`. */
export function fakeAnthropic(replies: FakeReply[]): FakeHttpProvider {
  const requests: RecordedRequest[] = [];
  const nextReply = scripted(replies);
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    requests.push(await record(input, init));
    const reply = nextReply();
    const early = earlyAnswer(reply);
    if (early !== null) return early;
    if (reply.kind !== "text" && reply.kind !== "tool-call") throw new Error("unreachable");
    const event = (type: string, value: Record<string, unknown>) =>
      `event: ${type}\n${data({ type, ...value })}`;
    const usage = reply.usage ?? { input: 0, output: 0 };
    const events: string[] = [
      event("message_start", {
        message: {
          id: "msg_fake",
          type: "message",
          role: "assistant",
          model: "claude-fake",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: usage.input, output_tokens: 1 },
        },
      }),
    ];
    let stopReason: string;
    let firstDelta: number;
    if (reply.kind === "text") {
      events.push(event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }));
      firstDelta = events.length;
      for (const text of reply.deltas) {
        events.push(event("content_block_delta", { index: 0, delta: { type: "text_delta", text } }));
      }
      stopReason = reply.filtered ? "refusal" : "end_turn";
    } else {
      let index = 0;
      firstDelta = events.length + 1;
      if (reply.text !== undefined) {
        events.push(
          event("content_block_start", { index, content_block: { type: "text", text: "" } }),
          event("content_block_delta", { index, delta: { type: "text_delta", text: reply.text } }),
          event("content_block_stop", { index }),
        );
        index++;
      }
      const calls = callsOf(reply);
      calls.forEach((call, i) => {
        const args = JSON.stringify(call.input);
        const half = Math.ceil(args.length / 2);
        events.push(
          event("content_block_start", {
            index,
            content_block: { type: "tool_use", id: call.toolCallId, name: call.toolName, input: {} },
          }),
          event("content_block_delta", {
            index,
            delta: { type: "input_json_delta", partial_json: args.slice(0, half) },
          }),
          event("content_block_delta", {
            index,
            delta: { type: "input_json_delta", partial_json: args.slice(half) },
          }),
        );
        // The last block's stop is written below, as a text reply's is.
        if (i < calls.length - 1) events.push(event("content_block_stop", { index }));
        index++;
      });
      stopReason = "tool_use";
    }
    const lastBlock =
      reply.kind === "tool-call" ? (reply.text !== undefined ? 1 : 0) + callsOf(reply).length - 1 : 0;
    events.push(
      event("content_block_stop", { index: lastBlock }),
      event("message_delta", {
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output },
      }),
      event("message_stop", {}),
    );
    return new Response(sseBody(events, { ...cut(reply, firstDelta), signal: init?.signal }), {
      headers: sseHeaders,
    });
  };
  return { fetch: fetch as typeof globalThis.fetch, requests };
}

export interface FakeWorkersAI {
  binding: Ai;
  calls: { model: string; inputs: unknown; options: unknown }[];
}

/** Binding error messages in the shape the real binding throws: `"<name>: <internal code>: <text>"`. */
const WORKERS_AI_ERRORS: Record<number, string> = {
  401: "AiError: 3041: Authentication error",
  403: "AiError: 3041: Authentication error",
  429: "InferenceUpstreamError: 3040: Capacity temporarily exceeded, please try again.",
};

/**
 * The Workers AI binding: `run(model, {messages, stream: true}, {signal})` resolves to a ReadableStream of SSE
 * `data: {"response": "..."}` events, a usage event, then `[DONE]`; failures are thrown, as the binding does.
 */
export function fakeWorkersAI(replies: FakeReply[]): FakeWorkersAI {
  const calls: FakeWorkersAI["calls"] = [];
  const nextReply = scripted(replies);
  const run = async (model: string, inputs: unknown, options?: { signal?: AbortSignal }) => {
    calls.push({ model, inputs, options });
    const reply = nextReply();
    // workerd's own error for a connection that could not be made or was lost.
    if (reply.kind === "connection-refused") throw new TypeError("Network connection lost.");
    if (reply.kind === "binding-error") throw new Error(reply.message);
    if (reply.kind === "http-error") {
      throw new Error(
        WORKERS_AI_ERRORS[reply.status] ?? `InferenceUpstreamError: ${JSON.stringify(reply.body)}`,
      );
    }
    const usage = reply.usage ?? { input: 0, output: 0 };
    const events: string[] = [];
    if (reply.kind === "text") {
      for (const text of reply.deltas) events.push(data({ response: text, p: "abcdef" }));
    } else {
      if (reply.text !== undefined) events.push(data({ response: reply.text, p: "abcdef" }));
      events.push(
        data({
          response: "",
          tool_calls: callsOf(reply).map((call, index) => ({
            index,
            id: call.toolCallId,
            name: call.toolName,
            arguments: call.input,
          })),
        }),
      );
    }
    events.push(
      data({
        response: "",
        usage: {
          prompt_tokens: usage.input,
          completion_tokens: usage.output,
          total_tokens: usage.input + usage.output,
        },
      }),
      "data: [DONE]\n\n",
    );
    return sseBody(events, { ...cut(reply, 0), signal: options?.signal });
  };
  // The fake implements only `run`, the one method the provider calls.
  return { binding: { run } as unknown as Ai, calls };
}
