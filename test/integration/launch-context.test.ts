// Context variables of a private launch (docs/protocol.md): limits refused without trace, expanded into the model's
// instructions, handed to tools, and replaced by each later private launch from the next turn on.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { signLaunchToken } from "../../src/auth/launch-token";
import { allThreadRows, privateLaunchRequest, readToken, tenantFootprint } from "../helpers/edge-gate";
import { fakeOpenAICompatible } from "../helpers/fake-providers";
import { jsonResponse } from "../helpers/fake-tool-server";
import { api, expectError, json } from "../helpers/tenants";
import {
  clientMessageId,
  connect,
  type LiveAgent,
  launchRequest,
  launchResponse,
  liveAgent,
} from "../helpers/threads";

const MODEL_URL = "https://llm.example.com/v1";
const TOOL_URL = "https://hooks.example.com/lookup";
const SIGNING_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

const INSTRUCTIONS =
  "Help {{name}} on the {{plan}} plan ({{seats}} seats, trial {{trial}}). Region [{{region}}].";

afterEach(() => {
  vi.restoreAllMocks();
});

function privateAgent(artifact: Record<string, unknown> = {}): Promise<LiveAgent> {
  return liveAgent({ agent: { visibility: "private" }, artifact });
}

function launchAs(agent: LiveAgent, body: Record<string, unknown> = {}): Promise<Response> {
  return privateLaunchRequest(agent.apiKey, { agentId: agent.agentId, subject: "alice", ...body });
}

async function launched(agent: LiveAgent, body: Record<string, unknown> = {}) {
  return json(await launchAs(agent, body), 201, launchResponse);
}

async function registryContext(agent: LiveAgent, threadId: string) {
  const row = await env.DB.prepare(
    "SELECT context, context_version FROM threads WHERE tenant_id = ? AND id = ?",
  )
    .bind(agent.tenantId, threadId)
    .first();
  return z.object({ context: z.string().nullable(), context_version: z.number() }).parse(row);
}

/** Outbound requests of the thread object (model and tools), answered by fakes and recorded. */
function fakeNetwork(modelReplies: number) {
  const model = fakeOpenAICompatible(
    Array.from({ length: modelReplies }, () => ({ kind: "text" as const, deltas: ["Sure."] })),
  );
  const toolBodies: unknown[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = new Request(input, init).url;
    if (url.startsWith(MODEL_URL)) return model.fetch(input, init);
    if (url === TOOL_URL) {
      toolBodies.push(JSON.parse(String(init?.body)));
      return jsonResponse({ found: true });
    }
    throw new Error(`unexpected outbound request to ${url}`);
  });
  const systemPrompts = () =>
    model.requests.map(
      (r) =>
        z.object({ messages: z.array(z.object({ role: z.string(), content: z.unknown() })) }).parse(r.body)
          .messages[0],
    );
  return { systemPrompts, toolBodies };
}

const replySchema = z.object({ run: z.object({ status: z.string() }) });

async function postMessage(threadId: string, token: string, text = "hello") {
  const res = await api(`/v1/threads/${threadId}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}` },
    body: { clientMessageId: clientMessageId(), text },
  });
  expect((await json(res, 201, replySchema)).run.status).toBe("succeeded");
}

