// Every provider adapter, driven through resolveModel and runTurn against local fakes of the providers' wire formats.
import { env } from "cloudflare:workers";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import type { ModelConfig } from "../../src/control/artifact";
import { type ResolveModelDeps, resolveModel } from "../../src/models/resolve-model";
import { runTurn, type TurnResult } from "../../src/models/turn";
import type { ProviderErrorReason } from "../../src/shared/errors";
import {
  type FakeReply,
  fakeAnthropic,
  fakeOpenAICompatible,
  fakeWorkersAI,
} from "../helpers/fake-providers";

const API_KEY = "sk-test-4f1c9a7e2b8d0e6f";
const PROVIDER_BODY = "provider-private-detail-7731";

const secrets = (values: Record<string, string>) => async (alias: string) => values[alias] ?? null;

/** How each provider really answers a failure of each kind, so the reason the user sees can be checked per adapter. */
type FailureCase = { reason: ProviderErrorReason; label: string; reply: FakeReply };

interface Adapter {
  name: string;
  /** One or more ways this provider fails for each reason it can report (not every provider has every reason). */
  failures: FailureCase[];
  /** Builds the model against a fake answering with `replies`, and exposes what the provider received. */
  setup(
    replies: FakeReply[],
  ): Promise<{ model: LanguageModelV4; sent: () => { headers?: Headers; body: unknown }[] }>;
  /** Whether the adapter sees the provider's HTTP status and Retry-After (the binding only throws messages). */
  http: boolean;
}

async function resolved(config: ModelConfig, deps: Partial<ResolveModelDeps>): Promise<LanguageModelV4> {
  const result = await resolveModel(config, { env, tenantSecret: secrets({ "llm-key": API_KEY }), ...deps });
  if (!result.ok) throw new Error(`resolveModel failed: ${result.code} ${result.message}`);
  return result.value;
}

