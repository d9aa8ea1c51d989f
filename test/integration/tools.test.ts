// Agent tools: bad URLs refused at configuration and at call time, signed webhooks, identity, caps and retries.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { decryptTenantSecret } from "../../src/auth/secret-box";
import { resolveModel } from "../../src/models/resolve-model";
import { runTurn } from "../../src/models/turn";
import { REDACTED } from "../../src/storage/redact";
import {
  type ExecuteToolCallInput,
  executeToolCall,
  MAX_TOOL_RESPONSE_BYTES,
  type ToolCallContext,
} from "../../src/tools/execute-tool";
import { type Tool, toolDefinitions, toolNamed } from "../../src/tools/tool-definitions";
import { verifyWebhook } from "../../src/tools/webhook-signature";
import { fakeOpenAICompatible } from "../helpers/fake-providers";
import { fakeClock, fakeToolServer, jsonResponse, never } from "../helpers/fake-tool-server";
import {
  API,
  api,
  countRows,
  createAgent,
  createTenant,
  expectError,
  fieldPaths,
  json,
  saveDraft,
  unique,
  validArtifact,
} from "../helpers/tenants";

const SECRET = "whsec_dGVzdC10b29sLXNpZ25pbmctc2VjcmV0LTAxMjM0NTY3";
const TOOL_URL = "https://tools.example.com/orders/lookup";
const PLATFORM_HOST = new URL(API).host;

const BAD_URLS = [
  "http://tools.example.com/lookup",
  "https://127.0.0.1",
  "https://169.254.169.254/",
  "https://[::1]",
  "https://[::ffff:127.0.0.1]/",
  "https://2130706433/",
  "https://0x7f.1/",
  "https://0177.0.0.1/",
  "https://10.0.0.8/hook",
  "https://192.168.0.1/hook",
  "https://100.64.1.1/hook",
  "https://[fd00::1]/hook",
  "https://[fe80::1]/hook",
  "https://0.0.0.0/hook",
  "https://localhost/hook",
  "https://svc.localhost/hook",
  "https://metadata.google.internal/computeMetadata/v1/",
  "https://printer.local/hook",
  "https://user:pw@tools.example.com/hook",
  "https://tools.example.com:8443/hook",
];

function tool(overrides: Partial<Tool> = {}): Tool {
  return {
    name: "lookup_order",
    description: "Looks up an order.",
    url: TOOL_URL,
    signingSecret: "tool-signing",
    ...overrides,
  };
}

function context(overrides: Partial<ToolCallContext> = {}): ToolCallContext {
  return {
    tenantId: "ten_alpha",
    agentId: "agt_support",
    threadId: "thr_1",
    subject: "alice",
    runId: crypto.randomUUID(),
    ...overrides,
  };
}

/** The webhook timestamps' clock: it moves only when a test moves it. */
const clock = fakeClock();

function call(input: unknown = { orderId: "A-17" }) {
  return { toolCallId: "call_7f3a", toolName: "lookup_order", input };
}

/** One tool call with working defaults, so each test states only what it is about. */
function callTool(server: { fetch: typeof fetch }, overrides: Partial<ExecuteToolCallInput> = {}) {
  return executeToolCall({
    tool: tool(),
    call: call(),
    context: context(),
    signingSecret: SECRET,
    fetch: server.fetch,
    now: clock.now,
    ...overrides,
  });
}

const sentBody = z.object({
  tool: z.string(),
  toolCallId: z.string(),
  input: z.record(z.string(), z.unknown()),
  context: z.object({
    tenantId: z.string(),
    agentId: z.string(),
    threadId: z.string(),
    subject: z.string().nullable(),
    runId: z.string(),
    variables: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  }),
});

