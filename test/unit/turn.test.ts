// The turn loop decides what a user sees from any model: deltas in order, tool round trips, and safe failures.
import {
  APICallError,
  type LanguageModelV4,
  type LanguageModelV4CallOptions,
  type LanguageModelV4StreamPart,
  type LanguageModelV4Usage,
} from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { runTurn, type ToolCallRequest } from "../../src/models/turn";

const usage = (input: number, output: number): LanguageModelV4Usage => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

const textStep = (deltas: string[], input = 10, output = 5): LanguageModelV4StreamPart[] => [
  { type: "stream-start", warnings: [] },
  { type: "text-start", id: "t" },
  ...deltas.map((delta) => ({ type: "text-delta" as const, id: "t", delta })),
  { type: "text-end", id: "t" },
  { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(input, output) },
];

const toolStep = (toolName: string, input: string, id = "call_1"): LanguageModelV4StreamPart[] => [
  { type: "stream-start", warnings: [] },
  { type: "tool-call", toolCallId: id, toolName, input },
  { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: usage(7, 3) },
];

type Script = LanguageModelV4StreamPart[] | { parts: LanguageModelV4StreamPart[]; after: "hang" | Error };

/** A model that plays one script per call and records what it was called with. */
function scriptedModel(scripts: Script[]): LanguageModelV4 & { calls: LanguageModelV4CallOptions[] } {
  const calls: LanguageModelV4CallOptions[] = [];
  return {
    specificationVersion: "v4",
    provider: "scripted",
    modelId: "scripted",
    supportedUrls: {},
    calls,
    async doGenerate() {
      throw new Error("not used");
    },
    async doStream(options) {
      calls.push({ ...options, prompt: structuredClone(options.prompt) });
      const script = scripts[calls.length - 1];
      if (script === undefined) throw new Error("no script");
      const { parts, after } = Array.isArray(script) ? { parts: script, after: undefined } : script;
      let i = 0;
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          pull(controller) {
            const part = parts[i++];
            if (part !== undefined) return controller.enqueue(part);
            if (after === undefined) return controller.close();
            if (after instanceof Error) return controller.error(after);
            return new Promise<void>(() => {});
          },
        }),
      };
    },
  };
}

const never = async (): Promise<never> => {
  throw new Error("no tool expected");
};

