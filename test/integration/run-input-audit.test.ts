// Reproducible message audit (docs/api.md): every run's model input rebuilt from storage is, byte for byte, what the
// provider received, for each adapter; the HTTP route verifies its digest and keeps tenants and erasure apart.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { tenantRunQuota } from "../../src/auth/run-quota";
import { type Artifact, artifactSchema } from "../../src/control/artifact";
import { canonicalJson, digestOf, sha256Hex } from "../../src/control/canonical-json";
import type { AgentVersion, DeploymentStore } from "../../src/control/deployment-store";
import { ok, type Result } from "../../src/errors";
import { buildPrompt } from "../../src/models/prompt";
import { PROMPT_BUILDERS, type PromptBuilder } from "../../src/models/prompt-builders";
import { resolveModel } from "../../src/models/resolve-model";
import { messageResponse, type RunInputResponse, runInputResponse } from "../../src/shared/sessions-api";
import { ActionStore, type RunAction } from "../../src/storage/thread/action-store";
import { adoptThreadContext } from "../../src/storage/thread/context-store";
import { EntryStore } from "../../src/storage/thread/entry-store";
import type { ThreadBinding } from "../../src/storage/thread/pin-store";
import { readRunAudit } from "../../src/storage/thread/run-audit-store";
import { findRun } from "../../src/storage/thread/run-store";
import { threadExportSchema } from "../../src/storage/thread/thread-export";
import type { RunInputView } from "../../src/thread/contract";
import { ThreadRuntime, type TurnRequest } from "../../src/thread/conversation/thread-runtime";
import { VersionBindings } from "../../src/thread/run/run-artifact";
import { rebuildRunInput } from "../../src/thread/run/run-input";
import { TOOL_NOT_PERMITTED } from "../../src/thread/run/run-wiring";
import {
  type FakeReply,
  fakeAnthropic,
  fakeOpenAICompatible,
  fakeWorkersAI,
} from "../helpers/fake-providers";
import { fakeToolServer, jsonResponse } from "../helpers/fake-tool-server";
import { drainThread, threadStub } from "../helpers/projection";
import {
  api,
  createApiKey,
  createTenant,
  expectError,
  fieldPaths,
  json,
  publish,
  saveDraft,
  validArtifact,
} from "../helpers/tenants";
import { clientMessageId, connect, launch, liveAgent, ORIGIN } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const API_KEY = "sk-test-4f1c9a7e2b8d0e6f";
const TOOL_ANSWER = { status: "shipped", eta: "Thursday" };
/** Long enough that a small budget cannot keep the whole branch. */
const PADDING = " Please be thorough and answer in full sentences.".repeat(12);

const TOOLS = [
  {
    name: "lookup",
    description: "Looks an order up.",
    url: "https://hooks.example.com/orders",
    signingSecret: "hook-signing",
    timeoutMs: 500,
    // `userId` is identity: the runtime fills it, so the model never sees it in the tool's schema.
    inputSchema: {
      type: "object",
      properties: { orderId: { type: "string" }, userId: { type: "string" } },
      required: ["orderId", "userId"],
    },
  },
];

afterEach(() => {
  vi.restoreAllMocks();
});

interface Sent {
  /** What reached the provider, exactly: the request body for HTTP adapters, the binding's input for Workers AI. */
  bytes: string;
}

interface Provider {
  name: string;
  model: Record<string, unknown>;
  /** Installs the fake for the real runs: the env the thread runs with and everything the provider received. */
  install(replies: FakeReply[]): { env: Env; sent: () => Sent[] };
}

const workersAiBytes = (call: { model: string; inputs: unknown }) =>
  JSON.stringify({ model: call.model, inputs: call.inputs });

function httpProvider(
  name: string,
  model: Record<string, unknown>,
  fake: typeof fakeOpenAICompatible,
): Provider {
  return {
    name,
    model,
    install(replies) {
      const provider = fake(replies);
      vi.spyOn(globalThis, "fetch").mockImplementation(provider.fetch);
      return { env, sent: () => provider.requests.map((r) => ({ bytes: r.text })) };
    },
  };
}

const PARAMETERS = { temperature: 0.2, maxOutputTokens: 300 };

