// A private launch's tool policy (docs/tools.md#tool-policy): tools outside it are hidden from the model and refused at
// dispatch, a later launch replaces it from the next turn, and a public launch cannot carry one.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { launchPrivate } from "../../src/client/index";
import { messageResponse } from "../../src/shared/sessions-api";
import {
  adoptThreadContext,
  blankThreadContext,
  readContextVersion,
  readThreadContext,
} from "../../src/storage/thread/context-store";
import { TOOL_NOT_PERMITTED } from "../../src/thread/run/run-wiring";
import { allThreadRows, privateLaunchRequest, readToken, tenantFootprint } from "../helpers/edge-gate";
import { type FakeReply, fakeOpenAICompatible } from "../helpers/fake-providers";
import { jsonResponse } from "../helpers/fake-tool-server";
import { drainThread, threadStub } from "../helpers/projection";
import { api, expectError, json } from "../helpers/tenants";
import {
  clientMessageId,
  type LiveAgent,
  launchRequest,
  launchResponse,
  liveAgent,
} from "../helpers/threads";

const MODEL_URL = "https://llm.example.com/v1";
const LOOKUP_URL = "https://hooks.example.com/lookup";
const REFUND_URL = "https://hooks.example.com/refund";
const SIGNING_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

const TOOLS = [
  { name: "lookup", description: "Looks an order up.", url: LOOKUP_URL, signingSecret: "hook-signing" },
  { name: "refund", description: "Refunds an order.", url: REFUND_URL, signingSecret: "hook-signing" },
];

afterEach(() => {
  vi.restoreAllMocks();
});

async function toolAgent(): Promise<LiveAgent> {
  const agent = await liveAgent({
    agent: { visibility: "private" },
    artifact: {
      instructions: "Help with orders.",
      model: { provider: "openai-compatible", model: "gpt-fake", baseUrl: MODEL_URL },
      tools: TOOLS,
    },
  });
  const put = await api("/v1/secrets/hook-signing", {
    method: "PUT",
    key: agent.apiKey,
    body: { value: SIGNING_SECRET },
  });
  expect(put.status).toBe(204);
  return agent;
}

function launchAs(agent: LiveAgent, body: Record<string, unknown> = {}): Promise<Response> {
  return privateLaunchRequest(agent.apiKey, { agentId: agent.agentId, subject: "alice", ...body });
}

async function launched(agent: LiveAgent, body: Record<string, unknown> = {}) {
  return json(await launchAs(agent, body), 201, launchResponse);
}

const modelRequest = z.object({
  tools: z.array(z.object({ function: z.object({ name: z.string() }) })).optional(),
  messages: z.array(
    z.object({ role: z.string(), content: z.unknown(), tool_call_id: z.string().optional() }),
  ),
});

/** The model (scripted) and the tools' endpoints, every request recorded. */
function fakeNetwork(replies: FakeReply[]) {
  const model = fakeOpenAICompatible(replies);
  const toolRequests: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = new Request(input, init).url;
    if (url.startsWith(MODEL_URL)) return model.fetch(input, init);
    if (url === LOOKUP_URL || url === REFUND_URL) {
      toolRequests.push(url);
      return jsonResponse({ done: true });
    }
    throw new Error(`unexpected outbound request to ${url}`);
  });
  const requests = () => model.requests.map((r) => modelRequest.parse(r.body));
  return {
    /** The tool names each model call was offered. */
    offered: () => requests().map((r) => (r.tools ?? []).map((t) => t.function.name)),
    /** The tool results each model call was handed. */
    toolResults: () =>
      requests().map((r) => r.messages.filter((m) => m.role === "tool").map((m) => String(m.content))),
    toolRequests,
  };
}

/** The model calls `name` first, then answers. */
const forcedCall = (name: string, id: string): FakeReply[] => [
  { kind: "tool-call", toolCallId: id, toolName: name, input: { orderId: "A1" } },
  { kind: "text", deltas: ["Done."] },
];

async function postMessage(threadId: string, token: string) {
  const res = await api(`/v1/threads/${threadId}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}` },
    body: { clientMessageId: clientMessageId(), text: "Refund A1, please." },
  });
  const reply = await json(res, 201, z.object({ run: z.object({ status: z.string() }) }));
  expect(reply.run.status).toBe("succeeded");
}

async function registryRow(agent: LiveAgent, threadId: string) {
  const row = await env.DB.prepare(
    "SELECT context, tool_policy, context_version FROM threads WHERE tenant_id = ? AND id = ?",
  )
    .bind(agent.tenantId, threadId)
    .first();
  return z
    .object({
      context: z.string().nullable(),
      tool_policy: z.string().nullable(),
      context_version: z.number(),
    })
    .parse(row);
}