const adapters: Adapter[] = [
  {
    name: "openai-compatible",
    http: true,
    failures: [
      {
        reason: "auth",
        label: "401 invalid_api_key",
        reply: {
          kind: "http-error",
          status: 401,
          body: {
            error: {
              message: `Incorrect API key provided: ${API_KEY}.`,
              type: "invalid_request_error",
              param: null,
              code: "invalid_api_key",
            },
          },
        },
      },
      {
        reason: "not_found",
        label: "404 model_not_found",
        reply: {
          kind: "http-error",
          status: 404,
          body: {
            error: {
              message: "The model `gpt-fake` does not exist or you do not have access to it.",
              type: "invalid_request_error",
              param: null,
              code: "model_not_found",
            },
          },
        },
      },
      {
        reason: "rate_limited",
        label: "429 rate_limit_exceeded",
        reply: {
          kind: "http-error",
          status: 429,
          headers: { "retry-after": "3" },
          body: {
            error: {
              message: "Rate limit reached for gpt-fake on requests per min (RPM): Limit 3, Used 3.",
              type: "requests",
              param: null,
              code: "rate_limit_exceeded",
            },
          },
        },
      },
      {
        reason: "context_length",
        label: "400 context_length_exceeded",
        reply: {
          kind: "http-error",
          status: 400,
          body: {
            error: {
              message:
                "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens. Please reduce the length of the messages.",
              type: "invalid_request_error",
              param: "messages",
              code: "context_length_exceeded",
            },
          },
        },
      },
      {
        reason: "content_filter",
        label: 'finish_reason "content_filter"',
        reply: { kind: "text", deltas: ["I can", "not"], filtered: true },
      },
      {
        reason: "content_filter",
        label: "400 content_filter (Azure OpenAI's prompt filter)",
        reply: {
          kind: "http-error",
          status: 400,
          body: {
            error: {
              message:
                "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
              type: null,
              param: "prompt",
              code: "content_filter",
              status: 400,
            },
          },
        },
      },
      {
        reason: "timeout",
        label: "a stream that goes silent",
        reply: { kind: "text", deltas: [], hangAfter: 0 },
      },
      {
        reason: "timeout",
        label: "504 from a gateway",
        reply: { kind: "http-error", status: 504, body: {} },
      },
      { reason: "network", label: "connection refused", reply: { kind: "connection-refused" } },
      {
        reason: "other",
        label: "500 server_error",
        reply: {
          kind: "http-error",
          status: 500,
          body: {
            error: { message: "The server had an error.", type: "server_error", param: null, code: null },
          },
        },
      },
    ],
    async setup(replies) {
      const fake = fakeOpenAICompatible(replies);
      const model = await resolved(
        {
          provider: "openai-compatible",
          model: "gpt-fake",
          baseUrl: "https://llm.example.test/v1",
          apiKeySecret: "llm-key",
          temperature: 0.3,
          maxOutputTokens: 256,
        },
        { fetch: fake.fetch },
      );
      return { model, sent: () => fake.requests };
    },
  },
  {
    name: "anthropic",
    http: true,
    failures: [
      {
        reason: "auth",
        label: "401 authentication_error",
        reply: {
          kind: "http-error",
          status: 401,
          body: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } },
        },
      },
      {
        reason: "not_found",
        label: "404 not_found_error",
        reply: {
          kind: "http-error",
          status: 404,
          body: { type: "error", error: { type: "not_found_error", message: "model: claude-fake" } },
        },
      },
      {
        reason: "rate_limited",
        label: "429 rate_limit_error",
        reply: {
          kind: "http-error",
          status: 429,
          headers: { "retry-after": "3" },
          body: {
            type: "error",
            error: {
              type: "rate_limit_error",
              message: "Number of request tokens has exceeded your per-minute rate limit.",
            },
          },
        },
      },
      {
        reason: "context_length",
        label: '400 invalid_request_error "prompt is too long"',
        reply: {
          kind: "http-error",
          status: 400,
          body: {
            type: "error",
            error: {
              type: "invalid_request_error",
              message: "prompt is too long: 208310 tokens > 200000 maximum",
            },
          },
        },
      },
      {
        reason: "content_filter",
        label: 'stop_reason "refusal"',
        reply: { kind: "text", deltas: ["I can", "not"], filtered: true },
      },
      {
        reason: "timeout",
        label: "a stream that goes silent",
        reply: { kind: "text", deltas: [], hangAfter: 0 },
      },
      { reason: "network", label: "connection refused", reply: { kind: "connection-refused" } },
      {
        reason: "other",
        label: "529 overloaded_error",
        reply: {
          kind: "http-error",
          status: 529,
          body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
        },
      },
    ],
    async setup(replies) {
      const fake = fakeAnthropic(replies);
      const model = await resolved(
        {
          provider: "anthropic",
          model: "claude-fake",
          baseUrl: "https://anthropic.example.test/v1",
          apiKeySecret: "llm-key",
          temperature: 0.3,
          maxOutputTokens: 256,
        },
        { fetch: fake.fetch },
      );
      return { model, sent: () => fake.requests };
    },
  },
  {
    name: "workers-ai",
    http: false,
    // Workers AI reports failures as binding errors with internal codes (developers.cloudflare.com/workers-ai/platform/
    // errors); it has no content filter that ends a reply, so it never reports `content_filter`.
    failures: [
      {
        reason: "auth",
        label: "3041 account not allowed",
        reply: {
          kind: "binding-error",
          message: "AiError: 3041: The account is not allowed to access this model",
        },
      },
      {
        reason: "not_found",
        label: "5007 no such model",
        reply: {
          kind: "binding-error",
          message: "AiError: 5007: No such model @cf/meta/llama-3.1-8b-instruct or task",
        },
      },
      {
        reason: "rate_limited",
        label: "3040 out of capacity",
        reply: {
          kind: "binding-error",
          message: "InferenceUpstreamError: 3040: Capacity temporarily exceeded, please try again.",
        },
      },
      {
        reason: "context_length",
        label: "5021 context window exceeded",
        reply: {
          kind: "binding-error",
          message:
            "AiError: 5021: The estimated number of input and maximum output tokens (9216) exceeded this model context window limit (8192).",
        },
      },
      {
        reason: "timeout",
        label: "3007 request timeout",
        reply: { kind: "binding-error", message: "AiError: 3007: Request timeout" },
      },
      {
        reason: "timeout",
        label: "a stream that goes silent",
        reply: { kind: "text", deltas: [], hangAfter: 0 },
      },
      { reason: "network", label: "connection lost", reply: { kind: "connection-refused" } },
      {
        reason: "other",
        label: "an error without a known code",
        reply: { kind: "binding-error", message: "InferenceUpstreamError: something unexpected happened" },
      },
    ],
    async setup(replies) {
      const fake = fakeWorkersAI(replies);
      const model = await resolved(
        {
          provider: "workers-ai",
          model: "@cf/meta/llama-3.1-8b-instruct",
          temperature: 0.3,
          maxOutputTokens: 256,
        },
        { ai: fake.binding },
      );
      return { model, sent: () => fake.calls.map((c) => ({ body: c.inputs })) };
    },
  },
];