describe("context in the model's instructions", () => {
  it("expands {{name}} once, unknown names to nothing, and follows each later private launch from the next turn", async () => {
    const agent = await privateAgent({
      instructions: INSTRUCTIONS,
      model: { provider: "openai-compatible", model: "gpt-fake", baseUrl: MODEL_URL },
    });
    const net = fakeNetwork(4);

    const first = await launched(agent, {
      context: { name: "Ada {{plan}}", plan: "pro", seats: 3, trial: false },
    });
    expect(readToken(first.token).claims.contextVersion).toBe(1);
    const socket = await connect(first);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "hi" });
    await socket.next("run", (f) => f.status === "succeeded");
    expect(net.systemPrompts()[0]).toEqual({
      role: "system",
      content: "Help Ada {{plan}} on the pro plan (3 seats, trial false). Region [].",
    });

    // A later launch with another context: the socket opened before it uses the new one at its next turn.
    const second = await launched(agent, {
      threadId: first.threadId,
      context: { name: "Grace", region: "eu" },
    });
    expect(readToken(second.token).claims.contextVersion).toBe(2);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "again" });
    await socket.next("run", (f) => f.status === "succeeded");
    expect(net.systemPrompts()[1]?.content).toBe("Help Grace on the  plan ( seats, trial ). Region [eu].");

    // The same context again changes nothing, not even the version.
    const same = await launched(agent, {
      threadId: first.threadId,
      context: { region: "eu", name: "Grace" },
    });
    expect(readToken(same.token).claims.contextVersion).toBe(2);

    // A launch without context clears it; even the first launch's (still valid) token now gets the cleared one.
    await launched(agent, { threadId: first.threadId });
    await postMessage(first.threadId, first.token);
    expect(net.systemPrompts()[2]?.content).toBe("Help  on the  plan ( seats, trial ). Region [].");
    expect(await registryContext(agent, first.threadId)).toEqual({ context: null, context_version: 3 });
    socket.ws.close();
  });

  it("gives a thread relaunched with context before its first turn that context", async () => {
    const agent = await privateAgent({
      instructions: INSTRUCTIONS,
      model: { provider: "openai-compatible", model: "gpt-fake", baseUrl: MODEL_URL },
    });
    const net = fakeNetwork(1);
    const first = await launched(agent);
    expect(readToken(first.token).claims.contextVersion).toBeUndefined();
    await launched(agent, { threadId: first.threadId, context: { name: "Lin", plan: "team" } });
    // Even the first launch's token, which names no context version, gets the thread's context.
    await postMessage(first.threadId, first.token);
    expect(net.systemPrompts()[0]?.content).toBe("Help Lin on the team plan ( seats, trial ). Region [].");
  });

  it("catches up from the registry when a launch's delivery to the object was lost", async () => {
    const agent = await privateAgent({
      instructions: INSTRUCTIONS,
      model: { provider: "openai-compatible", model: "gpt-fake", baseUrl: MODEL_URL },
    });
    const net = fakeNetwork(2);
    const first = await launched(agent, { context: { name: "Ada" } });
    await postMessage(first.threadId, first.token);
    // What a launch writes when the call to the object fails: the registry row, and a token naming its version.
    await env.DB.prepare("UPDATE threads SET context = ?, context_version = 2 WHERE tenant_id = ? AND id = ?")
      .bind('{"name":"Bo"}', agent.tenantId, first.threadId)
      .run();
    const { sub, subjectKind } = readToken(first.token).claims;
    const token = await signLaunchToken(env, {
      tenantId: agent.tenantId,
      agentId: agent.agentId,
      threadId: first.threadId,
      sub: String(sub),
      subjectKind: subjectKind === "user" ? "user" : "visitor",
      contextVersion: 2,
    });
    await postMessage(first.threadId, token.token);
    expect(net.systemPrompts().map((m) => m?.content)).toEqual([
      "Help Ada on the  plan ( seats, trial ). Region [].",
      "Help Bo on the  plan ( seats, trial ). Region [].",
    ]);
  });
});

describe("context for tools", () => {
  it("sends the thread's variables as context.variables in the tool call body, {} once cleared", async () => {
    const agent = await privateAgent({
      instructions: "Look it up.",
      model: { provider: "local", model: "echo", local: { toolCall: { name: "lookup", input: { q: "x" } } } },
      tools: [
        { name: "lookup", description: "Looks things up.", url: TOOL_URL, signingSecret: "hook-signing" },
      ],
    });
    const put = await api("/v1/secrets/hook-signing", {
      method: "PUT",
      key: agent.apiKey,
      body: { value: SIGNING_SECRET },
    });
    expect(put.status).toBe(204);
    const net = fakeNetwork(0);

    const first = await launched(agent, { context: { plan: "pro", seats: 3, beta: true } });
    await postMessage(first.threadId, first.token);
    await launched(agent, { threadId: first.threadId });
    await postMessage(first.threadId, first.token);

    const bodies = z
      .array(
        z.object({
          tool: z.literal("lookup"),
          context: z.object({ subject: z.string(), variables: z.unknown() }),
        }),
      )
      .parse(net.toolBodies);
    expect(bodies.map((b) => b.context)).toEqual([
      expect.objectContaining({ subject: "alice", variables: { plan: "pro", seats: 3, beta: true } }),
      expect.objectContaining({ subject: "alice", variables: {} }),
    ]);
  });
});

