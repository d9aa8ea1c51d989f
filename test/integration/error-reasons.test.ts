// Errors carry a reason beside their code (docs/protocol.md): a launch that could never run is refused at launch with
// `no_active_release`, and a provider's failure reaches the user named — in the run frame, the HTTP reply (JSON and
// SSE) and the stored run — for every HTTP model adapter, answered by local fakes of the providers' wire formats.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { threadExportSchema } from "../../src/storage/thread/thread-export";
import { threadObjectName } from "../../src/thread/contract";
import { openRunStores } from "../../src/thread/run/run-stores";
import { privateLaunchRequest, refusedWithoutTrace } from "../helpers/edge-gate";
import { type FakeReply, fakeAnthropic, fakeOpenAICompatible } from "../helpers/fake-providers";
import {
  api,
  createAgent,
  createRelease,
  createTenant,
  json,
  publish,
  saveDraft,
  validArtifact,
} from "../helpers/tenants";
import {
  clientMessageId,
  connect,
  type Launch,
  type LiveAgent,
  launch,
  launchRequest,
  liveAgent,
  ORIGIN,
} from "../helpers/threads";

afterEach(() => {
  vi.restoreAllMocks();
});

const errorBody = z.object({
  error: z.object({
    code: z.string(),
    reason: z.string().optional(),
    message: z.string(),
    requestId: z.string(),
  }),
});

describe("a launch for an agent with no active release", () => {
  it("is refused at launch with 409 conflict / no_active_release, storing nothing, until a release is active", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact());
    await publish(tenant.apiKey, agent.id, 1);
    // A release in another environment does not count: this Worker serves `development`.
    await createRelease(tenant.apiKey, agent.id, [{ version: 1, weight: 10_000 }], "production").then((r) =>
      api(`/v1/agents/${agent.id}/releases/${r.id}/activate`, { method: "POST", key: tenant.apiKey }),
    );

    for (const send of [
      () => launchRequest({ agentKey: agent.publicKey }),
      // Asked twice: an agent without a release is never cached as such.
      () => launchRequest({ agentKey: agent.publicKey }),
      () => privateLaunchRequest(tenant.apiKey, { agentId: agent.id, subject: "alice" }),
    ]) {
      const res = await refusedWithoutTrace(tenant.tenantId, send, 409, "conflict");
      const body = errorBody.parse(await res.json());
      expect(body.error.reason).toBe("no_active_release");
      expect(body.error.message).toContain("no active release");
    }

    // Activated (in this environment) after being refused: the next launch works at once, in this isolate and others.
    const release = await createRelease(tenant.apiKey, agent.id, [{ version: 1, weight: 10_000 }]);
    await api(`/v1/agents/${agent.id}/releases/${release.id}/activate`, {
      method: "POST",
      key: tenant.apiKey,
    });
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    expect(ws.all("ready")[0]).toMatchObject({ agent: { version: 1 } });
    ws.ws.close();
  });
});

const MODEL_URL = "https://llm.example.com/v1";
const ANTHROPIC_URL = "https://anthropic.example.com/v1";

interface HttpAdapter {
  name: string;
  model: Record<string, unknown>;
  fake: (replies: FakeReply[]) => { fetch: typeof fetch };
  url: string;
  /** A failure per reason, in this provider's own words. */
  failures: { reason: string; reply: FakeReply }[];
}