describe("a private launch's tool policy", () => {
  it("with deny: the model is not offered the tool, and a call to it gets an error result and sends no webhook", async () => {
    const agent = await toolAgent();
    const net = fakeNetwork(forcedCall("refund", "call_refund"));
    const session = await launched(agent, { toolPolicy: { deny: ["refund"] } });
    expect(readToken(session.token).claims.contextVersion).toBe(1);
    await postMessage(session.threadId, session.token);

    expect(net.offered()).toEqual([["lookup"], ["lookup"]]);
    expect(net.toolRequests).toEqual([]);
    const [first, second] = net.toolResults();
    expect(first).toEqual([]);
    expect(second).toHaveLength(1);
    expect(second?.[0]).toContain(TOOL_NOT_PERMITTED);

    // Recorded like any refused tool call: the session's history shows the call and its error result.
    await drainThread(await threadStub(agent, session.threadId));
    const messages = await json(
      await api(`/v1/sessions/${session.threadId}/messages`, { key: agent.apiKey }),
      200,
      z.object({ items: z.array(messageResponse) }),
    );
    const reply = messages.items.find((m) => m.role === "assistant");
    expect(reply?.toolCalls).toEqual([
      expect.objectContaining({
        toolName: "refund",
        output: { error: TOOL_NOT_PERMITTED },
        isError: true,
      }),
    ]);
  });

  it("with allow: only those tools; a later launch without a policy gives the next turn every tool again", async () => {
    const agent = await toolAgent();
    const net = fakeNetwork([...forcedCall("refund", "call_a"), ...forcedCall("refund", "call_b")]);
    const first = await launched(agent, { toolPolicy: { allow: ["lookup"] } });
    await postMessage(first.threadId, first.token);
    expect(net.offered()).toEqual([["lookup"], ["lookup"]]);
    expect(net.toolRequests).toEqual([]);
    expect(net.toolResults()[1]?.[0]).toContain(TOOL_NOT_PERMITTED);

    // The same policy again (in another order) changes nothing, not even the version.
    const same = await launched(agent, {
      threadId: first.threadId,
      toolPolicy: { allow: ["lookup", "lookup"] },
    });
    expect(readToken(same.token).claims.contextVersion).toBe(1);

    // Lifted: the first launch's (still valid) token gets the new policy at its next turn.
    const lifted = await launched(agent, { threadId: first.threadId });
    expect(readToken(lifted.token).claims.contextVersion).toBe(2);
    await postMessage(first.threadId, first.token);
    expect(net.offered().slice(2)).toEqual([
      ["lookup", "refund"],
      ["lookup", "refund"],
    ]);
    expect(net.toolRequests).toEqual([REFUND_URL]);
    expect(await registryRow(agent, first.threadId)).toEqual({
      context: null,
      tool_policy: null,
      context_version: 2,
    });
  });

  it("applies from the next turn when a later launch sets one, stored beside the context as one version", async () => {
    const agent = await toolAgent();
    const net = fakeNetwork([...forcedCall("refund", "call_a"), ...forcedCall("refund", "call_b")]);
    const first = await launched(agent, { context: { plan: "pro" } });
    await postMessage(first.threadId, first.token);
    expect(net.toolRequests).toEqual([REFUND_URL]);

    const denied = await launched(agent, {
      threadId: first.threadId,
      context: { plan: "pro" },
      toolPolicy: { deny: ["refund", "lookup"], allow: ["refund", "lookup"] },
    });
    expect(readToken(denied.token).claims.contextVersion).toBe(2);
    expect(await registryRow(agent, first.threadId)).toEqual({
      context: '{"plan":"pro"}',
      tool_policy: '{"allow":["lookup","refund"],"deny":["lookup","refund"]}',
      context_version: 2,
    });
    await postMessage(first.threadId, first.token);
    // Every tool denied: the model is offered none, and the forced call is refused.
    expect(net.offered().slice(2)).toEqual([[], []]);
    expect(net.toolRequests).toEqual([REFUND_URL]);
    expect(net.toolResults()[3]?.at(-1)).toContain(TOOL_NOT_PERMITTED);
  });

  it("is sent by the typed client's launchPrivate", async () => {
    const agent = await toolAgent();
    const session = await launchPrivate({
      baseUrl: "http://api.test",
      fetch: (input, init) => exports.default.fetch(input, init),
      apiKey: agent.apiKey,
      agentId: agent.agentId,
      subject: "alice",
      toolPolicy: { allow: ["lookup"] },
    });
    expect((await registryRow(agent, session.threadId)).tool_policy).toBe('{"allow":["lookup"]}');
  });

  it("names a tool the agent does not have without refusing it: a later version may add it, still denied", async () => {
    const agent = await toolAgent();
    const session = await launched(agent, { toolPolicy: { deny: ["export_all"] } });
    expect((await registryRow(agent, session.threadId)).tool_policy).toBe('{"deny":["export_all"]}');
  });
});