const providers: Provider[] = [
  httpProvider(
    "openai-compatible",
    {
      provider: "openai-compatible",
      model: "gpt-fake",
      baseUrl: "https://llm.example.test/v1",
      apiKeySecret: "llm-key",
      ...PARAMETERS,
    },
    fakeOpenAICompatible,
  ),
  httpProvider(
    "anthropic",
    {
      provider: "anthropic",
      model: "claude-fake",
      baseUrl: "https://anthropic.example.test/v1",
      apiKeySecret: "llm-key",
      ...PARAMETERS,
    },
    fakeAnthropic,
  ),
  {
    name: "workers-ai",
    model: { provider: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct", ...PARAMETERS },
    install(replies) {
      const fake = fakeWorkersAI(replies);
      return {
        env: { ...env, AI: fake.binding },
        sent: () => fake.calls.map((c) => ({ bytes: workersAiBytes(c) })),
      };
    },
  },
];

/**
 * Feeds a rebuilt input (as the HTTP route answers it, through JSON) to the same adapter against a capturing fake,
 * the way a turn's first model call does, and returns what that adapter sent.
 */
async function replay(provider: Provider, config: Artifact["model"], rebuilt: unknown): Promise<string> {
  const input = runInputResponse.parse(JSON.parse(JSON.stringify(rebuilt)));
  const reply: FakeReply[] = [{ kind: "text", deltas: ["ok"] }];
  const http = provider.name === "anthropic" ? fakeAnthropic(reply) : fakeOpenAICompatible(reply);
  const ai = fakeWorkersAI(reply);
  const model = await resolveModel(config, {
    env,
    tenantSecret: async () => API_KEY,
    fetch: http.fetch,
    ai: ai.binding,
  });
  if (!model.ok) throw new Error(`model not resolved: ${model.message}`);
  const { stream } = await model.value.doStream({
    // The route's JSON is the provider's prompt and tool shapes (checked byte for byte below).
    prompt: input.messages as never,
    ...(input.tools.length > 0 ? { tools: input.tools as never } : {}),
    ...input.parameters,
  });
  await stream.pipeTo(new WritableStream());
  if (provider.name === "workers-ai") {
    const call = ai.calls[0];
    if (call === undefined) throw new Error("the adapter made no call");
    return workersAiBytes(call);
  }
  const request = http.requests[0];
  if (request === undefined) throw new Error("the adapter made no request");
  return request.text;
}

/** A run's rebuilt input at every model call: the route's default answer (its last call) and each step by number. */
interface EveryStep {
  last: RunInputView | string;
  steps: (RunInputView | string)[];
}

const viewOrError = (rebuilt: Result<RunInputView>): RunInputView | string =>
  rebuilt.ok ? rebuilt.value : `${rebuilt.code}: ${rebuilt.message}`;

async function rebuildEveryStep(
  storage: DurableObjectStorage,
  versions: VersionBindings,
  runId: string,
): Promise<EveryStep> {
  const last = viewOrError(await rebuildRunInput(storage, versions, runId));
  const steps: (RunInputView | string)[] = [];
  const count = typeof last === "string" ? 0 : last.steps.length;
  for (let step = 0; step < count; step++) {
    steps.push(viewOrError(await rebuildRunInput(storage, versions, runId, { step })));
  }
  return { last, steps };
}

/**
 * A run recorded one step per model call the provider received (`sent`: the bytes of its calls, in order), each step
 * rebuilt verifies and goes through the adapter to exactly those bytes, and the default answer is the last step.
 */
async function expectEveryStepSent(
  provider: Provider,
  config: Artifact["model"],
  label: string,
  rebuilt: EveryStep,
  sent: string[],
): Promise<RunInputView[]> {
  if (typeof rebuilt.last === "string") throw new Error(`${label}: ${rebuilt.last}`);
  expect(
    rebuilt.last.steps.map((s) => s.step),
    label,
  ).toEqual(sent.map((_, i) => i));
  expect(rebuilt.last.step, label).toBe(sent.length - 1);
  expect(rebuilt.last, label).toEqual(rebuilt.steps.at(-1));
  const views: RunInputView[] = [];
  for (const [step, view] of rebuilt.steps.entries()) {
    const name = `${label}, step ${step}`;
    if (typeof view === "string") throw new Error(`${name}: ${view}`);
    expect(view.step, name).toBe(step);
    expect(view.verified, name).toBe(true);
    expect(view.inputDigest, name).toBe(view.steps[step]?.inputDigest);
    expect(await replay(provider, config, view), name).toBe(sent[step]);
    views.push(view);
  }
  return views;
}

async function tenantWithSecrets() {
  const tenant = await createTenant();
  for (const [alias, value] of [
    ["hook-signing", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
    ["llm-key", API_KEY],
  ] as const) {
    const put = await api(`/v1/secrets/${alias}`, { method: "PUT", key: tenant.apiKey, body: { value } });
    expect(put.status).toBe(204);
  }
  return tenant;
}

async function bindingFor(
  tenantId: string,
  model: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<ThreadBinding> {
  const artifact: Artifact = artifactSchema.parse({
    schemaVersion: 1,
    name: "Orders",
    instructions: "Answer {{name}} from the tools. Their plan: {{plan}}.",
    model,
    tools: TOOLS,
    ...extra,
  });
  return {
    tenantId,
    environment: "development",
    agentId: "agt_audit",
    threadId: `thr_${crypto.randomUUID().replace(/-/g, "")}`,
    versionId: "ver_audit",
    version: 1,
    digest: await digestOf(artifact),
    artifact,
    boundAt: Date.now(),
  };
}

function runtimeOver(
  state: DurableObjectState,
  threadEnv: Env,
  binding: ThreadBinding,
  store?: () => DeploymentStore,
  toolFetch: typeof fetch = fakeToolServer(() => jsonResponse(TOOL_ANSWER)).fetch,
) {
  return new ThreadRuntime({
    ...(store !== undefined ? { store } : {}),
    storage: state.storage,
    env: threadEnv,
    binding,
    now: Date.now,
    peers: () => [],
    keepAliveWhile: (fn) => fn(),
    afterTurn: async () => {},
    fetch: toolFetch,
    quota: tenantRunQuota(threadEnv, binding),
  });
}

type Unsubjected<T> = T extends unknown ? Omit<T, "subject"> : never;

/** The replies of the scenario below, in order: one per model call. */
const SCRIPT: FakeReply[] = [
  { kind: "tool-call", toolCallId: "call_1", toolName: "lookup", input: { orderId: "A1" } },
  { kind: "text", deltas: ["It has ", "shipped."] },
  { kind: "text", deltas: [`On Thursday.${PADDING}`] },
  { kind: "text", deltas: ["Hello again."] },
  { kind: "text", deltas: [`Thursday, most likely.${PADDING}`] },
  { kind: "text", deltas: ["Glad it is sorted."] },
];

describe.each(providers)("the rebuilt input of every run with the $name adapter", (provider) => {
  it("is what the provider received, byte for byte: tool calls, context, regeneration, edit, trimming, handoff", async () => {
    const tenant = await tenantWithSecrets();
    // A budget that keeps the latest exchange but not the whole branch.
    const binding = await bindingFor(tenant.tenantId, provider.model, { limits: { maxContextTokens: 256 } });
    const fake = provider.install(SCRIPT);
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const results = await runInDurableObject(stub, async (_instance, state) => {
      const runtime = runtimeOver(state, fake.env, binding);
      /** Each run with the indexes of its model calls among everything the provider received. */
      const runs: { runId: string; firstCall: number; endCall: number; label: string }[] = [];
      const turn = async (label: string, request: Unsubjected<TurnRequest>) => {
        const firstCall = fake.sent().length;
        const accepted = await runtime.submit({ ...request, subject: "vis_alice" });
        if (!accepted.ok || "held" in accepted.value) throw new Error(`turn ${label} not run`);
        const settled = await runtime.settled(accepted.value.run.id);
        expect(settled?.status, label).toBe("succeeded");
        runs.push({ runId: accepted.value.run.id, firstCall, endCall: fake.sent().length, label });
        return settled;
      };

      adoptThreadContext(state.storage, { version: 1, variables: { name: "Ada", plan: "pro" } });
      const first = await turn("tool call", { kind: "send", clientMessageId: "cm_1", text: "Where is A1?" });
      // A later launch changes the context: the next runs use it, the first one keeps its own.
      adoptThreadContext(state.storage, { version: 2, variables: { name: "Grace", plan: "team" } });
      const second = await turn("follow-up", {
        kind: "send",
        clientMessageId: "cm_2",
        text: `And when does it arrive?${PADDING}`,
      });
      await turn("edit", {
        kind: "edit",
        entryId: first?.userEntryId ?? "",
        clientMessageId: "cm_3",
        text: "Hi there.",
      });
      // The regenerated reply becomes the selected leaf, so the handoff below continues that branch.
      await turn("regeneration", { kind: "regenerate", entryId: second?.assistantEntryId ?? "" });
      // A person takes over, answers a held message, and hands back: the next run carries their reply.
      expect((await runtime.handoff.start("Sam")).ok).toBe(true);
      const held = await runtime.submit({
        kind: "send",
        clientMessageId: "cm_4",
        text: "Can a person help?",
        subject: "vis_alice",
      });
      expect(held.ok && "held" in held.value).toBe(true);
      expect(runtime.handoff.humanMessage({ text: "Sam here: it is on its way." }).ok).toBe(true);
      expect(runtime.handoff.end().ok).toBe(true);
      await turn("after handoff", { kind: "send", clientMessageId: "cm_5", text: "Thanks!" });

      const rebuilt: ((typeof runs)[number] & { every: EveryStep })[] = [];
      for (const run of runs) {
        const versions = new VersionBindings(state.storage, binding);
        rebuilt.push({ ...run, every: await rebuildEveryStep(state.storage, versions, run.runId) });
      }
      return rebuilt;
    });

    const sent = fake.sent();
    expect(sent).toHaveLength(SCRIPT.length);
    expect(results.map((r) => r.label)).toEqual([
      "tool call",
      "follow-up",
      "edit",
      "regeneration",
      "after handoff",
    ]);
    // The tool call's run made two model calls (the second with the tool's answer); every other run made one.
    expect(results.map((r) => r.endCall - r.firstCall)).toEqual([2, 1, 1, 1, 1]);
    const firstSteps: RunInputView[] = [];
    for (const result of results) {
      const calls = sent.slice(result.firstCall, result.endCall).map((s) => s.bytes);
      const views = await expectEveryStepSent(
        provider,
        binding.artifact.model,
        result.label,
        result.every,
        calls,
      );
      for (const view of views) {
        expect(view.promptBuilder).toBe("pb1");
        expect(view.artifactDigest).toBe(binding.digest);
        expect(view.model).toBe(`${binding.artifact.model.provider}/${binding.artifact.model.model}`);
        expect(view.parameters).toEqual({ ...PARAMETERS, toolChoice: { type: "auto" } });
        // Identity is hidden from the model's tool schema, in the rebuilt input as in what was sent.
        expect(JSON.stringify(view.tools)).not.toContain("userId");
      }
      if (views[0] !== undefined) firstSteps.push(views[0]);
    }
    // The second call of the tool call's run is its first plus the call and the tool's answer, as the tool result.
    const [toolStep0, toolStep1] = results[0]?.every.steps ?? [];
    if (typeof toolStep0 === "string" || typeof toolStep1 === "string") throw new Error("no tool steps");
    expect(toolStep1?.messages.slice(0, toolStep0?.messages.length)).toEqual(toolStep0?.messages);
    expect(sentIds(toolStep1?.messages.slice(toolStep0?.messages.length ?? 0) ?? [])).toEqual([
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "call_1", toolName: "lookup", input: { orderId: "A1" } }],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            toolName: "lookup",
            output: { type: "json", value: TOOL_ANSWER },
          },
        ],
      },
    ]);

    const [toolCall, followUp, edit, regeneration, afterHandoff] = firstSteps.map((view) =>
      JSON.stringify(view.messages),
    );
    // Each run rendered the context in force when it ran.
    expect(toolCall).toContain("Answer Ada from the tools. Their plan: pro.");
    expect(followUp).toContain("Answer Grace from the tools. Their plan: team.");
    // The follow-up and its regeneration carry the tool round trip; the edit is a branch of its own.
    expect(followUp).toContain("call_1");
    expect(regeneration).toContain("call_1");
    expect(regeneration).toContain("And when does it arrive?");
    expect(regeneration).not.toContain("On Thursday.");
    expect(edit).toContain("Hi there.");
    expect(edit).not.toContain("Where is A1?");
    // After the handoff the person's reply reads as the agent's, and the small budget cut the older turns off.
    expect(afterHandoff).toContain("Sam here: it is on its way.");
    expect(afterHandoff).toContain("Can a person help?");
    expect(afterHandoff).not.toContain("And when does it arrive?");
    expect(afterHandoff).not.toContain("Where is A1?");
  });
});

