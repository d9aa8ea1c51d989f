// Tool history (docs/protocol.md): a turn's tool call and result stay in the branch, and the next turn's request to each
// provider carries them in that provider's own shape; branches, eviction, budgets, D1 and export see them too.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { tenantRunQuota } from "../../src/auth/run-quota";
import { type Artifact, artifactSchema } from "../../src/control/artifact";
import { digestOf } from "../../src/control/canonical-json";
import { buildPrompt } from "../../src/models/prompt";
import type { ServerFrame } from "../../src/shared/protocol";
import { type Entry, EntryStore } from "../../src/storage/thread/entry-store";
import type { ThreadBinding } from "../../src/storage/thread/pin-store";
import type { Run } from "../../src/storage/thread/run-store";
import { migrateThreadSchema } from "../../src/storage/thread/thread-schema";
import { threadObjectName } from "../../src/thread/contract";
import { ThreadRuntime, type TurnRequest } from "../../src/thread/conversation/thread-runtime";
import { PromptHistory } from "../../src/thread/run/prompt-history";
import {
  type FakeReply,
  fakeAnthropic,
  fakeOpenAICompatible,
  fakeWorkersAI,
} from "../helpers/fake-providers";
import { fakeToolServer, jsonResponse } from "../helpers/fake-tool-server";
import { api, createTenant, json } from "../helpers/tenants";
import { clientMessageId, connect, launch, liveAgent, ORIGIN } from "../helpers/threads";

const SIGNING_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const API_KEY = "sk-test-4f1c9a7e2b8d0e6f";
const TOOL_URL = "https://hooks.example.com/orders";
const QUESTION = "Where is order A1?";
const FOLLOW_UP = "And when does it arrive?";
const ANSWER = "It has shipped.";
const TOOL_ANSWER = { status: "shipped", eta: "Thursday", warehouse: "WH-7731" };
/** Only the tool ever says this: the reply does not repeat it, so a client that sees it was sent tool data. */
const TOOL_ONLY = "WH-7731";

/** Turn 1: the model looks the order up, then answers. Turn 2 (and any later one): it just answers. */
const SCRIPT: FakeReply[] = [
  { kind: "tool-call", toolCallId: "call_1", toolName: "lookup", input: { orderId: "A1" } },
  { kind: "text", deltas: ["It has ", "shipped."] },
  { kind: "text", deltas: ["On Thursday."] },
  { kind: "text", deltas: ["Again."] },
];

const TOOLS = [
  {
    name: "lookup",
    description: "Looks an order up.",
    url: TOOL_URL,
    signingSecret: "hook-signing",
    // The tool's timeout timer outlives its call, and an eviction waits for it: short keeps the tests quick.
    timeoutMs: 500,
    inputSchema: { type: "object", properties: { orderId: { type: "string" } } },
  },
];

afterEach(() => {
  vi.restoreAllMocks();
});

type Messages = Record<string, unknown>[];
const messagesOf = (body: unknown): Messages =>
  z.object({ messages: z.array(z.record(z.string(), z.unknown())) }).parse(body).messages;

interface Provider {
  name: string;
  model: Record<string, unknown>;
  /** Installs the fake; returns the env the thread runs with and the message lists the provider was sent. */
  install(): { env: Env; sent: () => Messages[] };
  /** Checks the earlier turn's call and result in `messages` (the follow-up's request), in the provider's shape. */
  expectToolHistory(messages: Messages, toolAnswer?: unknown): void;
}

/** The HTTP providers are reached through the global fetch; the fake answers there and records every body. */
function httpFake(fake: { fetch: typeof fetch; requests: { body: unknown }[] }) {
  vi.spyOn(globalThis, "fetch").mockImplementation(fake.fetch);
  return { env, sent: () => fake.requests.map((r) => messagesOf(r.body)) };
}

