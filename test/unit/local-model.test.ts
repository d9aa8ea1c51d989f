// The local model is what `npm run dev`, tests and benchmarks talk to: its streams must be exact and reproducible.
import type { LanguageModelV4Prompt, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { createLocalModel, type LocalModelOptions } from "../../src/models/local-model";
import { runTurn, type ToolCallOutcome } from "../../src/models/turn";

const prompt = (text: string, instructions = "You are terse."): LanguageModelV4Prompt => [
  { role: "system", content: instructions },
  { role: "user", content: [{ type: "text", text }] },
];

async function collect(
  modelId: string,
  options: LocalModelOptions,
  input: LanguageModelV4Prompt,
  signal?: AbortSignal,
): Promise<LanguageModelV4StreamPart[]> {
  const { stream } = await createLocalModel(modelId, options).doStream({
    prompt: input,
    ...(signal ? { abortSignal: signal } : {}),
  });
  const parts: LanguageModelV4StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

const deltas = (parts: LanguageModelV4StreamPart[]) =>
  parts.flatMap((p) => (p.type === "text-delta" ? [p.delta] : []));

const noTools = async () => ({ output: "unused" });

const HOUR_MS = 3_600_000;

/**
 * Whether `pending` is still unsettled once a whole undelayed reply has streamed: a hang or a delay holds it, a
 * missing one would have let it through long before. No timer involved.
 */
async function stillPendingAfterAReply(pending: Promise<unknown>): Promise<boolean> {
  const settled = pending.then(
    () => true,
    () => true,
  );
  const other = collect("echo", { chunks: 8 }, prompt("meanwhile")).then(() => false);
  return !(await Promise.race([settled, other]));
}

describe("local model", () => {
  it("echoes the user text in the configured number of deltas, with usage from the character counts", async () => {
    const input = prompt("hello world");
    const parts = await collect("echo", { chunks: 4 }, input);
    const text = deltas(parts);
    expect(text).toHaveLength(4);
    expect(text.join("")).toBe("Echo: hello world");
    const finish = parts.at(-1);
    expect(finish?.type).toBe("finish");
    if (finish?.type !== "finish") return;
    expect(finish.finishReason.unified).toBe("stop");
    const promptChars = "You are terse.".length + "hello world".length;
    expect(finish.usage.inputTokens.total).toBe(Math.ceil(promptChars / 4));
    expect(finish.usage.outputTokens.total).toBe(Math.ceil("Echo: hello world".length / 4));
  });

  it("streams 8 deltas by default and at most one per character for a short reply", async () => {
    expect(deltas(await collect("any-model", {}, prompt("tell me something")))).toHaveLength(8);
    expect(deltas(await collect("echo", { chunks: 50 }, prompt("hi")))).toEqual(Array.from("Echo: hi"));
  });

  it("never splits a surrogate pair across deltas", async () => {
    const text = deltas(await collect("echo", { chunks: 100 }, prompt("😀😀")));
    expect(text.slice(-2)).toEqual(["😀", "😀"]);
  });

  it("gives the same reply for the same instructions and text, and a different one otherwise", async () => {
    const a = await collect("lorem", { chunks: 6 }, prompt("what is new?"));
    const b = await collect("lorem", { chunks: 6 }, prompt("what is new?"));
    const otherText = await collect("lorem", { chunks: 6 }, prompt("what is old?"));
    const otherInstructions = await collect("lorem", { chunks: 6 }, prompt("what is new?", "Be verbose."));
    expect(deltas(a)).toEqual(deltas(b));
    expect(deltas(a).join("")).toMatch(/^[A-Z][a-z ]+\.$/);
    expect(deltas(otherText).join("")).not.toBe(deltas(a).join(""));
    expect(deltas(otherInstructions).join("")).not.toBe(deltas(a).join(""));
  });

  it("produces a long enough reply to fill many chunks", async () => {
    expect(deltas(await collect("lorem", { chunks: 400 }, prompt("long please")))).toHaveLength(400);
  });

  it("fails after N deltas with an error part and no successful finish", async () => {
    const parts = await collect("echo", { chunks: 5, failAfterChunks: 2 }, prompt("abcdefghij"));
    expect(deltas(parts)).toHaveLength(2);
    expect(parts.some((p) => p.type === "error")).toBe(true);
    const finish = parts.find((p) => p.type === "finish");
    expect(finish?.type === "finish" && finish.finishReason.unified).toBe("error");
  });

  it("turns a requested failure into a failed turn that keeps the partial text", async () => {
    const seen: string[] = [];
    const result = await runTurn({
      model: createLocalModel("echo", { chunks: 5, failAfterChunks: 2 }),
      prompt: prompt("abcdefghij"),
      signal: new AbortController().signal,
      maxSteps: 1,
      onDelta: (t) => seen.push(t),
      onToolCall: noTools,
    });
    expect(result.status).toBe("failed");
    if (result.status !== "failed") return;
    expect(result.error.code).toBe("upstream_unavailable");
    expect(result.error.retryable).toBe(true);
    expect(result.text).toBe(seen.join(""));
    expect(seen).toHaveLength(2);
  });

  it("hangs after N deltas until the abort signal fires, then ends with an abort", async () => {
    const controller = new AbortController();
    const { stream } = await createLocalModel("echo", { chunks: 6, hangAfterChunks: 3 }).doStream({
      prompt: prompt("abcdefghijkl"),
      abortSignal: controller.signal,
    });
    const reader = stream.getReader();
    const seen: string[] = [];
    while (seen.length < 3) {
      const { value } = await reader.read();
      if (value?.type === "text-delta") seen.push(value.delta);
    }
    const pending = reader.read();
    expect(await stillPendingAfterAReply(pending)).toBe(true);
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).toEqual(["Ech", "o: ", "abc"]);
  });

  it("ends a hung turn as aborted, with the text streamed before the hang", async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const result = await runTurn({
      model: createLocalModel("echo", { chunks: 6, hangAfterChunks: 3 }),
      prompt: prompt("abcdefghijkl"),
      signal: controller.signal,
      maxSteps: 1,
      onDelta: (t) => {
        seen.push(t);
        // Stopped as the third delta arrives, right where the model hangs: only the abort can end this turn.
        if (seen.length === 3) controller.abort();
      },
      onToolCall: noTools,
    });
    expect(result.status).toBe("aborted");
    expect(result.text).toBe(seen.join(""));
    expect(seen).toHaveLength(3);
  });

  // The delay is workerd's own scheduler.wait, so these assert order and outcome, not durations (see npm run bench).
  it("waits chunkDelayMs before each delta and stops waiting as soon as it is aborted", async () => {
    expect(deltas(await collect("echo", { chunks: 4, chunkDelayMs: 1 }, prompt("abcd")))).toEqual(
      deltas(await collect("echo", { chunks: 4 }, prompt("abcd"))),
    );
    const controller = new AbortController();
    const { stream } = await createLocalModel("echo", { chunks: 4, chunkDelayMs: HOUR_MS }).doStream({
      prompt: prompt("abcd"),
      abortSignal: controller.signal,
    });
    const reader = stream.getReader();
    const before: string[] = [];
    for (;;) {
      const { value } = await reader.read();
      before.push(value?.type ?? "done");
      if (value?.type === "text-start") break;
    }
    const firstDelta = reader.read();
    expect(await stillPendingAfterAReply(firstDelta)).toBe(true);
    expect(before).toEqual(["stream-start", "response-metadata", "text-start"]);
    // An hour's delay, stopped by the abort: the test would time out if the wait ignored the signal.
    controller.abort(new DOMException("stopped by the visitor", "AbortError"));
    await expect(firstDelta).rejects.toMatchObject({ name: "AbortError", message: "stopped by the visitor" });
  });

  it("refuses to start when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      createLocalModel("echo").doStream({ prompt: prompt("x"), abortSignal: controller.signal }),
    ).rejects.toMatchObject({ name: "AbortError" });
  });

  it("calls the configured tool first, then answers with the tool's output (round trip through runTurn)", async () => {
    const calls: unknown[] = [];
    const seen: string[] = [];
    const result = await runTurn({
      model: createLocalModel("echo", { toolCall: { name: "lookup_order", input: { orderId: "A-17" } } }),
      prompt: prompt("where is my order?"),
      signal: new AbortController().signal,
      maxSteps: 3,
      onDelta: (t) => seen.push(t),
      onToolCall: async (call) => {
        calls.push(call);
        return { output: { status: "shipped" } };
      },
    });
    expect(calls).toEqual([
      { toolCallId: expect.stringMatching(/^call_/), toolName: "lookup_order", input: { orderId: "A-17" } },
    ]);
    expect(result.status).toBe("succeeded");
    expect(result.text).toBe('The lookup_order tool returned: {"status":"shipped"}');
    expect(seen.join("")).toBe(result.text);
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]?.toolCalls[0]?.outcome).toEqual({ output: { status: "shipped" } });
    expect(result.usage.inputTokens).toBe(
      (result.steps[0]?.usage.inputTokens ?? 0) + (result.steps[1]?.usage.inputTokens ?? 0),
    );
  });

  it("calls every tool of toolCalls in one step with distinct ids, then says what each returned", async () => {
    const calls: { toolCallId: string; toolName: string; input: unknown }[] = [];
    const outcomes: Record<string, ToolCallOutcome> = {
      lookup_order: { output: { status: "shipped" } },
      refund: { output: { denied: true, reason: "no" } },
      pick_date: { output: { error: "timeout" }, isError: true },
    };
    const options = {
      toolCalls: [
        { name: "lookup_order", input: { orderId: "A-17" } },
        { name: "refund", input: { amount: 250 } },
        { name: "pick_date", input: {} },
      ],
    };
    const turn = () =>
      runTurn({
        model: createLocalModel("echo", options),
        prompt: prompt("sort out my order"),
        signal: new AbortController().signal,
        maxSteps: 3,
        onDelta: () => {},
        onToolCall: async (call) => {
          calls.push(call);
          return outcomes[call.toolName] ?? { output: "unknown" };
        },
      });
    const result = await turn();
    expect(calls.map((c) => [c.toolName, c.input])).toEqual([
      ["lookup_order", { orderId: "A-17" }],
      ["refund", { amount: 250 }],
      ["pick_date", {}],
    ]);
    const ids = calls.map((c) => c.toolCallId);
    expect(ids).toEqual([
      expect.stringMatching(/^call_[0-9a-f]{16}_0$/),
      expect.stringMatching(/^call_[0-9a-f]{16}_1$/),
      expect.stringMatching(/^call_[0-9a-f]{16}_2$/),
    ]);
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]?.toolCalls).toHaveLength(3);
    expect(result.text).toBe(
      [
        'The lookup_order tool returned: {"status":"shipped"}',
        'The refund tool returned: {"denied":true,"reason":"no"}',
        'The pick_date tool returned: {"error":"timeout"}',
      ].join("\n"),
    );
    // Deterministic: the same turn calls with the same ids.
    calls.length = 0;
    await turn();
    expect(calls.map((c) => c.toolCallId)).toEqual(ids);
  });

  it("reads a denied execution as the runtime's denial result", async () => {
    const denied: LanguageModelV4Prompt = [
      ...prompt("refund me"),
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "call_1", toolName: "refund", input: { amount: 250 } }],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "refund",
            output: { type: "execution-denied", reason: "too much" },
          },
        ],
      },
    ];
    expect(deltas(await collect("echo", { chunks: 1 }, denied)).join("")).toBe(
      'The refund tool returned: {"denied":true,"reason":"too much"}',
    );
  });

  it("answers the same through doGenerate as through doStream", async () => {
    const model = createLocalModel("lorem", { chunks: 5 });
    const streamed = deltas(await collect("lorem", { chunks: 5 }, prompt("same?"))).join("");
    const generated = await model.doGenerate({ prompt: prompt("same?") });
    expect(generated.content).toEqual([{ type: "text", text: streamed }]);
    expect(generated.finishReason.unified).toBe("stop");
  });

  it("opens its reply by naming each attachment of the last message from the bytes it was handed", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    const hex = async (bytes: Uint8Array) =>
      [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
        .map((b) => b.toString(16).padStart(2, "0"))
        .join("")
        .slice(0, 12);
    const input: LanguageModelV4Prompt = [
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          {
            type: "file",
            mediaType: "image/png",
            filename: "shot.png",
            data: { type: "data", data: btoa(String.fromCharCode(...png)) },
          },
          { type: "text", text: "Attachment notes.txt (text/plain):\nhello" },
        ],
      },
    ];
    const text = deltas(await collect("echo", { chunks: 3 }, input)).join("");
    const notes = await hex(new TextEncoder().encode("hello"));
    expect(text).toBe(
      `Attachments: shot.png (image/png, 7 bytes, sha256 ${await hex(png)}); notes.txt (text/plain, 5 bytes, sha256 ${notes})\nEcho: What is this?`,
    );
  });
});