/** A run of three model calls (text and a call; two calls at once; the answer), then a follow-up run of one. */
const ROUNDS_SCRIPT: FakeReply[] = [
  {
    kind: "tool-call",
    text: "Let me look A1 up.",
    toolCallId: "call_a",
    toolName: "lookup",
    input: { orderId: "A1" },
  },
  {
    kind: "tool-call",
    toolCallId: "call_b",
    toolName: "lookup",
    input: { orderId: "B2" },
    more: [{ toolCallId: "call_c", toolName: "lookup", input: { orderId: "C3" } }],
  },
  { kind: "text", deltas: ["All three ", "have shipped."] },
  { kind: "text", deltas: ["You are welcome."] },
];

/** Messages with the tool call ids as the model sent them (the Workers AI adapter appends its own marker to each). */
const sentIds = (messages: unknown[]): unknown[] =>
  JSON.parse(JSON.stringify(messages).replace(/::cf-wai-tool-call::[A-Za-z0-9_-]+/g, ""));

const toolResult = (toolCallId: string) => ({
  type: "tool-result",
  toolCallId,
  toolName: "lookup",
  output: { type: "json", value: TOOL_ANSWER },
});

describe.each(providers)("every model call of a run with the $name adapter", (provider) => {
  it("is recorded, and each call's rebuilt input is what the provider received, byte for byte", async () => {
    const tenant = await tenantWithSecrets();
    const binding = await bindingFor(tenant.tenantId, provider.model);
    const fake = provider.install(ROUNDS_SCRIPT);
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const results = await runInDurableObject(stub, async (_instance, state) => {
      const runtime = runtimeOver(state, fake.env, binding);
      adoptThreadContext(state.storage, { version: 1, variables: { name: "Ada", plan: "pro" } });
      const out: { label: string; runId: string; firstCall: number; endCall: number; every: EveryStep }[] =
        [];
      for (const [label, clientMessageId, text] of [
        ["three calls", "cm_1", "Where are A1, B2 and C3?"],
        ["follow-up", "cm_2", "Thanks!"],
      ] as const) {
        const firstCall = fake.sent().length;
        const accepted = await runtime.submit({ kind: "send", clientMessageId, text, subject: "vis_alice" });
        if (!accepted.ok || "held" in accepted.value) throw new Error(`turn ${label} not run`);
        expect((await runtime.settled(accepted.value.run.id))?.status, label).toBe("succeeded");
        const versions = new VersionBindings(state.storage, binding);
        out.push({
          label,
          runId: accepted.value.run.id,
          firstCall,
          endCall: fake.sent().length,
          every: await rebuildEveryStep(state.storage, versions, accepted.value.run.id),
        });
      }
      const runId = out[0]?.runId ?? "";
      const beyond = await rebuildRunInput(
        state.storage,
        new VersionBindings(state.storage, binding),
        runId,
        {
          step: 3,
        },
      );
      return { out, beyond };
    });

    const sent = fake.sent().map((s) => s.bytes);
    expect(sent).toHaveLength(ROUNDS_SCRIPT.length);
    expect(results.out.map((r) => r.endCall - r.firstCall)).toEqual([3, 1]);
    const [rounds, followUp] = results.out;
    if (rounds === undefined || followUp === undefined) throw new Error("missing runs");
    const steps = await expectEveryStepSent(
      provider,
      binding.artifact.model,
      rounds.label,
      rounds.every,
      sent.slice(0, 3),
    );
    await expectEveryStepSent(
      provider,
      binding.artifact.model,
      followUp.label,
      followUp.every,
      sent.slice(3),
    );
    // Each later call is the first call's messages plus every earlier step's text, calls and answers (one tool
    // message per step, its answers in the order the model asked).
    const first = steps[0]?.messages ?? [];
    expect(steps[2]?.messages.slice(0, first.length)).toEqual(first);
    expect(sentIds(steps[2]?.messages.slice(first.length) ?? [])).toEqual([
      {
        role: "assistant",
        content: [
          { type: "text", text: "Let me look A1 up." },
          { type: "tool-call", toolCallId: "call_a", toolName: "lookup", input: { orderId: "A1" } },
        ],
      },
      { role: "tool", content: [toolResult("call_a")] },
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "call_b", toolName: "lookup", input: { orderId: "B2" } },
          { type: "tool-call", toolCallId: "call_c", toolName: "lookup", input: { orderId: "C3" } },
        ],
      },
      { role: "tool", content: [toolResult("call_b"), toolResult("call_c")] },
    ]);
    expect(steps[1]?.messages).toEqual(steps[2]?.messages.slice(0, first.length + 2));
    // Every step's digest differs: each call was handed more than the one before.
    expect(new Set(steps.map((v) => v.inputDigest)).size).toBe(3);
    expect(results.beyond).toMatchObject({ ok: false, code: "not_found" });
    expect(results.beyond.ok ? "" : results.beyond.message).toContain("0 to 2");
  });
});

/** The tools of the waiting scenario: a refund needing approval, a lookup that runs at once and a page's own tool. */
const WAITING_TOOLS = [
  ...TOOLS,
  {
    name: "refund",
    description: "Refunds an order.",
    url: "https://hooks.example.com/refunds",
    signingSecret: "hook-signing",
    approval: "always",
  },
  { name: "pick_color", description: "Asks the page for a colour.", executor: "client" },
];

/**
 * The replies of the waiting scenario, one per model call: an approved refund (text before the call), a denied one,
 * a client tool asked together with a lookup that needs no one, a run that waits twice (an approval, then the page),
 * then a follow-up over all of it.
 */
const WAITING_SCRIPT: FakeReply[] = [
  {
    kind: "tool-call",
    text: "Let me ask first.",
    toolCallId: "call_ok",
    toolName: "refund",
    input: { orderId: "A1" },
  },
  { kind: "text", deltas: ["Refunded ", "A1."] },
  { kind: "tool-call", toolCallId: "call_no", toolName: "refund", input: { orderId: "B2" } },
  { kind: "text", deltas: ["I could not refund B2."] },
  {
    kind: "tool-call",
    toolCallId: "call_color",
    toolName: "pick_color",
    input: { palette: "warm" },
    more: [{ toolCallId: "call_look", toolName: "lookup", input: { orderId: "C3" } }],
  },
  { kind: "text", deltas: ["Amber, and C3 has shipped."] },
  {
    kind: "tool-call",
    text: "First the refund.",
    toolCallId: "call_two",
    toolName: "refund",
    input: { orderId: "D4" },
  },
  {
    kind: "tool-call",
    text: " Now a colour.",
    toolCallId: "call_pick",
    toolName: "pick_color",
    input: { palette: "cool" },
  },
  { kind: "text", deltas: [" Done: refunded, and teal."] },
  { kind: "text", deltas: ["You are welcome."] },
];