const providers: Provider[] = [
  {
    name: "openai-compatible",
    model: {
      provider: "openai-compatible",
      model: "gpt-fake",
      baseUrl: "https://llm.example.test/v1",
      apiKeySecret: "llm-key",
    },
    install: () => httpFake(fakeOpenAICompatible(SCRIPT)),
    expectToolHistory(messages, toolAnswer = TOOL_ANSWER) {
      expect(messages.map((m) => m.role)).toEqual([
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
      ]);
      expect(messages[2]).toMatchObject({
        role: "assistant",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup" } }],
      });
      const call = z
        .object({ tool_calls: z.array(z.object({ function: z.object({ arguments: z.string() }) })) })
        .parse(messages[2]);
      expect(JSON.parse(call.tool_calls[0]?.function.arguments ?? "")).toEqual({ orderId: "A1" });
      expect(messages[3]).toMatchObject({ role: "tool", tool_call_id: "call_1" });
      expect(JSON.parse(String(messages[3]?.content))).toEqual(toolAnswer);
      expect(messages[4]).toMatchObject({ role: "assistant", content: ANSWER });
    },
  },
  {
    name: "anthropic",
    model: {
      provider: "anthropic",
      model: "claude-fake",
      baseUrl: "https://anthropic.example.test/v1",
      apiKeySecret: "llm-key",
    },
    install: () => httpFake(fakeAnthropic(SCRIPT)),
    expectToolHistory(messages, toolAnswer = TOOL_ANSWER) {
      expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
      expect(messages[1]).toEqual({
        role: "assistant",
        content: [{ type: "tool_use", id: "call_1", name: "lookup", input: { orderId: "A1" } }],
      });
      expect(messages[2]).toMatchObject({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "call_1" }],
      });
      expect(JSON.stringify(messages[2])).toContain(JSON.stringify(JSON.stringify(toolAnswer)).slice(1, -1));
      expect(messages[3]).toMatchObject({ role: "assistant", content: [{ type: "text", text: ANSWER }] });
    },
  },
  {
    name: "workers-ai",
    model: { provider: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct" },
    install() {
      const fake = fakeWorkersAI(SCRIPT);
      return { env: { ...env, AI: fake.binding }, sent: () => fake.calls.map((c) => messagesOf(c.inputs)) };
    },
    expectToolHistory(messages, toolAnswer = TOOL_ANSWER) {
      expect(messages.map((m) => m.role)).toEqual([
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
      ]);
      expect(messages[2]).toMatchObject({
        role: "assistant",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup" } }],
      });
      expect(messages[3]).toMatchObject({ role: "tool", tool_call_id: "call_1", name: "lookup" });
      expect(JSON.parse(String(messages[3]?.content))).toEqual(toolAnswer);
      expect(messages[4]).toMatchObject({ role: "assistant", content: ANSWER });
    },
  },
];

async function tenantWithSecrets() {
  const tenant = await createTenant();
  for (const [alias, value] of [
    ["hook-signing", SIGNING_SECRET],
    ["llm-key", API_KEY],
  ] as const) {
    const put = await api(`/v1/secrets/${alias}`, { method: "PUT", key: tenant.apiKey, body: { value } });
    expect(put.status).toBe(204);
  }
  return tenant;
}

async function bindingFor(tenantId: string, model: Record<string, unknown>): Promise<ThreadBinding> {
  const artifact: Artifact = artifactSchema.parse({
    schemaVersion: 1,
    name: "Orders",
    instructions: "Answer from the tools.",
    model,
    tools: TOOLS,
  });
  return {
    tenantId,
    environment: "development",
    agentId: "agt_tool_history",
    threadId: `thr_${crypto.randomUUID().replace(/-/g, "")}`,
    versionId: "ver_tool_history",
    version: 1,
    digest: await digestOf(artifact),
    artifact,
    boundAt: Date.now(),
  };
}

/** A thread engine over one object's storage; a second one over the same storage is that object after a restart. */
function runtimeOver(
  state: DurableObjectState,
  threadEnv: Env,
  binding: ThreadBinding,
  frames: ServerFrame[],
) {
  return new ThreadRuntime({
    storage: state.storage,
    env: threadEnv,
    binding,
    now: Date.now,
    peers: () => [{ id: "test", send: (frame) => frames.push(frame) }],
    keepAliveWhile: (fn) => fn(),
    afterTurn: async () => {},
    fetch: fakeToolServer(() => jsonResponse(TOOL_ANSWER)).fetch,
    quota: tenantRunQuota(threadEnv, binding),
  });
}

type Unsubjected<T> = T extends unknown ? Omit<T, "subject"> : never;

async function turn(runtime: ThreadRuntime, request: Unsubjected<TurnRequest>) {
  const accepted = await runtime.accept({ ...request, subject: "vis_alice" });
  if (!accepted.ok) throw new Error(`turn refused: ${accepted.code} ${accepted.message}`);
  const settled = await runtime.settled(accepted.value.run.id);
  expect(settled?.status).toBe("succeeded");
  return { userEntry: accepted.value.userEntry, run: settled };
}