describe("tool URLs at configuration", () => {
  async function agentWithDraft(tools: unknown[]) {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact({ tools }));
    return { tenant, agent };
  }

  function publish(apiKey: string, agentId: string) {
    return api(`/v1/agents/${agentId}/versions`, { method: "POST", key: apiKey, body: { draftRevision: 1 } });
  }

  it.each(BAD_URLS)("refuses %s with a 400 naming the tool's url, publishing nothing", async (url) => {
    const { tenant, agent } = await agentWithDraft([
      { name: "ok", description: "A fine tool.", url: TOOL_URL, signingSecret: "tool-signing" },
      { name: "bad", description: "A tool aimed inward.", url, signingSecret: "tool-signing" },
    ]);
    const error = await expectError(await publish(tenant.apiKey, agent.id), 400, "bad_request");
    expect(fieldPaths(error)).toEqual(["tools.1.url"]);
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);
  });

  it("requires a signing secret alias on every tool", async () => {
    const { tenant, agent } = await agentWithDraft([
      { name: "unsigned", description: "No secret.", url: TOOL_URL },
      { name: "raw", description: "A value, not an alias.", url: TOOL_URL, signingSecret: SECRET },
    ]);
    const error = await expectError(await publish(tenant.apiKey, agent.id), 400, "bad_request");
    expect(fieldPaths(error)).toEqual(["tools.0.signingSecret", "tools.1.signingSecret"]);
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);
  });

  it("publishes a public https tool with a signing secret alias", async () => {
    const { tenant, agent } = await agentWithDraft([
      { name: "lookup_order", description: "Looks up.", url: TOOL_URL, signingSecret: "tool-signing" },
    ]);
    const res = await publish(tenant.apiKey, agent.id);
    await json(res, 201, z.object({ version: z.literal(1) }));
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(1);
  });
});

describe("client tools, approvals and output schemas at publish", () => {
  const clientTool = { name: "pick_date", description: "Asks the visitor for a date.", executor: "client" };
  const serverTool = {
    name: "refund",
    description: "Refunds.",
    url: TOOL_URL,
    signingSecret: "tool-signing",
  };

  async function publishTools(tools: unknown[]) {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact({ tools }));
    const res = await api(`/v1/agents/${agent.id}/versions`, {
      method: "POST",
      key: tenant.apiKey,
      body: { draftRevision: 1 },
    });
    return { res, tenant };
  }

  it("publishes a client tool without a webhook, and a server tool with approval rules and an output schema", async () => {
    const { res, tenant } = await publishTools([
      { ...clientTool, timeoutMs: 120_000, outputSchema: { type: "object", required: ["date"] } },
      {
        ...serverTool,
        approval: {
          when: [{ pointer: "/amount", op: "gt", value: 100 }],
          by: "tenant",
          onTimeout: "handoff",
          title: "Refund",
        },
      },
    ]);
    await json(res, 201, z.object({ version: z.literal(1) }));
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(1);
  });

  it("refuses each bad field with a 400 naming its path, publishing nothing", async () => {
    const { res, tenant } = await publishTools([
      { ...clientTool, url: TOOL_URL, signingSecret: "tool-signing", timeoutMs: 500 },
      { name: "plain", description: "No webhook.", timeoutMs: 60_000 },
      { ...serverTool, approval: { by: "robot", when: [{ pointer: "amount", op: "in", value: 5 }] } },
      {
        ...clientTool,
        name: "typed",
        outputSchema: { type: "object", properties: { date: { type: "day" } } },
      },
      { ...serverTool, name: "unsure", approval: "sometimes" },
    ]);
    const error = await expectError(res, 400, "bad_request");
    expect(fieldPaths(error).sort()).toEqual(
      [
        "tools.0.url",
        "tools.0.signingSecret",
        "tools.0.timeoutMs",
        "tools.1.url",
        "tools.1.signingSecret",
        "tools.1.timeoutMs",
        "tools.2.approval.by",
        "tools.2.approval.when.0.pointer",
        "tools.2.approval.when.0.value",
        "tools.4.approval",
      ].sort(),
    );
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);
  });

  it("refuses an output schema that is no JSON Schema with a 400 naming the keyword", async () => {
    const { res, tenant } = await publishTools([
      { ...clientTool, outputSchema: { type: "object", properties: { date: { type: "day" } } } },
    ]);
    const error = await expectError(res, 400, "bad_request");
    expect(fieldPaths(error)).toEqual(["tools.0.outputSchema.properties.date.type"]);
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);
  });
});

describe("executeToolCall: a client tool", () => {
  it("is never sent to a webhook, even with a URL in hand", async () => {
    const net = fakeToolServer(() => jsonResponse({ ok: true }));
    const result = await callTool(net, { tool: tool({ executor: "client" }) });
    expect(result).toMatchObject({ status: "blocked", isError: true, attempts: 0 });
    expect(net.sent).toEqual([]);
  });
});