describe.each(providers)(
  "every model call of a run that waited for a person with the $name adapter",
  (provider) => {
    it("is recorded across the wait, and each call's rebuilt input is what the provider received, byte for byte", async () => {
      const tenant = await tenantWithSecrets();
      const binding = await bindingFor(tenant.tenantId, provider.model, { tools: WAITING_TOOLS });
      const fake = provider.install(WAITING_SCRIPT);
      const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
      await runInDurableObject(stub, async (_instance, state) => {
        adoptThreadContext(state.storage, { version: 1, variables: { name: "Ada", plan: "pro" } });
      });

      type Settle = (runtime: ThreadRuntime, pending: RunAction[], storage: DurableObjectStorage) => unknown;
      interface Waited {
        label: string;
        runId: string;
        firstCall: number;
        endCall: number;
      }
      /**
       * One run that waits: sent and parked by one object activation, then decided or answered by a fresh one (the
       * object's memory gone, as after hibernation), which streams the rest.
       */
      const waitedRun = async (
        label: string,
        clientMessageId: string,
        text: string,
        settle: Settle | Settle[],
        meanwhile?: (storage: DurableObjectStorage) => void,
      ): Promise<Waited> => {
        const firstCall = fake.sent().length;
        const runId = await runInDurableObject(stub, async (_instance, state) => {
          const runtime = runtimeOver(state, fake.env, binding);
          const accepted = await runtime.submit({
            kind: "send",
            clientMessageId,
            text,
            subject: "vis_alice",
          });
          if (!accepted.ok || "held" in accepted.value) throw new Error(`turn ${label} not run`);
          const id = accepted.value.run.id;
          await waitFor(
            () => findRun(state.storage, id)?.status,
            (status) => status === "requires_action",
            { what: `${label} to wait` },
          );
          return id;
        });
        const settles = Array.isArray(settle) ? settle : [settle];
        for (const [index, answer] of settles.entries()) {
          await runInDurableObject(stub, async (_instance, state) => {
            if (index === 0) meanwhile?.(state.storage);
            const runtime = runtimeOver(state, fake.env, binding);
            const actions = new ActionStore(state.storage, { now: Date.now });
            const pending = actions.ofRun(runId).filter((a) => a.status === "pending");
            expect(await answer(runtime, pending, state.storage), label).toMatchObject({ ok: true });
            // It goes on, and either waits again (a new pending action) or ends.
            const last = index === settles.length - 1;
            await waitFor(
              () => ({ status: findRun(state.storage, runId)?.status, pending: actions.pending().length }),
              (now) =>
                last ? now.status === "succeeded" : now.status === "requires_action" && now.pending > 0,
              { what: `${label} to go on (${index})` },
            );
          });
        }
        return { label, runId, firstCall, endCall: fake.sent().length };
      };
      const approvalOf = (actions: RunAction[]) => actions.find((a) => a.kind === "approval")?.id ?? "";

      // A later launch changes the context while the first run waits: that run goes on under its own.
      const approved = await waitedRun(
        "approved",
        "cm_1",
        "Refund A1, please.",
        (runtime, actions) =>
          runtime.decide({ approvalId: approvalOf(actions), decision: "approve", by: "user" }),
        (storage) => adoptThreadContext(storage, { version: 2, variables: { name: "Grace", plan: "team" } }),
      );
      const denied = await waitedRun("denied", "cm_2", "And B2?", (runtime, actions) =>
        runtime.decide({
          approvalId: approvalOf(actions),
          decision: "deny",
          reason: "not eligible",
          by: "tenant",
        }),
      );
      // The id the page is asked with (the Workers AI adapter adds its own marker to the model's).
      const clientOf = (pending: RunAction[]) => pending.find((a) => a.kind === "client")?.toolCallId ?? "";
      const client = await waitedRun(
        "client tool",
        "cm_3",
        "Pick a colour and check C3.",
        (runtime, actions) =>
          runtime.answerTool({
            toolCallId: clientOf(actions),
            output: { color: "amber" },
          }),
      );

      // One run, two waits: the refund's approval, then the page's answer to the next step's call.
      // While it waits the second time, its calls so far can be read already.
      let waitingAgain: EveryStep = { last: "not read", steps: [] };
      const twice = await waitedRun("two waits", "cm_5", "Refund D4, then pick a colour.", [
        (runtime, pending) =>
          runtime.decide({ approvalId: approvalOf(pending), decision: "approve", by: "user" }),
        async (runtime, pending, storage) => {
          const versions = new VersionBindings(storage, binding);
          waitingAgain = await rebuildEveryStep(storage, versions, pending[0]?.runId ?? "");
          return runtime.answerTool({ toolCallId: clientOf(pending), output: { color: "teal" } });
        },
      ]);

      const followUpFirstCall = fake.sent().length;
      const after = await runInDurableObject(stub, async (_instance, state) => {
        const runtime = runtimeOver(state, fake.env, binding);
        const accepted = await runtime.submit({
          kind: "send",
          clientMessageId: "cm_4",
          text: "Thanks!",
          subject: "vis_alice",
        });
        if (!accepted.ok || "held" in accepted.value) throw new Error("follow-up not run");
        expect((await runtime.settled(accepted.value.run.id))?.status).toBe("succeeded");
        const versions = new VersionBindings(state.storage, binding);
        const entries = new EntryStore(state.storage, { now: Date.now });
        const every: Record<string, EveryStep> = {};
        const branches: Record<string, { kind: string; role: string | null; body: unknown }[]> = {};
        for (const run of [approved, denied, client, twice]) {
          every[run.label] = await rebuildEveryStep(state.storage, versions, run.runId);
          const reply = entries.lastOfRun(run.runId);
          const lineage = reply === null ? [] : entries.lineage(reply.id, 10);
          const user = lineage.findIndex((e) => e.role === "user");
          branches[run.label] = lineage
            .slice(0, user + 1)
            .reverse()
            .map((e) => ({ kind: e.kind, role: e.role, body: e.body }));
        }
        every["follow-up"] = await rebuildEveryStep(state.storage, versions, accepted.value.run.id);
        return { every, branches };
      });

      const sent = fake.sent().map((s) => s.bytes);
      expect(sent).toHaveLength(WAITING_SCRIPT.length);
      const views: Record<string, RunInputView[]> = {};
      for (const run of [approved, denied, client, twice]) {
        expect(run.endCall - run.firstCall, run.label).toBe(run === twice ? 3 : 2);
        views[run.label] = await expectEveryStepSent(
          provider,
          binding.artifact.model,
          run.label,
          after.every[run.label] ?? { last: "missing", steps: [] },
          sent.slice(run.firstCall, run.endCall),
        );
      }
      await expectEveryStepSent(
        provider,
        binding.artifact.model,
        "follow-up",
        after.every["follow-up"] ?? { last: "missing", steps: [] },
        sent.slice(followUpFirstCall),
      );

      const instructions = (label: string, step: number) => JSON.stringify(views[label]?.[step]?.messages[0]);
      expect(instructions("approved", 1)).toContain("Answer Ada from the tools. Their plan: pro.");
      expect(instructions("denied", 0)).toContain("Answer Grace from the tools. Their plan: team.");
      expect(views.approved?.map((v) => v.contextVersion)).toEqual([1, 1]);

      // The call after a decision or an answer is the first call plus the step that waited, with it as the tool result.
      const added = (label: string) => {
        const [first, second] = views[label] ?? [];
        expect(second?.messages.slice(0, first?.messages.length), label).toEqual(first?.messages);
        return sentIds(second?.messages.slice(first?.messages.length ?? 0) ?? []);
      };
      const result = (toolCallId: string, toolName: string, value: unknown) => ({
        type: "tool-result",
        toolCallId,
        toolName,
        output: { type: "json", value },
      });
      expect(added("approved")).toEqual([
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me ask first." },
            { type: "tool-call", toolCallId: "call_ok", toolName: "refund", input: { orderId: "A1" } },
          ],
        },
        { role: "tool", content: [result("call_ok", "refund", TOOL_ANSWER)] },
      ]);
      expect(added("denied")).toEqual([
        {
          role: "assistant",
          content: [
            { type: "tool-call", toolCallId: "call_no", toolName: "refund", input: { orderId: "B2" } },
          ],
        },
        { role: "tool", content: [result("call_no", "refund", { denied: true, reason: "not eligible" })] },
      ]);
      expect(added("client tool")).toEqual([
        {
          role: "assistant",
          content: [
            {
              type: "tool-call",
              toolCallId: "call_color",
              toolName: "pick_color",
              input: { palette: "warm" },
            },
            { type: "tool-call", toolCallId: "call_look", toolName: "lookup", input: { orderId: "C3" } },
          ],
        },
        {
          role: "tool",
          content: [
            result("call_color", "pick_color", { color: "amber" }),
            result("call_look", "lookup", TOOL_ANSWER),
          ],
        },
      ]);

      // Each reply sits below the run's approval entries, its calls stored with the step and the text before them.
      const kinds = (label: string) => after.branches[label]?.map((e) => e.role ?? e.kind);
      expect(kinds("approved")).toEqual(["user", "approval_request", "approval_decision", "assistant"]);
      expect(kinds("denied")).toEqual(["user", "approval_request", "approval_decision", "assistant"]);
      expect(kinds("client tool")).toEqual(["user", "tool_request", "assistant"]);
      const stored = (label: string) =>
        sentIds([(after.branches[label]?.at(-1)?.body as { toolCalls?: unknown })?.toolCalls])[0];
      expect(stored("approved")).toEqual([
        {
          toolCallId: "call_ok",
          toolName: "refund",
          input: { orderId: "A1" },
          output: TOOL_ANSWER,
          step: 0,
          textOffset: "Let me ask first.".length,
        },
      ]);
      expect(stored("denied")).toEqual([
        {
          toolCallId: "call_no",
          toolName: "refund",
          input: { orderId: "B2" },
          output: { denied: true, reason: "not eligible" },
          step: 0,
          textOffset: 0,
        },
      ]);
      expect(stored("client tool")).toMatchObject([
        { toolCallId: "call_color", output: { color: "amber" }, step: 0, textOffset: 0 },
        { toolCallId: "call_look", output: TOOL_ANSWER, step: 0, textOffset: 0 },
      ]);

      // Waiting twice: each wait's entries in turn, and the last call carries both answers after their text.
      expect(kinds("two waits")).toEqual([
        "user",
        "approval_request",
        "approval_decision",
        "tool_request",
        "assistant",
      ]);
      expect(stored("two waits")).toMatchObject([
        { toolCallId: "call_two", output: TOOL_ANSWER, step: 0, textOffset: "First the refund.".length },
        {
          toolCallId: "call_pick",
          output: { color: "teal" },
          step: 1,
          textOffset: "First the refund. Now a colour.".length,
        },
      ]);
      const [start, middle, end] = views["two waits"] ?? [];
      // Read while the run waited again: the same two calls, byte for byte.
      const early = await expectEveryStepSent(
        provider,
        binding.artifact.model,
        "two waits, waiting again",
        waitingAgain,
        sent.slice(twice.firstCall, twice.firstCall + 2),
      );
      expect(early).toEqual([start, middle].map((v) => ({ ...v, steps: early[0]?.steps })));
      expect(end?.messages.slice(0, start?.messages.length)).toEqual(start?.messages);
      expect(sentIds(end?.messages.slice(start?.messages.length ?? 0) ?? [])).toEqual([
        {
          role: "assistant",
          content: [
            { type: "text", text: "First the refund." },
            { type: "tool-call", toolCallId: "call_two", toolName: "refund", input: { orderId: "D4" } },
          ],
        },
        { role: "tool", content: [result("call_two", "refund", TOOL_ANSWER)] },
        {
          role: "assistant",
          content: [
            { type: "text", text: " Now a colour." },
            {
              type: "tool-call",
              toolCallId: "call_pick",
              toolName: "pick_color",
              input: { palette: "cool" },
            },
          ],
        },
        { role: "tool", content: [result("call_pick", "pick_color", { color: "teal" })] },
      ]);
    });
  },
);