describe.each(providers)("tool history with the $name adapter", (provider) => {
  it("sends the next turn the earlier turn's tool call and result in the provider's shape", async () => {
    const tenant = await tenantWithSecrets();
    const binding = await bindingFor(tenant.tenantId, provider.model);
    const fake = provider.install();
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const frames: ServerFrame[] = [];
    await runInDurableObject(stub, async (_instance, state) => {
      const runtime = runtimeOver(state, fake.env, binding, frames);
      await turn(runtime, { kind: "send", clientMessageId: "cm_1", text: QUESTION });
      await turn(runtime, { kind: "send", clientMessageId: "cm_2", text: FOLLOW_UP });
    });

    const sent = fake.sent();
    expect(sent).toHaveLength(3);
    const [, withinTurn, followUp] = sent;
    if (withinTurn === undefined || followUp === undefined) throw new Error("missing requests");
    provider.expectToolHistory(followUp);
    // Exactly what the adapter sent back within turn 1, then the reply and the new question.
    expect(followUp.slice(0, withinTurn.length)).toEqual(withinTurn);
    expect(JSON.stringify(followUp.at(-1))).toContain(FOLLOW_UP);

    // Clients were never sent the tool's data: entry frames hold the reply text only.
    const entries = frames.flatMap((f) => (f.type === "entry" ? [f.entry] : []));
    expect(entries.map((e) => e.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(JSON.stringify(frames)).not.toContain(TOOL_ONLY);
  });
});

describe("tool history on branches, restarts and budgets", () => {
  it("sends a tool call on its own branch only: not to a regenerated reply, an edit, or a branch beside it", async () => {
    const tenant = await tenantWithSecrets();
    const binding = await bindingFor(tenant.tenantId, providers[0]?.model ?? {});
    const model = fakeOpenAICompatible([
      ...SCRIPT.slice(0, 2),
      ...Array.from({ length: 4 }, (_, i) => ({ kind: "text" as const, deltas: [`Reply ${i}.`] })),
    ]);
    const fake = httpFake(model);
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    await runInDurableObject(stub, async (_instance, state) => {
      const runtime = runtimeOver(state, fake.env, binding, []);
      const first = await turn(runtime, { kind: "send", clientMessageId: "cm_1", text: QUESTION });
      const lookedUp = first.run?.assistantEntryId ?? "";
      // Request 3: another reply to the same question, a sibling of the one that looked the order up.
      const again = await turn(runtime, { kind: "regenerate", entryId: lookedUp });
      // Request 4: the question edited, a sibling of the original question.
      await turn(runtime, {
        kind: "edit",
        entryId: first.userEntry?.id ?? "",
        clientMessageId: "cm_2",
        text: "Hi.",
      });
      // Request 5: a follow-up below the reply that looked the order up; request 6: below the regenerated one.
      await turn(runtime, { kind: "send", clientMessageId: "cm_3", text: FOLLOW_UP, parentId: lookedUp });
      await turn(runtime, {
        kind: "send",
        clientMessageId: "cm_4",
        text: FOLLOW_UP,
        parentId: again.run?.assistantEntryId ?? "",
      });
    });
    const sent = fake.sent();
    expect(sent).toHaveLength(6);
    const [, , regenerated, edited, below, beside] = sent;
    if (below === undefined) throw new Error("no request below the lookup");
    providers[0]?.expectToolHistory(below);
    for (const request of [regenerated, edited, beside]) {
      expect(request?.map((m) => m.role)).not.toContain("tool");
      expect(JSON.stringify(request)).not.toContain("call_1");
      expect(JSON.stringify(request)).not.toContain(TOOL_ONLY);
    }
    expect(regenerated?.map((m) => m.role)).toEqual(["system", "user"]);
    expect(beside?.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(beside?.[2]).toMatchObject({ role: "assistant", content: "Reply 0." });
  });

  it("still sends the tool call and result after the object restarts between the turns", async () => {
    const tenant = await tenantWithSecrets();
    const binding = await bindingFor(tenant.tenantId, providers[0]?.model ?? {});
    const fake = providers[0]?.install();
    if (fake === undefined) throw new Error("no provider");
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    await runInDurableObject(stub, async (_instance, state) => {
      await turn(runtimeOver(state, fake.env, binding, []), {
        kind: "send",
        clientMessageId: "cm_1",
        text: QUESTION,
      });
    });
    await evictDurableObject(stub);
    await runInDurableObject(stub, async (_instance, state) => {
      // A fresh engine remembers nothing: the history is read back from the object's SQLite.
      await turn(runtimeOver(state, fake.env, binding, []), {
        kind: "send",
        clientMessageId: "cm_2",
        text: FOLLOW_UP,
      });
    });
    const followUp = fake.sent()[2];
    if (followUp === undefined) throw new Error("no follow-up request");
    providers[0]?.expectToolHistory(followUp);
  });
});

async function threadStub(agent: { tenantId: string; agentId: string }, threadId: string) {
  const name = await threadObjectName(env.DO_NAME_KEY, {
    tenantId: agent.tenantId,
    environment: "development",
    agentId: agent.agentId,
    threadId,
  });
  return env.THREAD.get(env.THREAD.idFromName(name));
}

describe("tool history through the public API", () => {
  it("survives eviction, reaches D1 on the reply's row and the export, and never the widget", async () => {
    const agent = await liveAgent({
      artifact: {
        instructions: "Answer from the tools.",
        model: { provider: "openai-compatible", model: "gpt-fake", baseUrl: "https://llm.example.test/v1" },
        tools: TOOLS,
      },
    });
    const put = await api("/v1/secrets/hook-signing", {
      method: "PUT",
      key: agent.apiKey,
      body: { value: SIGNING_SECRET },
    });
    expect(put.status).toBe(204);
    const model = fakeOpenAICompatible(SCRIPT);
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = new Request(input, init).url;
      if (url.startsWith("https://llm.example.test/")) return model.fetch(input, init);
      // The tool echoes the signing secret: it must reach neither storage nor the next prompt.
      if (url === TOOL_URL) return jsonResponse({ ...TOOL_ANSWER, note: `signed with ${SIGNING_SECRET}` });
      throw new Error(`unexpected outbound request to ${url}`);
    });

    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: QUESTION });
    await ws.next("run", (f) => f.status === "succeeded");
    ws.ws.close();
    await evictDurableObject(await threadStub(agent, session.threadId));

    const again = await connect(session);
    again.send({ type: "send", clientMessageId: clientMessageId(), text: FOLLOW_UP });
    await again.next("run", (f) => f.status === "succeeded");
    const entryFrames = again.all("entry");
    again.ws.close();

    const followUp = messagesOf(model.requests[2]?.body);
    providers[0]?.expectToolHistory(followUp, { ...TOOL_ANSWER, note: "signed with [REDACTED]" });
    expect(JSON.stringify(followUp)).not.toContain(SIGNING_SECRET);
    expect(JSON.stringify(followUp)).toContain("[REDACTED]");

    // The widget's view of the thread: reply text only, over the socket and over HTTP.
    const branch = await api(`/v1/threads/${session.threadId}/entries`, {
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
    });
    const branchText = await branch.text();
    expect(branch.status).toBe(200);
    expect(branchText).toContain(ANSWER);
    expect(branchText).not.toContain(TOOL_ONLY);
    expect(JSON.stringify(entryFrames)).not.toContain(TOOL_ONLY);

    // The tenant's copy in D1: the calls with their results on the reply's row.
    const messages = await json(
      await api(`/v1/sessions/${session.threadId}/messages`, { key: agent.apiKey }),
      200,
      z.object({
        items: z.array(
          z.object({ role: z.string().nullable(), content: z.string(), toolCalls: z.json().nullable() }),
        ),
      }),
    );
    const reply = messages.items.find((m) => m.content === ANSWER);
    expect(reply?.toolCalls).toEqual([
      expect.objectContaining({
        toolCallId: "call_1",
        toolName: "lookup",
        input: { orderId: "A1" },
        output: { ...TOOL_ANSWER, note: "signed with [REDACTED]" },
      }),
    ]);
    expect(messages.items.filter((m) => m.role === "user").every((m) => m.toolCalls === null)).toBe(true);

    const exported = await api(`/v1/sessions/${session.threadId}/export`, { key: agent.apiKey });
    const exportText = await exported.text();
    expect(exported.status).toBe(200);
    expect(exportText).toContain('"toolCalls":[{"toolCallId":"call_1"');
    expect(exportText).not.toContain(SIGNING_SECRET);
  });
});