function turn(
  model: LanguageModelV4,
  options: { signal?: AbortSignal; onDelta?: (t: string) => void; stallTimeoutMs?: number } = {},
) {
  const deltas: string[] = [];
  const result = runTurn({
    model,
    ...(options.stallTimeoutMs !== undefined ? { stallTimeoutMs: options.stallTimeoutMs } : {}),
    prompt: [
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "Say hello." }] },
    ],
    signal: options.signal ?? new AbortController().signal,
    maxSteps: 3,
    onDelta: (t) => {
      deltas.push(t);
      options.onDelta?.(t);
    },
    onToolCall: async () => ({ output: "unused" }),
  });
  return { result, deltas };
}

function expectNoLeak(result: TurnResult) {
  const serialized = JSON.stringify(result);
  expect(serialized).not.toContain(API_KEY);
  expect(serialized).not.toContain(PROVIDER_BODY);
}

describe.each(adapters)("$name adapter", (adapter) => {
  it("streams the reply as deltas in order, with usage, and sends the config's settings", async () => {
    const { model, sent } = await adapter.setup([
      { kind: "text", deltas: ["Hel", "lo", " there", "!"], usage: { input: 21, output: 6 } },
    ]);
    const { result, deltas } = turn(model);
    const outcome = await result;
    expect(deltas).toEqual(["Hel", "lo", " there", "!"]);
    expect(outcome).toMatchObject({
      status: "succeeded",
      text: "Hello there!",
      usage: { inputTokens: 21, outputTokens: 6 },
    });
    const body = sent()[0]?.body;
    expect(body).toMatchObject({ max_tokens: 256 });
    expect(JSON.stringify(body)).toContain("Say hello.");
    expect(JSON.stringify(body)).toContain("Be brief.");
  });

  it.each([
    { status: 401, retryable: false },
    { status: 429, retryable: true },
    { status: 500, retryable: true },
  ])("maps a $status from the provider to a safe upstream_unavailable", async ({ status, retryable }) => {
    const { model } = await adapter.setup([
      {
        kind: "http-error",
        status,
        headers: { "retry-after": "7" },
        body: {
          type: "error",
          error: { type: "api_error", message: `${PROVIDER_BODY}: Incorrect API key provided: ${API_KEY}` },
        },
      },
    ]);
    const { result, deltas } = turn(model);
    const outcome = await result;
    expect(deltas).toEqual([]);
    expect(outcome).toMatchObject({ status: "failed", error: { code: "upstream_unavailable", retryable } });
    if (adapter.http && status === 429) expect(outcome).toMatchObject({ error: { retryAfter: 7 } });
    expectNoLeak(outcome);
  });

  for (const failure of adapter.failures) {
    it(`names the reason ${failure.reason} for ${failure.label}, under upstream_unavailable`, async () => {
      const { model } = await adapter.setup([failure.reply]);
      const outcome = await turn(model, { stallTimeoutMs: 100 }).result;
      expect(outcome).toMatchObject({
        status: "failed",
        error: { code: "upstream_unavailable", reason: failure.reason },
      });
      if (outcome.status === "failed") {
        const retryable = ["rate_limited", "timeout", "network", "other"].includes(failure.reason);
        expect(outcome.error.retryable).toBe(retryable);
      }
      expectNoLeak(outcome);
    });
  }

  it("fails a stream that breaks midway, keeping the text that arrived", async () => {
    const { model } = await adapter.setup([
      { kind: "text", deltas: ["one ", "two ", "three"], breakAfter: 2 },
    ]);
    const { result, deltas } = turn(model);
    const outcome = await result;
    expect(deltas).toEqual(["one ", "two "]);
    expect(outcome).toMatchObject({
      status: "failed",
      text: "one two ",
      error: { code: "upstream_unavailable", reason: "network", retryable: true },
    });
    expectNoLeak(outcome);
  });

  it("ends as aborted when cancelled mid-stream", async () => {
    const { model } = await adapter.setup([{ kind: "text", deltas: ["a", "b", "c", "d"], hangAfter: 2 }]);
    const controller = new AbortController();
    const { result, deltas } = turn(model, {
      signal: controller.signal,
      // Cancelled as the second delta arrives, right where the provider's body hangs.
      onDelta: () => {
        if (deltas.length === 2) controller.abort();
      },
    });
    const outcome = await result;
    expect(outcome).toMatchObject({ status: "aborted", text: "ab" });
    expect(deltas).toEqual(["a", "b"]);
  });

  it("runs a tool round trip: the call, its result sent back, then the answer", async () => {
    const { model, sent } = await adapter.setup([
      {
        kind: "tool-call",
        toolCallId: "call_w1",
        toolName: "weather",
        input: { city: "Oslo" },
        usage: { input: 9, output: 4 },
      },
      { kind: "text", deltas: ["It is ", "sunny."], usage: { input: 30, output: 3 } },
    ]);
    const calls: unknown[] = [];
    const outcome = await runTurn({
      model,
      prompt: [{ role: "user", content: [{ type: "text", text: "Weather in Oslo?" }] }],
      tools: [
        {
          type: "function",
          name: "weather",
          description: "Current weather",
          inputSchema: { type: "object", properties: { city: { type: "string" } } },
        },
      ],
      signal: new AbortController().signal,
      maxSteps: 3,
      onDelta: () => {},
      onToolCall: async (call) => {
        calls.push({ toolName: call.toolName, input: call.input });
        return { output: { tempC: 21, sky: "clear" } };
      },
    });
    expect(calls).toEqual([{ toolName: "weather", input: { city: "Oslo" } }]);
    expect(outcome).toMatchObject({
      status: "succeeded",
      text: "It is sunny.",
      usage: { inputTokens: 39, outputTokens: 7 },
    });
    expect(sent()).toHaveLength(2);
    expect(JSON.stringify(sent()[1]?.body)).toContain("clear");
  });
});