const REFUND_TOOL = {
  name: "refund",
  description: "Refunds an order.",
  url: "https://hooks.example.com/refunds",
  signingSecret: "hook-signing",
};

/** The replies of the tool-policy scenario: a call to a hidden tool (refused), then one reply per later run. */
const POLICY_SCRIPT: FakeReply[] = [
  { kind: "tool-call", toolCallId: "call_hidden", toolName: "refund", input: { orderId: "A1" } },
  { kind: "text", deltas: ["I cannot refund it."] },
  { kind: "text", deltas: ["Refunded."] },
  { kind: "text", deltas: ["Nothing to call."] },
];

describe.each(providers)("the rebuilt input under a tool policy with the $name adapter", (provider) => {
  it("lists the tools the policy of the run's context version let the model see, byte for byte", async () => {
    const tenant = await tenantWithSecrets();
    const binding = await bindingFor(tenant.tenantId, provider.model, { tools: [...TOOLS, REFUND_TOOL] });
    const fake = provider.install(POLICY_SCRIPT);
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const results = await runInDurableObject(stub, async (_instance, state) => {
      const runtime = runtimeOver(state, fake.env, binding);
      const runs: { runId: string; firstCall: number }[] = [];
      const turn = async (clientMessageId: string, text: string) => {
        const firstCall = fake.sent().length;
        const accepted = await runtime.submit({ kind: "send", clientMessageId, text, subject: "vis_alice" });
        if (!accepted.ok || "held" in accepted.value) throw new Error(`turn ${clientMessageId} not run`);
        expect((await runtime.settled(accepted.value.run.id))?.status).toBe("succeeded");
        runs.push({ runId: accepted.value.run.id, firstCall });
      };
      adoptThreadContext(state.storage, {
        version: 1,
        variables: { name: "Ada" },
        toolPolicy: { deny: ["refund"] },
      });
      await turn("cm_1", "Refund A1.");
      // A later launch lifts the policy, and another hides every tool: each run keeps the one it ran under.
      adoptThreadContext(state.storage, { version: 2, variables: { name: "Ada" } });
      await turn("cm_2", "Now?");
      adoptThreadContext(state.storage, {
        version: 3,
        variables: { name: "Ada" },
        toolPolicy: { allow: [] },
      });
      await turn("cm_3", "And now?");
      const views: RunInputView[] = [];
      for (const run of runs) {
        // The first call of each run: the one whose tools the policy shaped (a refused call adds a later one).
        const view = await rebuildRunInput(
          state.storage,
          new VersionBindings(state.storage, binding),
          run.runId,
          { step: 0 },
        );
        if (!view.ok) throw new Error(`${view.code}: ${view.message}`);
        views.push(view.value);
      }
      return runs.map((run, i) => ({ ...run, view: views[i]! }));
    });

    const sent = fake.sent();
    expect(sent).toHaveLength(POLICY_SCRIPT.length);
    expect(results.map((r) => r.view.contextVersion)).toEqual([1, 2, 3]);
    expect(results.map((r) => r.view.tools.map((t) => (t as { name: string }).name))).toEqual([
      ["lookup"],
      ["lookup", "refund"],
      [],
    ]);
    for (const result of results) {
      expect(result.view.verified).toBe(true);
      expect(await replay(provider, binding.artifact.model, result.view)).toBe(sent[result.firstCall]?.bytes);
    }
    // The refused call reached the model as an error result, and later runs carry it in their history.
    expect(JSON.stringify(results[1]?.view.messages)).toContain("not available in this conversation");
  });
});

/** v2 of the audited agent: other instructions, another model with other sampling, and no tools. */
async function versionTwo(v1: ThreadBinding): Promise<AgentVersion> {
  const artifact: Artifact = artifactSchema.parse({
    ...v1.artifact,
    instructions: "You are version two. Greet {{name}} and keep it short.",
    model: { ...v1.artifact.model, model: `${v1.artifact.model.model}-v2`, temperature: 0.7 },
    tools: [],
  });
  return {
    tenantId: v1.tenantId,
    agentId: v1.agentId,
    id: "ver_audit_2",
    version: 2,
    draftRevision: 2,
    digest: await digestOf(artifact),
    artifact,
    createdAt: new Date().toISOString(),
  };
}

/** A control plane that knows only `version` (what the upgrade reads). */
const storeWith = (version: AgentVersion) => () =>
  ({ getVersion: async () => ok(version) }) as unknown as DeploymentStore;

/** The replies of the upgrade scenario: a tool round on v1, a reply on v2, a reply on the fork above the change. */
const UPGRADE_SCRIPT: FakeReply[] = [
  { kind: "tool-call", toolCallId: "call_1", toolName: "lookup", input: { orderId: "A1" } },
  { kind: "text", deltas: ["It has shipped."] },
  { kind: "text", deltas: ["Hello from two."] },
  { kind: "text", deltas: ["Hello from one."] },
];