type Prompt = ReturnType<typeof buildPrompt>;

/** Every tool call in `prompt` is followed at once by its result, and no result is there without its call. */
function expectWholePairs(prompt: Prompt): void {
  const answeredAt = new Set<number>();
  prompt.forEach((message, i) => {
    if (message.role !== "assistant" || typeof message.content === "string") return;
    const ids = message.content.flatMap((p) => (p.type === "tool-call" ? [p.toolCallId] : []));
    const results = prompt.slice(i + 1, i + 1 + ids.length);
    expect(
      results.flatMap((m) =>
        m.role === "tool" ? m.content.map((p) => (p.type === "tool-result" ? p.toolCallId : p.type)) : [],
      ),
    ).toEqual(ids);
    for (let n = 0; n < ids.length; n++) answeredAt.add(i + 1 + n);
  });
  prompt.forEach((message, i) => {
    if (message.role === "tool") expect(answeredAt.has(i)).toBe(true);
  });
}

const lookup = (id: string, step: number, textOffset: number) => ({
  toolCallId: id,
  toolName: "lookup",
  input: { id },
  output: { found: id, detail: "d".repeat(40) },
  step,
  textOffset,
});

describe("tool history under the token budget", () => {
  it("keeps the newest exchanges that fit, a tool call never without its result nor a result without its call", async () => {
    const stub = env.THREAD.get(env.THREAD.idFromName(`tool-budget-${crypto.randomUUID()}`));
    const outcome = await runInDurableObject(stub, (_i, state) => {
      migrateThreadSchema(state.storage);
      const store = new EntryStore(state.storage, { now: () => 1 });
      let parent: string | null = null;
      const append = (role: "user" | "assistant", body: Record<string, unknown>): Entry => {
        const appended = store.append({ parentId: parent, kind: "message", role, body });
        if (!appended.ok) throw new Error(appended.message);
        parent = appended.value.entry.id;
        return appended.value.entry;
      };
      // Bodies as a run writes them: a plain reply, one with two parallel calls then one more, one with one call.
      append("user", { text: "first question".padEnd(40, ".") });
      append("assistant", { text: "plain answer".padEnd(40, "."), status: "complete" });
      append("user", { text: "second question".padEnd(40, ".") });
      append("assistant", {
        text: "Checking. Again. Found both.",
        status: "complete",
        toolCalls: [lookup("call_a", 0, 10), lookup("call_b", 0, 10), lookup("call_c", 1, 17)],
      });
      append("user", { text: "third question".padEnd(40, ".") });
      append("assistant", { text: "Here it is.", status: "complete", toolCalls: [lookup("call_d", 0, 0)] });
      const question = append("user", { text: "and now?" });

      const prompts: Prompt[] = [];
      for (let budget = 1; budget <= 200; budget++) {
        const branch = new PromptHistory(store, budget).historyFor(question);
        prompts.push(buildPrompt({ instructions: "I", branch, maxContextTokens: budget }));
      }
      // The remembered history of a turn gives the next turn below it the same prompt as reading the branch back.
      const remembering = new PromptHistory(store, 60);
      const before = remembering.historyFor(question);
      const reply = append("assistant", {
        text: "Done.",
        status: "complete",
        toolCalls: [lookup("call_e", 0, 0)],
      });
      remembering.remember(before, question, { assistantEntryId: reply.id } as Run);
      const next = append("user", { text: "thanks" });
      return {
        prompts,
        remembered: buildPrompt({
          instructions: "I",
          branch: remembering.historyFor(next),
          maxContextTokens: 60,
        }),
        readBack: buildPrompt({
          instructions: "I",
          branch: new PromptHistory(store, 60).historyFor(next),
          maxContextTokens: 60,
        }),
      };
    });

    const full = outcome.prompts.at(-1) ?? [];
    // Everything fits in 200 tokens: both rounds of the second reply, in order, then its closing text.
    expect(full.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
    ]);
    let kept = 0;
    for (const prompt of outcome.prompts) {
      expectWholePairs(prompt);
      // Newest first: each prompt is the newest end of the full one, and a larger budget never keeps less.
      expect(prompt.slice(1)).toEqual(full.slice(full.length - (prompt.length - 1)));
      expect(prompt[1]?.role).toBe("user");
      expect(prompt.length).toBeGreaterThanOrEqual(kept);
      kept = prompt.length;
    }
    // Whole exchanges only: the question alone, then + the third (4 messages), the second (7), the first (2).
    const lengths = new Set(outcome.prompts.map((p) => p.length));
    expect([...lengths].sort((a, b) => a - b)).toEqual([2, 6, 13, 15]);
    expect(outcome.remembered).toEqual(outcome.readBack);
    expectWholePairs(outcome.remembered);
    expect(JSON.stringify(outcome.remembered)).toContain("call_e");
  });
});