describe("provider credentials", () => {
  it("sends the OpenAI-compatible key as a Bearer token and never returns it", async () => {
    const fake = fakeOpenAICompatible([
      { kind: "text", deltas: ["ok"] },
      {
        kind: "http-error",
        status: 401,
        body: { error: { message: `bad key ${API_KEY}`, code: PROVIDER_BODY } },
      },
    ]);
    const model = await resolved(
      {
        provider: "openai-compatible",
        model: "m",
        baseUrl: "https://llm.example.test/v1/",
        apiKeySecret: "llm-key",
      },
      { fetch: fake.fetch },
    );
    expect(await turn(model).result).toMatchObject({ status: "succeeded" });
    const failed = await turn(model).result;
    expect(failed).toMatchObject({ status: "failed", error: { code: "upstream_unavailable" } });
    expectNoLeak(failed);
    expect(fake.requests[0]?.url).toBe("https://llm.example.test/v1/chat/completions");
    expect(fake.requests[0]?.headers.get("authorization")).toBe(`Bearer ${API_KEY}`);
    expect(fake.requests[0]?.headers.get("x-api-key")).toBeNull();
  });

  it("sends the Anthropic key in x-api-key and never returns it", async () => {
    const fake = fakeAnthropic([
      { kind: "text", deltas: ["ok"] },
      {
        kind: "http-error",
        status: 401,
        body: {
          type: "error",
          error: { type: "authentication_error", message: `${PROVIDER_BODY} ${API_KEY}` },
        },
      },
    ]);
    const model = await resolved(
      { provider: "anthropic", model: "claude-fake", apiKeySecret: "llm-key" },
      { fetch: fake.fetch },
    );
    expect(await turn(model).result).toMatchObject({ status: "succeeded" });
    const failed = await turn(model).result;
    expect(failed).toMatchObject({
      status: "failed",
      error: { code: "upstream_unavailable", retryable: false },
    });
    expectNoLeak(failed);
    expect(fake.requests[0]?.url).toBe("https://api.anthropic.com/v1/messages");
    expect(fake.requests[0]?.headers.get("x-api-key")).toBe(API_KEY);
    expect(fake.requests[0]?.headers.get("authorization")).toBeNull();
    expect(fake.requests[0]?.body).toMatchObject({ model: "claude-fake", stream: true });
  });

  it("sends no Authorization header to an OpenAI-compatible endpoint configured without a key", async () => {
    const fake = fakeOpenAICompatible([{ kind: "text", deltas: ["ok"] }]);
    const model = await resolved(
      { provider: "openai-compatible", model: "m", baseUrl: "https://llm.example.test/v1" },
      { fetch: fake.fetch },
    );
    expect(await turn(model).result).toMatchObject({ status: "succeeded", text: "ok" });
    expect(fake.requests[0]?.headers.get("authorization")).toBeNull();
  });
});