describe("context limits at launch", () => {
  /** Asserts a 400 naming `path` (and `message`), with no thread row added and no quota spent. */
  async function refused(
    agent: LiveAgent,
    body: string | Record<string, unknown>,
    path: string,
    message: string,
  ) {
    const before = await tenantFootprint(agent.tenantId);
    const rowsBefore = await allThreadRows();
    const res = await privateLaunchRequest(
      agent.apiKey,
      typeof body === "string" ? body : { agentId: agent.agentId, subject: "alice", ...body },
    );
    const error = await expectError(res, 400, "bad_request");
    const details = z.array(z.object({ path: z.string(), message: z.string() })).parse(error.details);
    expect(
      details.some((d) => d.path === path && d.message.includes(message)),
      JSON.stringify(details),
    ).toBe(true);
    expect(await tenantFootprint(agent.tenantId)).toEqual(before);
    expect(await allThreadRows()).toBe(rowsBefore);
  }

  const many = (n: number, value: (i: number) => unknown = (i) => i) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`v${i}`, value(i)]));

  it.each([
    ["33 variables", many(33), "context", "at most 32 variables"],
    ["a name with a dash", { "first-name": "Ada" }, "context.first-name", "variable name"],
    [
      "a name over 64 characters",
      { [`a${"b".repeat(64)}`]: 1 },
      `context.a${"b".repeat(64)}`,
      "variable name",
    ],
    ["an object value", { plan: { tier: 1 } }, "context.plan", "string, number or boolean"],
    ["a null value", { plan: null }, "context.plan", "string, number or boolean"],
    ["a string over 1,000 characters", { name: "x".repeat(1001) }, "context.name", "at most 1000 characters"],
    ["more than 8 KiB in all", many(9, () => "x".repeat(1000)), "context", "at most 8192 bytes"],
    ["an array", [], "context", "object of variables"],
  ])("answers %s with 400 naming it, storing nothing", async (_name, context, path, message) => {
    const agent = await privateAgent();
    await refused(agent, { context }, path, message);
  });

  it("answers __proto__ and an infinite number with 400, and nothing pollutes a prototype", async () => {
    const agent = await privateAgent();
    const raw = (context: string) =>
      `{"agentId": ${JSON.stringify(agent.agentId)}, "subject": "alice", "context": ${context}}`;
    await refused(agent, raw('{"__proto__": {"polluted": true}}'), "context.__proto__", "reserved");
    await refused(agent, raw('{"__proto__": "x"}'), "context.__proto__", "reserved");
    await refused(agent, raw('{"n": 1e400}'), "context.n", "finite");
    expect(Reflect.get({}, "polluted")).toBeUndefined();
  });

  it("leaves a thread's context as it was when a resume carries an invalid one", async () => {
    const agent = await privateAgent();
    const first = await launched(agent, { context: { plan: "pro" } });
    await refused(agent, { threadId: first.threadId, context: { plan: ["x"] } }, "context.plan", "string");
    expect(await registryContext(agent, first.threadId)).toEqual({
      context: '{"plan":"pro"}',
      context_version: 1,
    });
  });

  it("answers a public launch carrying context with 400, storing nothing", async () => {
    const agent = await liveAgent();
    for (const context of [{ name: "Ada" }, {}]) {
      const before = await tenantFootprint(agent.tenantId);
      const rowsBefore = await allThreadRows();
      const error = await expectError(
        await launchRequest({ agentKey: agent.publicKey, context }),
        400,
        "bad_request",
      );
      expect(JSON.stringify(error.details)).toContain("private launch");
      expect(await tenantFootprint(agent.tenantId)).toEqual(before);
      expect(await allThreadRows()).toBe(rowsBefore);
    }
  });

  it("takes a private body of up to 16 KiB, so a full 8 KiB context fits; a larger one is 413", async () => {
    const agent = await privateAgent();
    const full = many(8, () => "é".repeat(500));
    const ok = await launched(agent, { context: { ...full, a: "x".repeat(100) } });
    expect((await registryContext(agent, ok.threadId)).context_version).toBe(1);
    const res = await launchAs(agent, { context: { pad: "x".repeat(16 * 1024) } });
    await expectError(res, 413, "payload_too_large");
  });
});

describe("context and erasure", () => {
  it("leaves no context variables in the registry's tombstone", async () => {
    const agent = await privateAgent();
    const session = await launched(agent, { context: { email: "ada@example.com" } });
    const erased = await api(`/v1/sessions/${session.threadId}`, { method: "DELETE", key: agent.apiKey });
    expect(erased.status).toBe(204);
    expect((await registryContext(agent, session.threadId)).context).toBeNull();
  });
});