describe.each(providers)("the rebuilt input across an upgrade with the $name adapter", (provider) => {
  it("names the version that ran, below the change and on a fork above it, and is what the provider received", async () => {
    const tenant = await tenantWithSecrets();
    const v1 = await bindingFor(tenant.tenantId, provider.model);
    const v2 = await versionTwo(v1);
    const fake = provider.install(UPGRADE_SCRIPT);
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const outcome = await runInDurableObject(stub, async (_instance, state) => {
      const runtime = runtimeOver(state, fake.env, v1, storeWith(v2));
      const runs: { runId: string; firstCall: number; endCall: number; label: string; version: number }[] =
        [];
      const turn = async (label: string, version: number, request: Unsubjected<TurnRequest>) => {
        const firstCall = fake.sent().length;
        const accepted = await runtime.submit({ ...request, subject: "vis_alice" });
        if (!accepted.ok || "held" in accepted.value) throw new Error(`turn ${label} not run`);
        const settled = await runtime.settled(accepted.value.run.id);
        expect(settled?.status, label).toBe("succeeded");
        runs.push({ runId: accepted.value.run.id, firstCall, endCall: fake.sent().length, label, version });
        return settled;
      };
      adoptThreadContext(state.storage, { version: 1, variables: { name: "Ada", plan: "pro" } });
      const first = await turn("on v1", 1, { kind: "send", clientMessageId: "cm_1", text: "Where is A1?" });
      const upgraded = await runtime.upgrade(2, "tenant");
      if (!upgraded.ok) throw new Error(`upgrade refused: ${upgraded.message}`);
      await turn("below the change", 2, { kind: "send", clientMessageId: "cm_2", text: "Hello?" });
      // Editing the first message forks above the `version_change`: that branch keeps v1.
      await turn("fork above the change", 1, {
        kind: "edit",
        entryId: first?.userEntryId ?? "",
        clientMessageId: "cm_3",
        text: "Hi, anyone there?",
      });

      const rebuildAll = async () => {
        const out: ((typeof runs)[number] & { every: EveryStep; view: RunInputView | string })[] = [];
        // A fresh set of bindings, as a woken object reads them: every version re-verified from storage.
        const versions = new VersionBindings(state.storage, v1);
        for (const run of runs) {
          const every = await rebuildEveryStep(state.storage, versions, run.runId);
          out.push({ ...run, every, view: every.last });
        }
        return out;
      };
      const rebuilt = await rebuildAll();
      // Someone edits the stored v2 artifact: its runs can no longer be verified; v1's still are.
      const tampered = { ...v2.artifact, instructions: "You are version two, now saying something else." };
      state.storage.sql.exec(
        "UPDATE thread_versions SET artifact_json = ? WHERE version = 2",
        JSON.stringify(tampered),
      );
      return { upgraded: upgraded.value, rebuilt, afterTamper: await rebuildAll() };
    });

    expect(outcome.upgraded).toMatchObject({ fromVersion: 1, toVersion: 2 });
    const sent = fake.sent();
    expect(sent).toHaveLength(UPGRADE_SCRIPT.length);
    const configs = { 1: v1.artifact.model, 2: v2.artifact.model } as const;
    const digests = { 1: v1.digest, 2: v2.digest } as const;
    expect(outcome.rebuilt.map((r) => [r.label, r.version])).toEqual([
      ["on v1", 1],
      ["below the change", 2],
      ["fork above the change", 1],
    ]);
    expect(outcome.rebuilt.map((r) => r.endCall - r.firstCall)).toEqual([2, 1, 1]);
    const firstSteps: RunInputView[] = [];
    for (const result of outcome.rebuilt) {
      const version = result.version as 1 | 2;
      const calls = sent.slice(result.firstCall, result.endCall).map((s) => s.bytes);
      const views = await expectEveryStepSent(provider, configs[version], result.label, result.every, calls);
      for (const view of views) {
        expect(view.agentVersion, result.label).toBe(version);
        expect(view.artifactDigest, result.label).toBe(digests[version]);
        expect(view.model, result.label).toBe(`${configs[version].provider}/${configs[version].model}`);
      }
      if (views[0] !== undefined) firstSteps.push(views[0]);
    }
    const [onV1, belowChange, fork] = firstSteps;
    // v2's run carries the v1 turn before the change, under v2's instructions, model, sampling and (no) tools.
    expect(JSON.stringify(belowChange?.messages)).toContain("You are version two. Greet Ada");
    expect(JSON.stringify(belowChange?.messages)).toContain("Where is A1?");
    expect(belowChange?.tools).toEqual([]);
    expect(belowChange?.parameters).toEqual({ temperature: 0.7, maxOutputTokens: 300 });
    // The fork above the change runs on v1 with v1's tools, and sees none of the branch it left.
    expect(JSON.stringify(fork?.messages)).toContain("Answer Ada from the tools.");
    expect(JSON.stringify(fork?.messages)).not.toContain("Where is A1?");
    expect(fork?.tools).toEqual(onV1?.tools);
    expect(fork?.parameters).toEqual({ ...PARAMETERS, toolChoice: { type: "auto" } });

    // After the tamper: the v2 run answers an error, never a false `verified`; the v1 runs still verify.
    const [afterV1, afterV2, afterFork] = outcome.afterTamper.map((r) => r.view);
    expect(afterV2).toBe(
      "internal: The agent version this run ran on failed its digest check: its input cannot be verified.",
    );
    expect(afterV1).toMatchObject({ verified: true, agentVersion: 1 });
    expect(afterFork).toMatchObject({ verified: true, agentVersion: 1 });
  });
});

describe("rebuilding a run's input", () => {
  it("keeps a waiting run's own context after a newer one is adopted; the newer tool policy still refuses its call", async () => {
    const provider = providers[0];
    if (provider === undefined) throw new Error("no provider");
    const tenant = await tenantWithSecrets();
    const binding = await bindingFor(tenant.tenantId, provider.model, { tools: WAITING_TOOLS });
    const fake = provider.install([
      { kind: "tool-call", toolCallId: "call_ok", toolName: "refund", input: { orderId: "A1" } },
      { kind: "text", deltas: ["That refund is not possible here."] },
    ]);
    const hooks = fakeToolServer(() => jsonResponse(TOOL_ANSWER));
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const runId = await runInDurableObject(stub, async (_instance, state) => {
      adoptThreadContext(state.storage, { version: 1, variables: { name: "Ada", plan: "pro" } });
      const runtime = runtimeOver(state, fake.env, binding, undefined, hooks.fetch);
      const accepted = await runtime.submit({
        kind: "send",
        clientMessageId: "cm_1",
        text: "Refund A1.",
        subject: "vis_alice",
      });
      if (!accepted.ok || "held" in accepted.value) throw new Error("turn not run");
      const id = accepted.value.run.id;
      await waitFor(
        () => findRun(state.storage, id)?.status,
        (status) => status === "requires_action",
        { what: "the run to wait" },
      );
      return id;
    });
    const every = await runInDurableObject(stub, async (_instance, state) => {
      // A later launch, while the run waits, renames the visitor and takes the refund tool away.
      adoptThreadContext(state.storage, {
        version: 2,
        variables: { name: "Grace", plan: "team" },
        toolPolicy: { deny: ["refund"] },
      });
      const runtime = runtimeOver(state, fake.env, binding, undefined, hooks.fetch);
      const approvalId = new ActionStore(state.storage, { now: Date.now }).ofRun(runId)[0]?.id ?? "";
      expect(runtime.decide({ approvalId, decision: "approve", by: "user" }).ok).toBe(true);
      await waitFor(
        () => findRun(state.storage, runId)?.status,
        (status) => status === "succeeded",
        { what: "the run to go on" },
      );
      return rebuildEveryStep(state.storage, new VersionBindings(state.storage, binding), runId);
    });

    const views = await expectEveryStepSent(
      provider,
      binding.artifact.model,
      "waited",
      every,
      fake.sent().map((s) => s.bytes),
    );
    const [first, second] = views;
    // The second call saw what the first did: the run's variables and tools.
    expect(second?.contextVersion).toBe(1);
    expect(second?.messages.slice(0, first?.messages.length)).toEqual(first?.messages);
    expect(second?.tools).toEqual(first?.tools);
    expect(JSON.stringify(second?.tools)).toContain('"refund"');
    // The approved call was refused by the newer policy: no delivery, and the model was told.
    expect(hooks.sent).toEqual([]);
    expect(second?.messages.at(-1)).toMatchObject({
      role: "tool",
      content: [
        { toolCallId: "call_ok", output: { type: "error-json", value: { error: TOOL_NOT_PERMITTED } } },
      ],
    });
  });

  it("uses the builder the run recorded, after a newer one is registered; a changed builder fails verification", async () => {
    const tenant = await createTenant();
    const binding = await bindingFor(tenant.tenantId, { provider: "local", model: "echo" });
    const newer: PromptBuilder = (input) => buildPrompt(input).filter((m) => m.role !== "system");
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const outcome = await runInDurableObject(stub, async (_instance, state) => {
      const runtime = runtimeOver(state, env, binding);
      const accepted = await runtime.accept({
        kind: "send",
        clientMessageId: "cm_1",
        text: "Hi",
        subject: "vis_alice",
      });
      if (!accepted.ok) throw new Error(accepted.message);
      await runtime.settled(accepted.value.run.id);
      const runId = accepted.value.run.id;
      return {
        withNewer: await rebuildRunInput(state.storage, new VersionBindings(state.storage, binding), runId, {
          builders: { ...PROMPT_BUILDERS, pb2: newer },
        }),
        // What the audit would catch: the code registered as pb1 changed after the run.
        drifted: await rebuildRunInput(state.storage, new VersionBindings(state.storage, binding), runId, {
          builders: { pb1: newer },
        }),
        unregistered: await rebuildRunInput(
          state.storage,
          new VersionBindings(state.storage, binding),
          runId,
          { builders: { pb2: newer } },
        ),
      };
    });
    expect(outcome.withNewer).toMatchObject({ ok: true, value: { promptBuilder: "pb1", verified: true } });
    expect(outcome.withNewer.ok && outcome.withNewer.value.messages[0]).toMatchObject({ role: "system" });
    expect(outcome.drifted).toMatchObject({ ok: true, value: { verified: false } });
    expect(outcome.unregistered).toMatchObject({ ok: false, code: "internal" });
  });

  it("rebuilds a live run's first call at once and its later ones once it ends; a stopped run's calls verify", async () => {
    const tenant = await tenantWithSecrets();
    const provider = providers[0];
    if (provider === undefined) throw new Error("no provider");
    const binding = await bindingFor(tenant.tenantId, provider.model);
    const fake = provider.install([
      { kind: "tool-call", toolCallId: "call_1", toolName: "lookup", input: { orderId: "A1" } },
      // The second call writes a word, then hangs until the run is stopped.
      { kind: "text", deltas: ["Checking", " further."], hangAfter: 1 },
    ]);
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const outcome = await runInDurableObject(stub, async (_instance, state) => {
      const runtime = runtimeOver(state, fake.env, binding);
      const accepted = await runtime.accept({
        kind: "send",
        clientMessageId: "cm_1",
        text: "Where is A1?",
        subject: "vis_alice",
      });
      if (!accepted.ok) throw new Error(accepted.message);
      const runId = accepted.value.run.id;
      await waitFor(
        () => readRunAudit(state.storage, runId)?.steps.length ?? 0,
        (n) => n === 2,
        { what: "the second model call's digest" },
      );
      const versions = () => new VersionBindings(state.storage, binding);
      const live = await rebuildRunInput(state.storage, versions(), runId);
      const liveFirst = await rebuildRunInput(state.storage, versions(), runId, { step: 0 });
      expect(runtime.cancel(runId).ok).toBe(true);
      const settled = await runtime.settled(runId);
      return {
        live,
        liveFirst,
        status: settled?.status,
        ended: await rebuildEveryStep(state.storage, versions(), runId),
      };
    });
    expect(outcome.live).toMatchObject({ ok: false, code: "conflict" });
    expect(outcome.live.ok ? "" : outcome.live.message).toContain("still going");
    expect(outcome.liveFirst).toMatchObject({ ok: true, value: { step: 0, verified: true } });
    expect(outcome.status).toBe("aborted");
    const sent = fake.sent().map((s) => s.bytes);
    await expectEveryStepSent(provider, binding.artifact.model, "stopped run", outcome.ended, sent);
  });

  it("finds no input for a run that never reached a model, and none for an unknown run", async () => {
    const tenant = await createTenant();
    // No secret is stored under the key's alias: the model cannot be resolved, so the run fails before any call.
    const binding = await bindingFor(tenant.tenantId, {
      provider: "anthropic",
      model: "claude-fake",
      apiKeySecret: "missing-key",
    });
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const outcome = await runInDurableObject(stub, async (_instance, state) => {
      const runtime = runtimeOver(state, env, binding);
      const accepted = await runtime.accept({
        kind: "send",
        clientMessageId: "cm_1",
        text: "Hi",
        subject: "vis_alice",
      });
      if (!accepted.ok) throw new Error(accepted.message);
      const settled = await runtime.settled(accepted.value.run.id);
      return {
        status: settled?.status,
        audit: readRunAudit(state.storage, accepted.value.run.id),
        rebuilt: await rebuildRunInput(
          state.storage,
          new VersionBindings(state.storage, binding),
          accepted.value.run.id,
        ),
        unknown: await rebuildRunInput(
          state.storage,
          new VersionBindings(state.storage, binding),
          "run_unknown",
        ),
      };
    });
    expect(outcome.status).toBe("failed");
    expect(outcome.audit).toBeNull();
    expect(outcome.rebuilt).toMatchObject({ ok: false, code: "not_found" });
    expect(outcome.rebuilt.ok ? "" : outcome.rebuilt.message).toContain("never reached a model");
    expect(outcome.unknown).toMatchObject({ ok: false, code: "not_found", message: "Run not found." });
  });
});