describe("executeToolCall: URL policy at call time", () => {
  it.each([...BAD_URLS, `https://${PLATFORM_HOST}/v1/health`])(
    "blocks %s without sending anything",
    async (url) => {
      const net = fakeToolServer(() => jsonResponse({ ok: true }));
      const result = await callTool(net, { tool: tool({ url }), platformHosts: [PLATFORM_HOST] });
      expect(result).toMatchObject({ status: "blocked", isError: true, attempts: 0 });
      expect(JSON.stringify(result.output)).toMatch(/URL must/);
      expect(net.sent).toEqual([]);
    },
  );

  it("calls a local plain-http tool only where the deployment allows it (development)", async () => {
    const url = "http://127.0.0.1:8788/tool";
    const refused = fakeToolServer(() => jsonResponse({ ok: true }));
    expect(await callTool(refused, { tool: tool({ url }) })).toMatchObject({
      status: "blocked",
      attempts: 0,
    });
    expect(refused.sent).toEqual([]);
    const allowed = fakeToolServer(() => jsonResponse({ ok: true }));
    const result = await callTool(allowed, { tool: tool({ url }), allowLocalHttp: true });
    expect(result).toMatchObject({ output: { ok: true }, attempts: 1 });
    expect(result.isError).not.toBe(true);
    expect(allowed.sent.map((r) => r.url)).toEqual([url]);
  });

  it("blocks a call naming another tool, and refuses a secret that is not whsec_, sending nothing", async () => {
    const net = fakeToolServer(() => jsonResponse({ ok: true }));
    const other = await callTool(net, { call: { ...call(), toolName: "drop_tables" } });
    expect(other).toMatchObject({ status: "blocked", isError: true, attempts: 0 });
    const badSecret = await callTool(net, { signingSecret: "not base64!" });
    expect(badSecret).toMatchObject({ status: "error", isError: true, attempts: 0 });
    expect(net.sent).toEqual([]);
  });
});