const adapters: HttpAdapter[] = [
  {
    name: "openai-compatible",
    model: { provider: "openai-compatible", model: "gpt-fake", baseUrl: MODEL_URL },
    fake: fakeOpenAICompatible,
    url: MODEL_URL,
    failures: [
      {
        reason: "auth",
        reply: {
          kind: "http-error",
          status: 401,
          body: {
            error: {
              message: "Incorrect API key provided.",
              type: "invalid_request_error",
              code: "invalid_api_key",
            },
          },
        },
      },
      {
        reason: "context_length",
        reply: {
          kind: "http-error",
          status: 400,
          body: {
            error: {
              message:
                "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
              type: "invalid_request_error",
              param: "messages",
              code: "context_length_exceeded",
            },
          },
        },
      },
      { reason: "content_filter", reply: { kind: "text", deltas: ["Well"], filtered: true } },
      { reason: "network", reply: { kind: "connection-refused" } },
    ],
  },
  {
    name: "anthropic",
    model: { provider: "anthropic", model: "claude-fake", baseUrl: ANTHROPIC_URL, apiKeySecret: "llm-key" },
    fake: fakeAnthropic,
    url: ANTHROPIC_URL,
    failures: [
      {
        reason: "rate_limited",
        reply: {
          kind: "http-error",
          status: 429,
          body: { type: "error", error: { type: "rate_limit_error", message: "Too many requests." } },
        },
      },
      {
        reason: "context_length",
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
      { reason: "content_filter", reply: { kind: "text", deltas: ["Well"], filtered: true } },
      {
        reason: "not_found",
        reply: {
          kind: "http-error",
          status: 404,
          body: { type: "error", error: { type: "not_found_error", message: "model: claude-fake" } },
        },
      },
    ],
  },
];

async function adapterAgent(adapter: HttpAdapter): Promise<LiveAgent> {
  const agent = await liveAgent({ artifact: { model: adapter.model } });
  if (adapter.name === "anthropic") {
    const put = await api("/v1/secrets/llm-key", {
      method: "PUT",
      key: agent.apiKey,
      body: { value: "sk-ant-fake" },
    });
    expect(put.status).toBe(204);
  }
  return agent;
}

/** The thread object's model calls go to the fake, answering `replies` in order. */
function fakeProvider(adapter: HttpAdapter, replies: FakeReply[]): void {
  const fake = adapter.fake(replies);
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = new Request(input, init).url;
    if (url.startsWith(adapter.url)) return fake.fetch(input, init);
    throw new Error(`unexpected outbound request to ${url}`);
  });
}

/** The run as the thread object stored it. */
async function storedRun(agent: LiveAgent, session: Launch, runId: string) {
  const name = await threadObjectName(env.DO_NAME_KEY, {
    tenantId: agent.tenantId,
    environment: "development",
    agentId: agent.agentId,
    threadId: session.threadId,
  });
  const stub = env.THREAD.get(env.THREAD.idFromName(name));
  return runInDurableObject(stub, (_i, state) =>
    openRunStores(state.storage, { now: Date.now }).runs.get(runId),
  );
}

const runReply = z.object({
  run: z.object({
    id: z.string(),
    status: z.string(),
    error: z.object({ code: z.string(), reason: z.string().optional(), message: z.string() }).optional(),
  }),
});

describe.each(adapters)("a $name provider failure", (adapter) => {
  it.each(adapter.failures)(
    "reaches the socket and the stored run as reason $reason",
    async ({ reason, reply }) => {
      const agent = await adapterAgent(adapter);
      fakeProvider(adapter, [reply]);
      const session = await launch(agent.publicKey);
      const ws = await connect(session);
      ws.send({ type: "send", clientMessageId: clientMessageId(), text: "hello" });
      const failed = await ws.next("run", (f) => f.status === "failed");
      expect(failed.error).toMatchObject({ code: "upstream_unavailable", reason });
      expect(failed.error?.message).not.toContain("Incorrect API key");
      const run = await storedRun(agent, session, failed.runId);
      expect(run?.error).toEqual(failed.error);
      ws.ws.close();
    },
  );

  it("stays on the run in the thread's export", async () => {
    const agent = await adapterAgent(adapter);
    const { reason, reply } = adapter.failures[0]!;
    fakeProvider(adapter, [reply]);
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "hello" });
    await ws.next("run", (f) => f.status === "failed");
    ws.ws.close();
    const res = await api(`/v1/sessions/${session.threadId}/export`, { key: agent.apiKey });
    const exported = await json(res, 200, threadExportSchema);
    expect(exported.runs.map((r) => r.error)).toEqual([
      expect.objectContaining({ code: "upstream_unavailable", reason }),
    ]);
  });

  it("reaches the HTTP reply, as JSON and as SSE", async () => {
    const agent = await adapterAgent(adapter);
    const { reason, reply } = adapter.failures.find((f) => f.reason === "context_length")!;
    fakeProvider(adapter, [reply, reply]);
    const session = await launch(agent.publicKey);
    const post = (accept: string) =>
      api(`/v1/threads/${session.threadId}/messages`, {
        method: "POST",
        headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN, Accept: accept },
        body: { clientMessageId: clientMessageId(), text: "a very long conversation" },
      });

    const plain = await json(await post("application/json"), 201, runReply);
    expect(plain.run).toMatchObject({ status: "failed", error: { code: "upstream_unavailable", reason } });

    const sse = await (await post("text/event-stream")).text();
    const runFrames = [...sse.matchAll(/^event: run\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
    expect(runFrames.at(-1)).toMatchObject({
      status: "failed",
      error: { code: "upstream_unavailable", reason },
    });
  });
});