describe("resolveModel refusals", () => {
  it("refuses an unknown secret alias with bad_request, makes no request and echoes no secret", async () => {
    const fake = fakeOpenAICompatible([]);
    const asked: string[] = [];
    const result = await resolveModel(
      {
        provider: "openai-compatible",
        model: "m",
        baseUrl: "https://llm.example.test/v1",
        apiKeySecret: "missing-key",
      },
      {
        env,
        fetch: fake.fetch,
        tenantSecret: async (alias) => {
          asked.push(alias);
          return alias === "llm-key" ? API_KEY : null;
        },
      },
    );
    expect(result).toMatchObject({ ok: false, code: "bad_request" });
    expect(asked).toEqual(["missing-key"]);
    expect(JSON.stringify(result)).not.toContain(API_KEY);
    expect(fake.requests).toHaveLength(0);
  });

  it("refuses an Anthropic model without apiKeySecret", async () => {
    const result = await resolveModel(
      { provider: "anthropic", model: "claude-fake" },
      { env, tenantSecret: secrets({ "llm-key": API_KEY }) },
    );
    expect(result).toMatchObject({ ok: false, code: "bad_request" });
  });

  it("answers upstream_unavailable for Workers AI when no AI binding exists", async () => {
    const result = await resolveModel(
      { provider: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct" },
      { env, tenantSecret: secrets({}) },
    );
    expect(result).toMatchObject({ ok: false, code: "upstream_unavailable" });
  });

  it("refuses a plain-http baseUrl outside development, and in development allows only a local one", async () => {
    const config = (baseUrl: string): ModelConfig => ({
      provider: "openai-compatible",
      model: "m",
      baseUrl,
      apiKeySecret: "llm-key",
    });
    const inEnv = (environment: Env["ENVIRONMENT"], baseUrl: string) =>
      resolveModel(config(baseUrl), {
        env: { ...env, ENVIRONMENT: environment },
        tenantSecret: secrets({ "llm-key": API_KEY }),
      });
    for (const environment of ["production", "staging"] as const) {
      for (const baseUrl of [
        "http://llm.example.test/v1",
        "http://127.0.0.1:11434/v1",
        "http://localhost:8080",
      ]) {
        expect(await inEnv(environment, baseUrl), `${environment} ${baseUrl}`).toMatchObject({
          ok: false,
          code: "bad_request",
        });
      }
    }
    expect(await inEnv("development", "http://llm.example.test/v1")).toMatchObject({
      ok: false,
      code: "bad_request",
    });
    expect((await inEnv("development", "http://127.0.0.1:11434/v1")).ok).toBe(true);
    expect((await inEnv("development", "http://localhost:8080/v1")).ok).toBe(true);
  });

  it.each([
    "https://127.0.0.1/v1",
    "https://169.254.169.254/latest",
    "https://[::1]/v1",
    "https://10.0.0.5/v1",
    "https://metadata.google.internal/v1",
    "https://agents.example.test/v1",
  ])("blocks the model endpoint %s at call time, sending nothing and echoing no key", async (baseUrl) => {
    for (const provider of ["openai-compatible", "anthropic"] as const) {
      const fake = provider === "anthropic" ? fakeAnthropic([]) : fakeOpenAICompatible([]);
      const result = await resolveModel(
        { provider, model: "m", baseUrl, apiKeySecret: "llm-key" },
        {
          env: { ...env, ENVIRONMENT: "production" },
          tenantSecret: secrets({ "llm-key": API_KEY }),
          fetch: fake.fetch,
          platformHosts: ["agents.example.test"],
        },
      );
      expect(result).toMatchObject({ ok: false, code: "bad_request" });
      expect(JSON.stringify(result)).not.toContain(API_KEY);
      expect(fake.requests).toHaveLength(0);
    }
  });

  it("resolves the local model without secrets or network", async () => {
    const result = await resolveModel(
      { provider: "local", model: "echo", local: { chunks: 2 } },
      { env, tenantSecret: secrets({}) },
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.provider).toBe("local");
    const { result: outcome, deltas } = turn(result.value);
    expect(await outcome).toMatchObject({ status: "succeeded", text: "Echo: Say hello." });
    expect(deltas).toHaveLength(2);
  });
});