describe("tool policy refusals at launch", () => {
  async function refused(agent: LiveAgent, toolPolicy: unknown, path: string, message: string) {
    const before = await tenantFootprint(agent.tenantId);
    const rowsBefore = await allThreadRows();
    const error = await expectError(await launchAs(agent, { toolPolicy }), 400, "bad_request");
    const details = z.array(z.object({ path: z.string(), message: z.string() })).parse(error.details);
    expect(
      details.some((d) => d.path === path && d.message.includes(message)),
      JSON.stringify(details),
    ).toBe(true);
    expect(await tenantFootprint(agent.tenantId)).toEqual(before);
    expect(await allThreadRows()).toBe(rowsBefore);
  }

  it.each([
    ["a name with a space", { deny: ["re fund"] }, "toolPolicy.deny.0", "tool name"],
    ["a name over 64 characters", { allow: [`a${"b".repeat(64)}`] }, "toolPolicy.allow.0", ""],
    ["65 names", { allow: Array.from({ length: 65 }, (_, i) => `t${i}`) }, "toolPolicy.allow", "64"],
    ["an unknown field", { only: ["lookup"] }, "toolPolicy", ""],
    ["a string", "lookup", "toolPolicy", ""],
  ])("answers %s with 400 naming it, storing nothing", async (_name, toolPolicy, path, message) => {
    const agent = await toolAgent();
    await refused(agent, toolPolicy, path, message);
  });

  it("answers a public launch carrying one with 400 naming toolPolicy, storing nothing", async () => {
    const agent = await liveAgent();
    for (const toolPolicy of [{ deny: ["refund"] }, {}]) {
      const before = await tenantFootprint(agent.tenantId);
      const rowsBefore = await allThreadRows();
      const error = await expectError(
        await launchRequest({ agentKey: agent.publicKey, toolPolicy }),
        400,
        "bad_request",
      );
      const details = z.array(z.object({ path: z.string(), message: z.string() })).parse(error.details);
      expect(details).toEqual([{ path: "toolPolicy", message: expect.stringContaining("private launch") }]);
      expect(await tenantFootprint(agent.tenantId)).toEqual(before);
      expect(await allThreadRows()).toBe(rowsBefore);
    }
  });
});

describe("the object's copy of the policy", () => {
  it("reaches a new thread's object with its first request; one that cannot read it binds and runs nothing", async () => {
    const agent = await toolAgent();
    const session = await launched(agent, { context: { plan: "pro" }, toolPolicy: { allow: ["lookup"] } });
    const network = fakeNetwork([{ kind: "text", deltas: ["Hello."] }]);
    const stub = await threadStub(agent, session.threadId);
    const held = () =>
      runInDurableObject(stub, (_instance, state) => ({
        context: readThreadContext(state.storage),
        pinned: Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM pin").one().n),
      }));
    // The launch told the object nothing; its first request must read the registry row, which is away.
    await env.DB.exec("ALTER TABLE threads RENAME TO threads_away");
    try {
      const refused = await api(`/v1/threads/${session.threadId}/messages`, {
        method: "POST",
        headers: { Authorization: `Bearer ${session.token}` },
        body: { clientMessageId: clientMessageId(), text: "Refund A1, please." },
      });
      await expectError(refused, 502, "upstream_unavailable");
      expect(network.offered()).toEqual([]);
      expect(await held()).toEqual({ context: { version: 0, variables: {} }, pinned: 0 });
    } finally {
      await env.DB.exec("ALTER TABLE threads_away RENAME TO threads");
    }
    await postMessage(session.threadId, session.token);
    expect(network.offered()).toEqual([["lookup"]]);
    expect(await held()).toEqual({
      context: { version: 1, variables: { plan: "pro" }, toolPolicy: { allow: ["lookup"] } },
      pinned: 1,
    });
  });

  it("is never undone by a late delivery, survives zero retention's purge, and is kept per version", async () => {
    const stub = env.THREAD.get(env.THREAD.idFromName(crypto.randomUUID()));
    const seen = await runInDurableObject(stub, (_instance, state) => {
      const storage = state.storage;
      adoptThreadContext(storage, {
        version: 2,
        variables: { plan: "pro" },
        toolPolicy: { deny: ["refund"] },
      });
      // A delivery of an older launch (no policy) arrives late.
      const late = adoptThreadContext(storage, { version: 1, variables: {} });
      const afterLate = readThreadContext(storage);
      blankThreadContext(storage);
      return {
        late,
        afterLate,
        afterPurge: readThreadContext(storage),
        kept: readContextVersion(storage, 2),
      };
    });
    expect(seen.late).toBe(false);
    expect(seen.afterLate).toEqual({
      version: 2,
      variables: { plan: "pro" },
      toolPolicy: { deny: ["refund"] },
    });
    expect(seen.afterPurge).toEqual({ version: 2, variables: {}, toolPolicy: { deny: ["refund"] } });
    expect(seen.kept).toEqual({ variables: {}, toolPolicy: { deny: ["refund"] } });
  });
});