const replyBody = z.object({ run: z.object({ id: z.string(), status: z.string() }) });

async function sendOverHttp(
  threadId: string,
  token: string,
  text: string,
  status = "succeeded",
): Promise<string> {
  const res = await api(`/v1/threads/${threadId}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, Origin: ORIGIN },
    body: { clientMessageId: clientMessageId(), text },
  });
  const body = await json(res, 201, replyBody);
  expect(body.run.status).toBe(status);
  return body.run.id;
}

describe("GET /v1/sessions/:threadId/runs/:runId/input", () => {
  it("answers the rebuilt input, whose canonical JSON hashes to the run's digest; tenants and erasure keep it apart", async () => {
    const agent = await liveAgent({
      artifact: { instructions: "Be brief.", model: { provider: "local", model: "echo", temperature: 0.5 } },
    });
    const launched = await launch(agent.publicKey);
    await sendOverHttp(launched.threadId, launched.token, "First question");
    const runId = await sendOverHttp(launched.threadId, launched.token, "Second question");
    const path = `/v1/sessions/${launched.threadId}/runs/${runId}/input`;

    const view = await json(await api(path, { key: agent.apiKey }), 200, runInputResponse);
    expect(view).toMatchObject({ runId, promptBuilder: "pb1", model: "local/echo", verified: true });
    // A run without tools made one model call.
    expect(view.step).toBe(0);
    expect(view.steps).toEqual([{ step: 0, inputDigest: view.inputDigest }]);
    expect(view.parameters).toEqual({ temperature: 0.5 });
    expect(view.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    // Anyone can check it: canonical JSON of {model, messages, tools, parameters}, SHA-256, hex.
    const { model, messages, tools, parameters } = view;
    expect(`sha256:${await sha256Hex(canonicalJson({ model, messages, tools, parameters }))}`).toBe(
      view.inputDigest,
    );

    // A read-only key may read it; another tenant's key, an unknown run or an id that cannot be one may not.
    const reader = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");
    expect((await api(path, { key: reader.apiKey })).status).toBe(200);
    const other = await createTenant();
    await expectError(await api(path, { key: other.apiKey }), 404, "not_found");
    await expectError(
      await api(`/v1/sessions/${launched.threadId}/runs/run_unknown/input`, { key: agent.apiKey }),
      404,
      "not_found",
    );
    await expectError(
      await api(`/v1/sessions/${launched.threadId}/runs/bad%20id/input`, { key: agent.apiKey }),
      404,
      "not_found",
    );

    const erased = await api(`/v1/sessions/${launched.threadId}`, { method: "DELETE", key: agent.apiKey });
    expect(erased.status).toBe(204);
    await expectError(await api(path, { key: agent.apiKey }), 404, "not_found");
  });

  it("names each run's version across an upgrade, and answers an error once that version's stored artifact was altered", async () => {
    const agent = await liveAgent({ artifact: { instructions: "You are version one." } });
    await saveDraft(agent.apiKey, agent.agentId, 1, validArtifact({ instructions: "You are version two." }));
    expect((await publish(agent.apiKey, agent.agentId, 2)).version).toBe(2);
    const launched = await launch(agent.publicKey);
    const before = await sendOverHttp(launched.threadId, launched.token, "On one");
    const upgraded = await api(`/v1/sessions/${launched.threadId}/upgrade`, {
      method: "POST",
      key: agent.apiKey,
      body: { version: 2 },
    });
    expect(upgraded.status).toBe(200);
    const after = await sendOverHttp(launched.threadId, launched.token, "On two");
    const input = (runId: string) =>
      api(`/v1/sessions/${launched.threadId}/runs/${runId}/input`, { key: agent.apiKey });

    const one = await json(await input(before), 200, runInputResponse);
    const two = await json(await input(after), 200, runInputResponse);
    expect(one).toMatchObject({ agentVersion: 1, verified: true });
    expect(two).toMatchObject({ agentVersion: 2, verified: true });
    expect(two.artifactDigest).not.toBe(one.artifactDigest);
    expect(JSON.stringify(two.messages)).toContain("You are version two.");

    // The conversation's messages name, per reply, the version, the run and its input digest.
    const stub = await threadStub(agent, launched.threadId);
    await drainThread(stub);
    const listed = await json(
      await api(`/v1/sessions/${launched.threadId}/messages`, { key: agent.apiKey }),
      200,
      z.object({ items: z.array(messageResponse) }),
    );
    const replies = listed.items.filter((m) => m.role === "assistant");
    expect(replies.map((m) => [m.version, m.runId, m.inputDigest])).toEqual([
      [1, before, one.inputDigest],
      [2, after, two.inputDigest],
    ]);
    // A user message carries no digest: only a reply was produced from a model input.
    const asked = listed.items.filter((m) => m.role === "user");
    expect(asked.map((m) => [m.version, m.inputDigest])).toEqual([
      [1, null],
      [2, null],
    ]);

    // The thread's stored copy of v2 is altered, and the object wakes to read it again.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE thread_versions SET artifact_json = ? WHERE version = 2",
        JSON.stringify(validArtifact({ instructions: "Something else entirely." })),
      );
    });
    await evictDurableObject(stub);
    const refused = await expectError(await input(after), 500, "internal");
    expect(refused.message).toContain("failed its digest check");
    expect(await json(await input(before), 200, runInputResponse)).toMatchObject({ verified: true });
  });

  it("answers a tool-calling run's last model call, any call by ?step, and refuses a step that is not one", async () => {
    const toolUrl = "https://hooks.example.com/orders";
    const agent = await liveAgent({
      artifact: {
        instructions: "Look orders up.",
        model: {
          provider: "local",
          model: "echo",
          local: { toolCall: { name: "lookup", input: { orderId: "A1" } } },
        },
        tools: [
          { name: "lookup", description: "Looks an order up.", url: toolUrl, signingSecret: "hook-signing" },
        ],
      },
    });
    const put = await api("/v1/secrets/hook-signing", {
      method: "PUT",
      key: agent.apiKey,
      body: { value: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
    });
    expect(put.status).toBe(204);
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = new Request(input, init).url;
      if (url === toolUrl) return jsonResponse(TOOL_ANSWER);
      throw new Error(`unexpected outbound request to ${url}`);
    });
    const launched = await launch(agent.publicKey);
    const runId = await sendOverHttp(launched.threadId, launched.token, "Where is A1?");
    const path = `/v1/sessions/${launched.threadId}/runs/${runId}/input`;
    const read = async (query: string) =>
      json(await api(`${path}${query}`, { key: agent.apiKey }), 200, runInputResponse);
    const digestOfView = ({ model, messages, tools, parameters }: RunInputResponse) =>
      digestOf({ model, messages, tools, parameters });

    // The call, then the model's second call with the tool's answer: two steps, the last one answered by default.
    const last = await read("");
    expect(last.steps.map((s) => s.step)).toEqual([0, 1]);
    expect(last).toMatchObject({ runId, step: 1, verified: true, inputDigest: last.steps[1]?.inputDigest });
    expect(await digestOfView(last)).toBe(last.inputDigest);
    expect(last.messages.at(-1)).toMatchObject({
      role: "tool",
      content: [{ type: "tool-result", toolName: "lookup", output: { type: "json", value: TOOL_ANSWER } }],
    });
    expect(await read("?step=1")).toEqual(last);

    const first = await read("?step=0");
    expect(first).toMatchObject({ step: 0, verified: true, inputDigest: last.steps[0]?.inputDigest });
    expect(first.steps).toEqual(last.steps);
    expect(await digestOfView(first)).toBe(first.inputDigest);
    expect(first.inputDigest).not.toBe(last.inputDigest);
    // The second call is the first one plus the model's call and the tool's answer.
    expect(last.messages.slice(0, first.messages.length)).toEqual(first.messages);
    expect(last.messages.slice(first.messages.length).map((m) => m.role)).toEqual(["assistant", "tool"]);

    const beyond = await expectError(await api(`${path}?step=2`, { key: agent.apiKey }), 404, "not_found");
    expect(beyond.message).toContain("0 to 1");
    for (const bad of ["abc", "-1", "1.5", "", "1e0"]) {
      const refused = await expectError(
        await api(`${path}?step=${encodeURIComponent(bad)}`, { key: agent.apiKey }),
        400,
        "bad_request",
      );
      expect(fieldPaths(refused), bad).toEqual(["step"]);
    }
  });

  it("answers a denied run's call after the decision with the denial as the tool result; the export has the approval", async () => {
    const agent = await liveAgent({
      artifact: {
        instructions: "Refund when asked.",
        model: {
          provider: "local",
          model: "echo",
          local: { toolCall: { name: "refund", input: { orderId: "B2" } } },
        },
        tools: [{ ...REFUND_TOOL, approval: { by: "tenant" } }],
      },
    });
    const put = await api("/v1/secrets/hook-signing", {
      method: "PUT",
      key: agent.apiKey,
      body: { value: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" },
    });
    expect(put.status).toBe(204);
    const refunds = vi
      .spyOn(globalThis, "fetch")
      .mockImplementation(async () => jsonResponse({ refunded: true }));
    const launched = await launch(agent.publicKey);
    const socket = await connect(launched);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "Refund B2." });
    const waiting = await socket.next("run", (f) => f.status === "requires_action");
    const runId = waiting.runId;
    const approvalId = waiting.actions?.[0]?.approvalId ?? "";
    const path = `/v1/sessions/${launched.threadId}/runs/${runId}/input`;
    const read = async (query: string) =>
      json(await api(`${path}${query}`, { key: agent.apiKey }), 200, runInputResponse);

    // While it waits, the run has made one call.
    const before = await read("");
    expect(before).toMatchObject({ step: 0, verified: true });
    expect(before.steps).toHaveLength(1);

    const decided = await api(`/v1/sessions/${launched.threadId}/approvals/${approvalId}`, {
      method: "POST",
      key: agent.apiKey,
      body: { decision: "deny", reason: "not eligible" },
    });
    expect(decided.status).toBe(200);
    await socket.next("run", (f) => f.runId === runId && f.status === "succeeded");
    socket.ws.close();
    expect(refunds).not.toHaveBeenCalled();

    // The call after the decision: the first call, the model's refund call, and the denial as its result.
    const after = await read("");
    expect(after).toMatchObject({ step: 1, verified: true, inputDigest: after.steps[1]?.inputDigest });
    expect(after.steps[0]).toEqual(before.steps[0]);
    expect(await read("?step=0")).toEqual({ ...before, steps: after.steps });
    expect(after.messages.slice(0, before.messages.length)).toEqual(before.messages);
    const [call, answer] = after.messages.slice(before.messages.length);
    expect(call).toMatchObject({
      role: "assistant",
      content: [{ type: "tool-call", toolName: "refund", input: { orderId: "B2" } }],
    });
    const toolCallId = (call?.content as { toolCallId?: string }[] | undefined)?.[0]?.toolCallId;
    expect(answer).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId,
          toolName: "refund",
          output: { type: "json", value: { denied: true, reason: "not eligible" } },
        },
      ],
    });

    // The export keeps the request and the decision between the message and the reply, with their fields.
    const exported = await json(
      await api(`/v1/sessions/${launched.threadId}/export`, { key: agent.apiKey }),
      200,
      threadExportSchema,
    );
    const [user, request, decision, reply] = exported.entries;
    expect(exported.entries.map((e) => [e.kind, e.role, e.runId])).toEqual([
      ["message", "user", null],
      ["approval_request", null, runId],
      ["approval_decision", null, runId],
      ["message", "assistant", runId],
    ]);
    expect([request?.parentId, decision?.parentId, reply?.parentId]).toEqual([
      user?.id,
      request?.id,
      decision?.id,
    ]);
    expect(request?.body).toEqual({
      approval: {
        approvalId,
        toolCallId,
        name: "refund",
        input: { orderId: "B2" },
        by: "tenant",
        expiresAt: waiting.actions?.[0]?.expiresAt,
      },
    });
    expect(decision?.body).toEqual({
      decision: { approvalId, decision: "deny", by: "tenant", reason: "not eligible" },
    });
    expect(reply?.body).toMatchObject({
      toolCalls: [
        {
          toolCallId,
          toolName: "refund",
          output: { denied: true, reason: "not eligible" },
          step: 0,
          textOffset: 0,
        },
      ],
    });
    expect(exported.runs.map((r) => [r.id, r.status, r.userEntryId, r.assistantEntryId])).toEqual([
      [runId, "succeeded", user?.id, reply?.id],
    ]);
  });

  it("answers 404 with the reason for a run that never reached a model", async () => {
    // The key's secret was never stored: the model cannot be resolved, so the run fails before any model call.
    const agent = await liveAgent({
      artifact: { model: { provider: "anthropic", model: "claude-fake", apiKeySecret: "never-set" } },
    });
    const launched = await launch(agent.publicKey);
    const runId = await sendOverHttp(launched.threadId, launched.token, "Hello", "failed");
    const error = await expectError(
      await api(`/v1/sessions/${launched.threadId}/runs/${runId}/input`, { key: agent.apiKey }),
      404,
      "not_found",
    );
    expect(error.message).toContain("never reached a model");
  });
});