describe("runTurn", () => {
  it("passes deltas through in order and reports the text and usage", async () => {
    const model = scriptedModel([textStep(["Hel", "lo", ", world"], 12, 4)]);
    const seen: string[] = [];
    const usages: unknown[] = [];
    const result = await runTurn({
      model,
      prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
      signal: new AbortController().signal,
      maxSteps: 4,
      onDelta: (t) => seen.push(t),
      onToolCall: never,
      onUsage: (u) => usages.push(u),
    });
    expect(seen).toEqual(["Hel", "lo", ", world"]);
    expect(result).toMatchObject({
      status: "succeeded",
      text: "Hello, world",
      usage: { inputTokens: 12, outputTokens: 4 },
    });
    expect(usages).toEqual([{ step: 0, inputTokens: 12, outputTokens: 4 }]);
    expect(model.calls[0]?.tools).toBeUndefined();
  });

  it("runs a tool call, feeds the result back and sums usage over both model calls", async () => {
    const model = scriptedModel([toolStep("weather", '{"city":"Oslo"}'), textStep(["Sunny."], 20, 2)]);
    const calls: ToolCallRequest[] = [];
    const tools = [{ type: "function" as const, name: "weather", inputSchema: { type: "object" as const } }];
    const result = await runTurn({
      model,
      prompt: [{ role: "user", content: [{ type: "text", text: "Weather?" }] }],
      tools,
      signal: new AbortController().signal,
      maxSteps: 4,
      onDelta: () => {},
      onToolCall: async (call) => {
        calls.push(call);
        return { output: { tempC: 21 } };
      },
    });
    expect(calls).toEqual([{ toolCallId: "call_1", toolName: "weather", input: { city: "Oslo" } }]);
    expect(result).toMatchObject({
      status: "succeeded",
      text: "Sunny.",
      usage: { inputTokens: 27, outputTokens: 5 },
    });
    expect(model.calls[0]?.tools).toEqual(tools);
    expect(model.calls[0]?.toolChoice).toEqual({ type: "auto" });
    expect(model.calls[1]?.prompt.slice(1)).toEqual([
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "call_1", toolName: "weather", input: { city: "Oslo" } }],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "weather",
            output: { type: "json", value: { tempC: 21 } },
          },
        ],
      },
    ]);
  });

  it("answers invalid tool JSON with an error result instead of running the tool", async () => {
    const model = scriptedModel([toolStep("weather", "{not json"), textStep(["Sorry."])]);
    const result = await runTurn({
      model,
      prompt: [{ role: "user", content: [{ type: "text", text: "Weather?" }] }],
      signal: new AbortController().signal,
      maxSteps: 2,
      onDelta: () => {},
      onToolCall: never,
    });
    expect(result.status).toBe("succeeded");
    expect(model.calls[1]?.prompt.at(-1)).toMatchObject({
      role: "tool",
      content: [{ output: { type: "error-text", value: "The tool input was not valid JSON." } }],
    });
  });

  it("fails when the model keeps calling tools past maxSteps, without running the extra call", async () => {
    const model = scriptedModel([toolStep("t", "{}", "a"), toolStep("t", "{}", "b")]);
    let ran = 0;
    const result = await runTurn({
      model,
      prompt: [{ role: "user", content: [{ type: "text", text: "loop" }] }],
      signal: new AbortController().signal,
      maxSteps: 2,
      onDelta: () => {},
      onToolCall: async () => {
        ran++;
        return { output: "ok" };
      },
    });
    expect(ran).toBe(1);
    expect(result).toMatchObject({
      status: "failed",
      error: { code: "upstream_unavailable", retryable: false },
    });
    expect(result.status === "failed" && result.error.message).toContain("2 steps");
  });

  it("fails safely on an error part, keeping the partial text", async () => {
    const secret = "sk-live-SECRET123";
    const model = scriptedModel([
      [
        ...textStep(["par", "tial"]).slice(0, 4),
        {
          type: "error",
          error: { type: "overloaded_error", message: `overloaded for ${secret}`, statusCode: 529 },
        },
      ],
    ]);
    const result = await runTurn({
      model,
      prompt: [{ role: "user", content: [{ type: "text", text: "x" }] }],
      signal: new AbortController().signal,
      maxSteps: 1,
      onDelta: () => {},
      onToolCall: never,
    });
    expect(result).toMatchObject({
      status: "failed",
      text: "partial",
      error: { code: "upstream_unavailable", retryable: true },
    });
    expect(JSON.stringify(result)).not.toContain(secret);
  });

  it("maps a provider's thrown 401 to a safe message that echoes neither the key nor the body", async () => {
    const secret = "sk-live-SECRET123";
    const model = scriptedModel([]);
    model.doStream = async () => {
      throw new APICallError({
        message: `Incorrect API key provided: ${secret}`,
        url: "https://api.example.test/v1/chat/completions",
        requestBodyValues: {},
        statusCode: 401,
        responseBody: `{"error":{"message":"Incorrect API key provided: ${secret}"}}`,
      });
    };
    const result = await runTurn({
      model,
      prompt: [{ role: "user", content: [{ type: "text", text: "x" }] }],
      signal: new AbortController().signal,
      maxSteps: 1,
      onDelta: () => {},
      onToolCall: never,
    });
    expect(result).toMatchObject({
      status: "failed",
      error: { code: "upstream_unavailable", retryable: false },
    });
    expect(JSON.stringify(result)).not.toContain(secret);
    expect(JSON.stringify(result)).not.toContain("Incorrect API key");
  });

  it("fails a stream that ends without a finish, or finishes as interrupted", async () => {
    for (const parts of [
      textStep(["a", "b"]).slice(0, 4),
      [
        ...textStep(["a", "b"]).slice(0, 5),
        {
          type: "finish" as const,
          finishReason: { unified: "interrupted" as const, raw: undefined },
          usage: usage(1, 1),
        },
      ],
    ]) {
      const result = await runTurn({
        model: scriptedModel([parts]),
        prompt: [{ role: "user", content: [{ type: "text", text: "x" }] }],
        signal: new AbortController().signal,
        maxSteps: 1,
        onDelta: () => {},
        onToolCall: never,
      });
      expect(result).toMatchObject({ status: "failed", text: "ab", error: { code: "upstream_unavailable" } });
    }
  });

  it("fails a stalled stream after stallTimeoutMs", async () => {
    const result = await runTurn({
      model: scriptedModel([{ parts: textStep(["slow"]).slice(0, 3), after: "hang" }]),
      prompt: [{ role: "user", content: [{ type: "text", text: "x" }] }],
      signal: new AbortController().signal,
      maxSteps: 1,
      stallTimeoutMs: 50,
      onDelta: () => {},
      onToolCall: never,
    });
    expect(result).toMatchObject({ status: "failed", text: "slow", error: { code: "upstream_unavailable" } });
    expect(result.status === "failed" && result.error.message).toMatch(/in time/);
  });

  it("reports a cancelled turn as aborted but a timed-out signal as failed", async () => {
    const cancel = new AbortController();
    const aborted = runTurn({
      model: scriptedModel([{ parts: textStep(["a"]).slice(0, 3), after: "hang" }]),
      prompt: [{ role: "user", content: [{ type: "text", text: "x" }] }],
      signal: cancel.signal,
      maxSteps: 1,
      onDelta: () => cancel.abort(),
      onToolCall: never,
    });
    expect(await aborted).toMatchObject({ status: "aborted", text: "a" });

    const timedOut = await runTurn({
      model: scriptedModel([{ parts: textStep(["a"]).slice(0, 3), after: "hang" }]),
      prompt: [{ role: "user", content: [{ type: "text", text: "x" }] }],
      signal: AbortSignal.timeout(50),
      maxSteps: 1,
      onDelta: () => {},
      onToolCall: never,
    });
    expect(timedOut).toMatchObject({ status: "failed", text: "a", error: { code: "upstream_unavailable" } });
  });

  it("stops after a tool call that was running when the turn was cancelled", async () => {
    const cancel = new AbortController();
    const model = scriptedModel([toolStep("slow_tool", "{}"), textStep(["never"])]);
    const result = await runTurn({
      model,
      prompt: [{ role: "user", content: [{ type: "text", text: "x" }] }],
      signal: cancel.signal,
      maxSteps: 3,
      onDelta: () => {},
      onToolCall: async () => {
        cancel.abort();
        return { output: "late" };
      },
    });
    expect(result.status).toBe("aborted");
    expect(model.calls).toHaveLength(1);
  });

  it("fails with internal when a tool executor throws instead of returning an outcome", async () => {
    const result = await runTurn({
      model: scriptedModel([toolStep("t", "{}"), textStep(["never"])]),
      prompt: [{ role: "user", content: [{ type: "text", text: "x" }] }],
      signal: new AbortController().signal,
      maxSteps: 3,
      onDelta: () => {},
      onToolCall: async () => {
        throw new Error("executor bug with sk-live-SECRET123");
      },
    });
    expect(result).toMatchObject({ status: "failed", error: { code: "internal" } });
    expect(JSON.stringify(result)).not.toContain("SECRET");
  });

  it("turns a stream that errors midway into a failure with the text so far", async () => {
    const result = await runTurn({
      model: scriptedModel([
        { parts: textStep(["one ", "two "]).slice(0, 4), after: new TypeError("Network connection lost.") },
      ]),
      prompt: [{ role: "user", content: [{ type: "text", text: "x" }] }],
      signal: new AbortController().signal,
      maxSteps: 1,
      onDelta: () => {},
      onToolCall: never,
    });
    expect(result).toMatchObject({
      status: "failed",
      text: "one two ",
      error: { code: "upstream_unavailable", retryable: true },
    });
  });
});