describe("executeToolCall: signed delivery", () => {
  it("POSTs the canonical body with Standard Webhooks headers that verify over the exact bytes", async () => {
    const net = fakeToolServer(() => jsonResponse({ status: "shipped", eta: "2 days" }));
    const ctx = context();
    const result = await callTool(net, { call: call({ orderId: "A-17", note: "ünïcødé ✓" }), context: ctx });
    expect(result).toMatchObject({ status: "finished", httpStatus: 200, attempts: 1 });
    expect(result.output).toEqual({ status: "shipped", eta: "2 days" });
    expect(result.isError).toBeUndefined();

    expect(net.sent).toHaveLength(1);
    const [request] = net.sent;
    if (request === undefined) throw new Error("no request");
    expect(request).toMatchObject({ url: TOOL_URL, method: "POST", redirect: "manual" });
    expect(request.headers.get("content-type")).toBe("application/json");
    expect(request.headers.get("webhook-id")).toBe(result.webhookId);
    expect(request.headers.get("webhook-id")).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(request.headers.get("webhook-timestamp")).toBe(String(Math.floor(clock.now() / 1000)));
    expect(request.headers.get("webhook-signature")).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(
      await verifyWebhook({ secret: SECRET, headers: request.headers, body: request.body, now: clock.now() }),
    ).toEqual({ ok: true, id: result.webhookId, timestamp: Math.floor(clock.now() / 1000) });
    // One byte changed and the signature no longer verifies.
    const tampered = request.body.replace("A-17", "A-18");
    expect((await verifyWebhook({ secret: SECRET, headers: request.headers, body: tampered })).ok).toBe(
      false,
    );

    expect(request.body).toBe(
      JSON.stringify({
        context: {
          agentId: ctx.agentId,
          runId: ctx.runId,
          subject: ctx.subject,
          tenantId: ctx.tenantId,
          threadId: ctx.threadId,
          variables: {},
        },
        input: { note: "ünïcødé ✓", orderId: "A-17" },
        tool: "lookup_order",
        toolCallId: "call_7f3a",
      }),
    );
  });

  it("signs with the secret stored under the tool's alias, read back through decryptTenantSecret", async () => {
    const tenant = await createTenant();
    const alias = unique("hook").toLowerCase();
    const put = await api(`/v1/secrets/${alias}`, {
      method: "PUT",
      key: tenant.apiKey,
      body: { value: SECRET },
    });
    expect(put.status).toBe(204);
    const signingSecret = await decryptTenantSecret(env, tenant.tenantId, alias);
    expect(signingSecret).toBe(SECRET);

    const net = fakeToolServer(() => jsonResponse({ ok: true }));
    await callTool(net, {
      tool: tool({ signingSecret: alias }),
      context: context({ tenantId: tenant.tenantId }),
      signingSecret: signingSecret ?? "",
    });
    const [request] = net.sent;
    expect(request).toBeDefined();
    if (request === undefined) return;
    expect((await verifyWebhook({ secret: SECRET, headers: request.headers, body: request.body })).ok).toBe(
      true,
    );
  });

  it("retries a 5xx once with the same webhook-id and body, and a fresh valid signature", async () => {
    const net = fakeToolServer(
      () => {
        clock.advance(2_000);
        return new Response("upstream busy", { status: 503 });
      },
      () => jsonResponse({ status: "shipped" }),
    );
    const result = await callTool(net);
    expect(result).toMatchObject({ status: "finished", attempts: 2, output: { status: "shipped" } });
    const [first, second] = net.sent;
    if (first === undefined || second === undefined) throw new Error("expected two requests");
    expect(second.headers.get("webhook-id")).toBe(first.headers.get("webhook-id"));
    expect(second.body).toBe(first.body);
    expect(Number(second.headers.get("webhook-timestamp"))).toBe(
      Number(first.headers.get("webhook-timestamp")) + 2,
    );
    for (const request of net.sent) {
      expect((await verifyWebhook({ secret: SECRET, headers: request.headers, body: request.body })).ok).toBe(
        true,
      );
    }
  });

  it("retries a network failure once, then reports the tool unreachable", async () => {
    const net = fakeToolServer(() => {
      throw new TypeError("Network connection lost.");
    });
    const result = await callTool(net);
    expect(result).toMatchObject({ status: "error", isError: true, attempts: 2 });
    expect(result.httpStatus).toBeUndefined();
    expect(net.sent.map((r) => r.headers.get("webhook-id"))).toEqual([result.webhookId, result.webhookId]);
  });

  it("can be handed the global fetch as it is (workerd refuses it called as a method)", async () => {
    let thisArg: unknown = "unset";
    function strict(this: unknown): Promise<Response> {
      thisArg = this;
      return Promise.resolve(jsonResponse({ ok: true }));
    }
    const result = await callTool({ fetch: strict });
    expect(result).toMatchObject({ status: "finished", attempts: 1 });
    expect(thisArg).toBeUndefined();
  });

  it("gives a second 5xx and any 4xx to the model as an error, without another retry", async () => {
    const down = fakeToolServer(() => jsonResponse({ message: "down" }, 502));
    const failed = await callTool(down);
    expect(failed).toMatchObject({ status: "error", isError: true, httpStatus: 502, attempts: 2 });
    expect(failed.output).toEqual({ error: "The tool answered HTTP 502.", response: { message: "down" } });

    const missing = fakeToolServer(
      () => new Response("no such order", { status: 404, headers: { "content-type": "text/plain" } }),
    );
    const notFound = await callTool(missing);
    expect(notFound).toMatchObject({ status: "error", isError: true, httpStatus: 404, attempts: 1 });
    expect(notFound.output).toEqual({ error: "The tool answered HTTP 404.", response: "no such order" });
    expect(missing.sent).toHaveLength(1);
  });

  it("hands a text answer to the model as text", async () => {
    const net = fakeToolServer(
      () => new Response("Order A-17 shipped.", { headers: { "content-type": "text/plain" } }),
    );
    const result = await callTool(net);
    expect(result).toMatchObject({ status: "finished", output: "Order A-17 shipped." });
  });
});

describe("executeToolCall: identity comes from the runtime", () => {
  it("overrides identity arguments the model chose, in any spelling, and keeps the rest", async () => {
    const net = fakeToolServer(() => jsonResponse({ ok: true }));
    const ctx = context({ subject: "alice" });
    await callTool(net, {
      call: call({
        orderId: "A-17",
        userId: "mallory",
        user_id: "mallory",
        subject: "mallory",
        tenantId: "ten_victim",
        tenant_id: "ten_victim",
        agentId: "agt_other",
        threadId: "thr_other",
        SessionId: "thr_other",
      }),
      context: ctx,
    });
    const body = sentBody.parse(JSON.parse(net.sent[0]?.body ?? "null"));
    expect(body.input).toEqual({
      orderId: "A-17",
      userId: "alice",
      user_id: "alice",
      subject: "alice",
      tenantId: ctx.tenantId,
      tenant_id: ctx.tenantId,
      agentId: ctx.agentId,
      threadId: ctx.threadId,
      SessionId: ctx.threadId,
    });
    expect(body.context).toEqual({ ...ctx, variables: {} });
    expect(JSON.stringify(body)).not.toContain("mallory");
    expect(JSON.stringify(body)).not.toContain("victim");
  });

  it("fills identity the tool's schema declares and hides it from the model", async () => {
    const declaring = tool({
      inputSchema: {
        type: "object",
        properties: { orderId: { type: "string" }, userId: { type: "string" } },
        required: ["orderId", "userId"],
      },
    });
    expect(toolDefinitions([declaring])).toEqual([
      {
        type: "function",
        name: "lookup_order",
        description: "Looks up an order.",
        inputSchema: { type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"] },
      },
    ]);
    expect(toolDefinitions([tool()])[0]?.inputSchema).toEqual({ type: "object", properties: {} });
    expect(toolDefinitions(undefined)).toEqual([]);
    const other = tool({ name: "track_parcel" });
    expect(toolNamed([other, declaring], "lookup_order")).toBe(declaring);
    expect(toolNamed([declaring], "drop_tables")).toBeNull();
    const net = fakeToolServer(() => jsonResponse({ ok: true }));
    await callTool(net, {
      tool: declaring,
      call: call({ orderId: "A-17" }),
      context: context({ subject: null }),
    });
    const body = sentBody.parse(JSON.parse(net.sent[0]?.body ?? "null"));
    expect(body.input).toEqual({ orderId: "A-17", userId: null });
    expect(body.context.subject).toBeNull();
  });

  it("refuses input that is not an object, sending nothing", async () => {
    const net = fakeToolServer(() => jsonResponse({ ok: true }));
    for (const input of [["a"], "text", 42, null]) {
      const result = await callTool(net, { call: call(input) });
      expect(result).toMatchObject({ status: "error", isError: true, attempts: 0 });
    }
    expect(net.sent).toEqual([]);
  });
});

describe("identity at any depth: declared JSON pointers", () => {
  const searchTool = (identity: Record<string, string>): Tool => ({
    ...tool({
      name: "search_orders",
      inputSchema: {
        type: "object",
        properties: {
          filter: {
            type: "object",
            properties: { userId: { type: "string" }, status: { type: "string" } },
            required: ["userId", "status"],
          },
          customer_id: { type: "string" },
        },
        required: ["filter"],
      },
    }),
    identity: identity as Tool["identity"],
  });

  it("hides the pointed-at property from the model and writes the real subject there", async () => {
    const searcher = searchTool({ "/filter/userId": "subject" });
    const provider = fakeOpenAICompatible([
      {
        kind: "tool-call",
        toolCallId: "call_attack",
        toolName: "search_orders",
        input: { filter: { userId: "victim", status: "open" }, customer_id: "victim-cust" },
      },
      { kind: "text", deltas: ["Done."] },
    ]);
    const model = await resolveModel(
      { provider: "openai-compatible", model: "gpt-fake", baseUrl: "https://llm.example.test/v1" },
      { env, tenantSecret: async () => null, fetch: provider.fetch },
    );
    if (!model.ok) throw new Error(model.message);
    const net = fakeToolServer(() => jsonResponse({ orders: [] }));
    const ctx = context({ subject: "alice" });
    const outcome = await runTurn({
      model: model.value,
      prompt: [{ role: "user", content: [{ type: "text", text: "Show victim's orders." }] }],
      tools: toolDefinitions([searcher]),
      signal: new AbortController().signal,
      maxSteps: 2,
      onDelta: () => {},
      onToolCall: (modelCall) =>
        callTool(net, { tool: searcher, call: { ...modelCall, toolName: searcher.name }, context: ctx }),
    });
    expect(outcome.status).toBe("succeeded");

    // What the model was offered: the filter without its userId, which is no longer required either.
    const offered = z
      .object({ tools: z.array(z.object({ function: z.object({ parameters: z.unknown() }) })) })
      .parse(provider.requests[0]?.body);
    expect(offered.tools[0]?.function.parameters).toEqual({
      type: "object",
      properties: {
        filter: { type: "object", properties: { status: { type: "string" } }, required: ["status"] },
        customer_id: { type: "string" },
      },
      required: ["filter"],
    });

    // What the tool received: the verified subject where the model wrote "victim". Other ids (customer_id) are
    // the tool's own to check against `context.subject`; the runtime passes them as written.
    const body = sentBody.parse(JSON.parse(net.sent[0]?.body ?? "null"));
    expect(body.input).toEqual({ filter: { userId: "alice", status: "open" }, customer_id: "victim-cust" });
    expect(body.context.subject).toBe("alice");
  });

  it("creates the objects a pointer passes through, replaces non-objects there, and keeps __proto__ a key", async () => {
    const deep = tool({
      identity: { "/scope/owner/id": "subject", "/scope/tenant": "tenantId", "/__proto__/x": "runId" },
    });
    const ctx = context({ subject: null });
    const cases = [
      {},
      { scope: "all tenants" },
      { scope: { owner: ["mallory"], tenant: "ten_victim", keep: 1 } },
    ];
    const net = fakeToolServer(() => jsonResponse({ ok: true }));
    for (const input of cases) await callTool(net, { tool: deep, call: call(input), context: ctx });
    const inputs = net.sent.map((request) => JSON.parse(request.body).input as Record<string, unknown>);
    const scope = { owner: { id: null }, tenant: ctx.tenantId };
    expect(inputs).toEqual([
      { scope, ["__proto__"]: { x: ctx.runId } },
      { scope, ["__proto__"]: { x: ctx.runId } },
      { scope: { ...scope, keep: 1 }, ["__proto__"]: { x: ctx.runId } },
    ]);
    expect(Object.hasOwn(inputs[0] ?? {}, "__proto__")).toBe(true);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it("refuses bad pointers with a 400 naming each one when the draft is published, publishing nothing", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    const identity = {
      "filter/userId": "subject", // not a pointer: no leading "/"
      "/filter/": "subject", // an empty segment
      "/filter/~2": "subject", // an escape RFC 6901 does not have
      "/filter/status/code": "subject", // through a string
      "/customer_id/id": "tenantId", // through a string
      "/filter": "agentId", // an object, with /filter/userId inside it (valid on its own)
      "/filter/userId": "subject",
      "/userId/id": "subject", // through a top-level key the runtime owns
    };
    await saveDraft(tenant.apiKey, agent.id, 0, validArtifact({ tools: [searchTool(identity)] }));
    const res = await api(`/v1/agents/${agent.id}/versions`, {
      method: "POST",
      key: tenant.apiKey,
      body: { draftRevision: 1 },
    });
    const error = await expectError(res, 400, "bad_request");
    expect(fieldPaths(error).sort()).toEqual(
      [
        "tools.0.identity.filter/userId",
        "tools.0.identity./filter/",
        "tools.0.identity./filter/~2",
        "tools.0.identity./filter/status/code",
        "tools.0.identity./customer_id/id",
        "tools.0.identity./filter",
        "tools.0.identity./filter/userId",
        "tools.0.identity./userId/id",
      ].sort(),
    );
    expect(await countRows("agent_versions", tenant.tenantId)).toBe(0);

    const facts = await saveDraft(
      tenant.apiKey,
      agent.id,
      1,
      validArtifact({ tools: [searchTool({ "/filter/userId": "password" })] }),
    );
    const unknownFact = await api(`/v1/agents/${agent.id}/versions`, {
      method: "POST",
      key: tenant.apiKey,
      body: { draftRevision: facts.revision },
    });
    expect(fieldPaths(await expectError(unknownFact, 400, "bad_request"))).toEqual([
      "tools.0.identity./filter/userId",
    ]);

    const good = await saveDraft(
      tenant.apiKey,
      agent.id,
      facts.revision,
      validArtifact({ tools: [searchTool({ "/filter/userId": "subject", "/scope/tenant": "tenantId" })] }),
    );
    await json(
      await api(`/v1/agents/${agent.id}/versions`, {
        method: "POST",
        key: tenant.apiKey,
        body: { draftRevision: good.revision },
      }),
      201,
      z.object({ version: z.literal(1) }),
    );
  });
});

describe("executeToolCall: redirects, time and size caps", () => {
  it.each([
    ["another host", "https://169.254.169.254/latest/meta-data/"],
    ["another public host", "https://elsewhere.example.net/hook"],
    ["the same host", `${TOOL_URL}/v2`],
  ])("does not follow a redirect to %s", async (_, location) => {
    const net = fakeToolServer(() => new Response(null, { status: 307, headers: { location } }));
    const result = await callTool(net);
    expect(result).toMatchObject({ status: "error", isError: true, httpStatus: 307, attempts: 1 });
    expect(JSON.stringify(result.output)).toContain("redirect");
    expect(net.sent.map((r) => r.url)).toEqual([TOOL_URL]);
    expect(net.sent[0]?.redirect).toBe("manual");
  });

  // The time cap is the runtime's own AbortSignal.timeout, so these two wait a real 150 ms; they assert what the
  // tool saw and what the model is told, never how long it took (that is `npm run bench`'s job).
  it("gives up after the tool's timeout when no answer comes, without a retry", async () => {
    const net = fakeToolServer(never);
    const result = await callTool(net, { tool: tool({ timeoutMs: 150 }) });
    expect(result).toMatchObject({ status: "error", isError: true, attempts: 1 });
    expect(result.output).toEqual({ error: "The tool did not answer within 150 ms." });
    expect(net.sent).toHaveLength(1);
    expect(net.sent[0]?.signal?.reason).toMatchObject({ name: "TimeoutError" });
  });

  it("times out a response whose body never finishes", async () => {
    const net = fakeToolServer(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"partial":'));
            },
          }),
          { headers: { "content-type": "application/json" } },
        ),
    );
    const result = await callTool(net, { tool: tool({ timeoutMs: 150 }) });
    expect(result).toMatchObject({ status: "error", isError: true, httpStatus: 200, attempts: 1 });
    expect(result.output).toEqual({ error: "The tool did not answer within 150 ms." });
    expect(net.sent[0]?.signal?.reason).toMatchObject({ name: "TimeoutError" });
  });

  it("stops when the turn is cancelled, without a retry", async () => {
    const turn = new AbortController();
    // The turn is cancelled once the request is out and the tool holds it open.
    const net = fakeToolServer((signal) => {
      queueMicrotask(() => turn.abort("cancelled"));
      return never(signal);
    });
    const result = await callTool(net, { signal: turn.signal });
    expect(result).toMatchObject({ status: "error", isError: true, attempts: 1 });
    expect(result.output).toEqual({ error: "The tool call was cancelled." });
    expect(net.sent).toHaveLength(1);
    expect(net.sent[0]?.signal?.reason).toBe("cancelled");
  });

  it("refuses a response over 64 KiB, declared or streamed", async () => {
    const big = "x".repeat(MAX_TOOL_RESPONSE_BYTES + 1);
    const declared = fakeToolServer(() => new Response(big, { headers: { "content-type": "text/plain" } }));
    const streamed = fakeToolServer(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            pull(controller) {
              controller.enqueue(new TextEncoder().encode("y".repeat(16 * 1024)));
            },
          }),
          { headers: { "content-type": "text/plain" } },
        ),
    );
    for (const net of [declared, streamed]) {
      const result = await callTool(net);
      expect(result).toMatchObject({ status: "error", isError: true, httpStatus: 200, attempts: 1 });
      expect(JSON.stringify(result.output)).toContain("too large");
    }
    const exact = fakeToolServer(() => new Response("z".repeat(MAX_TOOL_RESPONSE_BYTES)));
    const fits = await callTool(exact);
    expect(fits).toMatchObject({ status: "finished", output: "z".repeat(MAX_TOOL_RESPONSE_BYTES) });
  });
});

describe("executeToolCall: secrets in responses", () => {
  it("redacts the signing secret and listed tenant secrets a tool echoes back", async () => {
    const providerKey = "prov-key-9f8e7d6c5b4a39281706";
    const net = fakeToolServer(() =>
      jsonResponse({
        echoed: SECRET,
        key: SECRET.slice("whsec_".length),
        nested: [{ note: `the key is ${providerKey}` }],
      }),
    );
    const result = await callTool(net, { secrets: [providerKey] });
    expect(result.output).toEqual({
      echoed: REDACTED,
      key: REDACTED,
      nested: [{ note: `the key is ${REDACTED}` }],
    });
    expect(JSON.stringify(result)).not.toContain(providerKey);
    expect(JSON.stringify(result)).not.toContain(SECRET.slice("whsec_".length));
  });
});
