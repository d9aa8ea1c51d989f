// Runs that wait for a person (docs/tools.md#approvals, #client-tools): an approval decided by the socket, by the
// thread's HTTP route or by the tenant, exactly once; a client tool answered by the page; a waiting run that survives
// its object's eviction and goes on once; denials and answers reach the model as tool results.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ThreadAgent } from "../../src/objects/thread-agent";
import type { WireEntry } from "../../src/shared/protocol";
import { purgeText } from "../../src/storage/thread/zero-retention";
import { jsonResponse } from "../helpers/fake-tool-server";
import { threadStub } from "../helpers/projection";
import { api } from "../helpers/tenants";
import { clientMessageId, connect, type LiveAgent, launch, liveAgent, ORIGIN } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const REFUND_URL = "https://hooks.example.com/refund";
const LOOKUP_URL = "https://hooks.example.com/lookup";
const SIGNING_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

afterEach(() => {
  vi.restoreAllMocks();
});

async function agentWith(
  tool: Record<string, unknown>,
  call: { name: string; input: unknown },
): Promise<LiveAgent> {
  const agent = await liveAgent({
    artifact: {
      model: { provider: "local", model: "echo", local: { toolCall: call } },
      tools: [tool],
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

const refundTool = (approval: unknown) => ({
  name: "refund",
  description: "Refunds an order.",
  url: REFUND_URL,
  signingSecret: "hook-signing",
  approval,
});

/** The tenant's decision over `POST /v1/sessions/:threadId/approvals/:approvalId`. */
function tenantDecides(agent: LiveAgent, threadId: string, approvalId: string, decision: "approve" | "deny") {
  return api(`/v1/sessions/${threadId}/approvals/${approvalId}`, {
    method: "POST",
    key: agent.apiKey,
    body: { decision },
  });
}

/** The refund webhook, every delivery's `webhook-id` recorded. */
function refundEndpoint() {
  const deliveries: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    if (request.url !== REFUND_URL) throw new Error(`unexpected outbound request to ${request.url}`);
    deliveries.push(request.headers.get("webhook-id") ?? "");
    return jsonResponse({ refunded: true });
  });
  return deliveries;
}

describe("approvals", () => {
  it("waits for the user's decision on the socket, then runs the tool once with the approval's id and goes on", async () => {
    const agent = await agentWith(refundTool("always"), { name: "refund", input: { orderId: "A1" } });
    const deliveries = refundEndpoint();
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "refund A1" });

    const waiting = await socket.next("run", (f) => f.status === "requires_action");
    expect(waiting.actions).toHaveLength(1);
    const action = waiting.actions![0]!;
    expect(action).toMatchObject({ name: "refund", input: { orderId: "A1" }, by: "any" });
    const request = await socket.next("entry", (f) => f.entry.kind === "approval_request");
    expect(request.entry.approval?.approvalId).toBe(action.approvalId);
    expect(deliveries).toEqual([]);

    socket.send({ type: "approval", approvalId: action.approvalId, decision: "approve" });
    const decided = await socket.next("entry", (f) => f.entry.kind === "approval_decision");
    expect(decided.entry.decision).toMatchObject({ decision: "approve", by: "user" });
    const done = await socket.next("run", (f) => f.status === "succeeded");
    const reply = await socket.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.text).toContain('"refunded":true');
    expect(reply.entry.parentId).toBe(decided.entry.id);
    expect(done.runId).toBe(waiting.runId);
    expect(deliveries).toEqual([action.approvalId]);

    // A second decision is refused, and nothing runs again.
    socket.send({ type: "approval", approvalId: action.approvalId, decision: "deny" });
    const refused = await socket.next("error");
    expect(refused).toMatchObject({ code: "conflict", reason: "already_decided" });
    expect(deliveries).toHaveLength(1);
    socket.ws.close();
  });

  it("takes a denial over HTTP: the model is told, the tool never runs; a second decision is 409, a foreign id 404", async () => {
    const agent = await agentWith(refundTool("always"), { name: "refund", input: { orderId: "B2" } });
    const deliveries = refundEndpoint();
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "refund B2" });
    const waiting = await socket.next("run", (f) => f.status === "requires_action");
    const approvalId = waiting.actions![0]!.approvalId;

    const url = `/v1/threads/${session.threadId}/approvals/${approvalId}`;
    const headers = { Authorization: `Bearer ${session.token}`, Origin: ORIGIN };
    const malformed = await api(url, { method: "POST", headers, body: { decision: "maybe" } });
    expect(malformed.status).toBe(400);
    const denied = await api(url, {
      method: "POST",
      headers,
      body: { decision: "deny", reason: "not eligible" },
    });
    expect(denied.status).toBe(200);
    expect(await denied.json()).toMatchObject({
      approval: { id: approvalId, status: "denied", decidedBy: "user" },
    });
    const again = await api(url, { method: "POST", headers, body: { decision: "approve" } });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { code: "conflict", reason: "already_decided" } });
    const unknown = await api(`/v1/threads/${session.threadId}/approvals/apr_unknown`, {
      method: "POST",
      headers,
      body: { decision: "approve" },
    });
    expect(unknown.status).toBe(404);

    const reply = await socket.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.text).toContain('"denied":true');
    expect(reply.entry.text).toContain("not eligible");
    expect(deliveries).toEqual([]);
    socket.ws.close();
  });

  it("keeps a waiting run through an eviction; the tenant's decision wakes the object and the run goes on once", async () => {
    const agent = await agentWith(refundTool({ by: "tenant" }), { name: "refund", input: { orderId: "C3" } });
    const deliveries = refundEndpoint();
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "refund C3" });
    const waiting = await socket.next("run", (f) => f.status === "requires_action");
    const approvalId = waiting.actions![0]!.approvalId;
    expect(waiting.actions![0]!.by).toBe("tenant");

    // The user may not decide what only the tenant may.
    const byUser = await api(`/v1/threads/${session.threadId}/approvals/${approvalId}`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      body: { decision: "approve" },
    });
    expect(byUser.status).toBe(403);

    socket.ws.close();
    await evictDurableObject(await threadStub(agent, session.threadId));

    const decided = await tenantDecides(agent, session.threadId, approvalId, "approve");
    expect(decided.status).toBe(200);
    expect(await decided.json()).toMatchObject({ approval: { status: "approved", decidedBy: "tenant" } });

    const reconnected = await connect(session);
    const entries = async () => {
      const page = await api(`/v1/threads/${session.threadId}/entries`, {
        headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      });
      return ((await page.json()) as { items: { kind: string; role: string | null; text: string }[] }).items;
    };
    let items = await entries();
    for (let i = 0; i < 100 && !items.some((e) => e.role === "assistant"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      items = await entries();
    }
    expect(items.map((e) => e.kind)).toEqual(["message", "approval_request", "approval_decision", "message"]);
    expect(items.at(-1)?.text).toContain('"refunded":true');
    expect(deliveries).toEqual([approvalId]);
    reconnected.ws.close();
  });
});

describe("approvals of one step", () => {
  it("lists a step's waiting calls in the order the model made them", async () => {
    const orders = ["O1", "O2", "O3", "O4", "O5", "O6", "O7", "O8"];
    const agent = await liveAgent({
      artifact: {
        model: {
          provider: "local",
          model: "echo",
          local: { toolCalls: orders.map((orderId) => ({ name: "refund", input: { orderId } })) },
        },
        tools: [refundTool("always")],
      },
    });
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "refund them all" });
    const waiting = await socket.next("run", (f) => f.status === "requires_action");
    expect(waiting.actions!.map((a) => a.input.orderId)).toEqual(orders);
    socket.ws.close();

    // A socket saying hello later is told the same order.
    const later = await connect(session);
    const replayed = await later.next("run", (f) => f.status === "requires_action");
    expect(replayed.actions!.map((a) => a.input.orderId)).toEqual(orders);
    later.ws.close();
  });
});

describe("client tools", () => {
  it("asks every socket, takes the first answer, refuses a second, and the model gets the answer", async () => {
    const agent = await agentWith(
      { name: "pick_color", description: "Asks the page for a colour.", executor: "client" },
      { name: "pick_color", input: { palette: "warm" } },
    );
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "pick one" });
    const asked = await socket.next("tool_request");
    expect(asked).toMatchObject({ name: "pick_color", input: { palette: "warm" } });
    await socket.next("run", (f) => f.status === "requires_action");

    // A second socket saying hello is asked again.
    const other = await connect(session);
    const replayed = await other.next("tool_request");
    expect(replayed.toolCallId).toBe(asked.toolCallId);

    socket.send({ type: "tool_result", toolCallId: "call_unknown", output: {} });
    expect(await socket.next("error")).toMatchObject({ code: "bad_request" });
    socket.send({ type: "tool_result", toolCallId: asked.toolCallId, output: { color: "amber" } });
    const reply = await socket.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.text).toContain('"color":"amber"');

    other.send({ type: "tool_result", toolCallId: asked.toolCallId, output: { color: "teal" } });
    expect(await other.next("error", (f) => f.code !== "bad_request")).toMatchObject({ code: "conflict" });
    socket.ws.close();
    other.ws.close();
  });
});

/** The object's alarm for expired actions, run now. */
async function expireNow(agent: LiveAgent, threadId: string): Promise<void> {
  const stub = await threadStub(agent, threadId);
  await runInDurableObject(stub, (instance: ThreadAgent) => instance.expireActions());
}

async function parkedSession(agent: LiveAgent, text: string) {
  const session = await launch(agent.publicKey);
  const socket = await connect(session);
  socket.send({ type: "send", clientMessageId: clientMessageId(), text });
  const waiting = await socket.next("run", (f) => f.status === "requires_action");
  return { session, socket, waiting };
}

describe("a waiting run ends", () => {
  it("on cancel: its approval is cancelled by the system, and a later decision is refused", async () => {
    const agent = await agentWith(refundTool("always"), { name: "refund", input: { orderId: "D4" } });
    const deliveries = refundEndpoint();
    const { session, socket, waiting } = await parkedSession(agent, "refund D4");
    const approvalId = waiting.actions![0]!.approvalId;

    socket.send({ type: "cancel", runId: waiting.runId });
    const cancelled = await socket.next("entry", (f) => f.entry.kind === "approval_decision");
    expect(cancelled.entry.decision).toMatchObject({ decision: "deny", by: "system", reason: "cancelled" });
    expect(
      await socket.next("run", (f) => f.runId === waiting.runId && f.status === "aborted"),
    ).toMatchObject({
      reason: "cancelled",
    });
    const late = await tenantDecides(agent, session.threadId, approvalId, "approve");
    expect(late.status).toBe(409);
    expect(deliveries).toEqual([]);
    socket.ws.close();
  });

  it("when a send interrupts it: the pending approval is cancelled and the new turn runs", async () => {
    const agent = await agentWith(refundTool({ when: [{ pointer: "/orderId", op: "eq", value: "E5" }] }), {
      name: "refund",
      input: { orderId: "E5" },
    });
    refundEndpoint();
    const { socket, waiting } = await parkedSession(agent, "refund E5");
    socket.send({
      type: "send",
      clientMessageId: clientMessageId(),
      text: "never mind",
      multitask: "interrupt",
    });
    expect(
      await socket.next("run", (f) => f.runId === waiting.runId && f.status === "aborted"),
    ).toMatchObject({
      reason: "interrupted",
    });
    const decided = await socket.next("entry", (f) => f.entry.kind === "approval_decision");
    expect(decided.entry.decision).toMatchObject({ by: "system", reason: "interrupted" });
    // The next turn asks again (the local model calls its tool on every turn) and waits in its turn.
    const next = await socket.next("run", (f) => f.runId !== waiting.runId && f.status === "requires_action");
    expect(next.actions).toHaveLength(1);
    socket.ws.close();
  });

  it("when the tenant starts a handoff: its approvals are cancelled", async () => {
    const agent = await agentWith(refundTool("always"), { name: "refund", input: { orderId: "F6" } });
    refundEndpoint();
    const { session, socket, waiting } = await parkedSession(agent, "refund F6");
    const started = await api(`/v1/sessions/${session.threadId}/handoff`, {
      method: "POST",
      key: agent.apiKey,
      body: { action: "start" },
    });
    expect(started.status).toBe(200);
    expect(
      await socket.next("run", (f) => f.runId === waiting.runId && f.status === "aborted"),
    ).toMatchObject({
      reason: "handoff",
    });
    const decided = await socket.next("entry", (f) => f.entry.kind === "approval_decision");
    expect(decided.entry.decision).toMatchObject({ by: "system", reason: "handoff" });
    socket.ws.close();
  });

  it("refuses the tenant's decision on an approval only the user may decide", async () => {
    const agent = await agentWith(refundTool({ by: "user" }), { name: "refund", input: { orderId: "G7" } });
    refundEndpoint();
    const { session, socket, waiting } = await parkedSession(agent, "refund G7");
    const byTenant = await tenantDecides(agent, session.threadId, waiting.actions![0]!.approvalId, "approve");
    expect(byTenant.status).toBe(403);
    socket.ws.close();
  });
});

describe("timeouts", () => {
  it("gives the model {error: timeout} when no client answers in time", async () => {
    const agent = await agentWith(
      { name: "pick_color", description: "Asks the page.", executor: "client", timeoutMs: 1000 },
      { name: "pick_color", input: {} },
    );
    const { session, socket } = await parkedSession(agent, "pick");
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await expireNow(agent, session.threadId);
    const reply = await socket.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.text).toContain('"error":"timeout"');
    socket.ws.close();
  });

  it("denies an approval past its time: the decision says timeout, and a late decision is 409 expired", async () => {
    const agent = await agentWith(refundTool({ timeoutMs: 10_000 }), {
      name: "refund",
      input: { orderId: "H8" },
    });
    const deliveries = refundEndpoint();
    const { session, socket, waiting } = await parkedSession(agent, "refund H8");
    await new Promise((resolve) => setTimeout(resolve, 10_100));
    const late = await tenantDecides(agent, session.threadId, waiting.actions![0]!.approvalId, "approve");
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ error: { code: "conflict", reason: "expired" } });
    const decided = await socket.next("entry", (f) => f.entry.kind === "approval_decision");
    expect(decided.entry.decision).toMatchObject({ decision: "deny", by: "timeout" });
    const reply = await socket.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.text).toContain('"denied":true');
    expect(deliveries).toEqual([]);
    socket.ws.close();
  }, 20_000);

  it("hands the thread to a person when an approval with onTimeout handoff runs out of time", async () => {
    const agent = await agentWith(refundTool({ timeoutMs: 10_000, onTimeout: "handoff" }), {
      name: "refund",
      input: { orderId: "J1" },
    });
    const deliveries = refundEndpoint();
    const { session, socket, waiting } = await parkedSession(agent, "refund J1");
    await new Promise((resolve) => setTimeout(resolve, 10_100));
    // A decision that comes too late finds the timeout applied first, its handoff included.
    const late = await tenantDecides(agent, session.threadId, waiting.actions![0]!.approvalId, "approve");
    expect(late.status).toBe(409);
    const decided = await socket.next("entry", (f) => f.entry.kind === "approval_decision");
    expect(decided.entry.decision).toMatchObject({ decision: "deny", by: "timeout" });
    await socket.next("run", (f) => f.status === "succeeded");
    expect(await socket.next("mode")).toMatchObject({ mode: "handoff" });
    expect(deliveries).toEqual([]);
    socket.ws.close();
  }, 20_000);

  it("refuses a client answer that fails the tool's outputSchema, and the model is told", async () => {
    const agent = await agentWith(
      {
        name: "pick_date",
        description: "Asks the page for a date.",
        executor: "client",
        outputSchema: { type: "object", properties: { date: { type: "string" } }, required: ["date"] },
      },
      { name: "pick_date", input: {} },
    );
    const { session, socket } = await parkedSession(agent, "when");
    const asked = await socket.next("tool_request");
    const refused = await api(`/v1/threads/${session.threadId}/tool-results`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      body: { toolCallId: asked.toolCallId, output: { date: 7 } },
    });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { error: { details: { issues: { path: string }[] } } };
    expect(body.error.details.issues[0]?.path).toContain("date");
    const reply = await socket.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.text).toContain("refused");
    socket.ws.close();
  });
});

describe("zero retention", () => {
  it("blanks a settled approval's input with the thread's text, and keeps who decided what", async () => {
    const agent = await agentWith(refundTool("always"), { name: "refund", input: { orderId: "Z9" } });
    refundEndpoint();
    const { session, socket, waiting } = await parkedSession(agent, "refund Z9");
    socket.send({ type: "approval", approvalId: waiting.actions![0]!.approvalId, decision: "approve" });
    await socket.next("entry", (f) => f.entry.role === "assistant");
    socket.ws.close();

    const stub = await threadStub(agent, session.threadId);
    await runInDurableObject(stub, (_instance, state) => purgeText(state.storage));
    const page = await api(`/v1/threads/${session.threadId}/entries`, {
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
    });
    const items = ((await page.json()) as { items: WireEntry[] }).items;
    const request = items.find((e) => e.kind === "approval_request");
    expect(request).toMatchObject({ purged: true, approval: { name: "refund", input: {} } });
    expect(items.find((e) => e.kind === "approval_decision")).toMatchObject({
      purged: true,
      decision: { decision: "approve", by: "user" },
    });
    expect(JSON.stringify(items)).not.toContain("Z9");
  });
});

describe("a waiting run seen again", () => {
  it("is told again to a socket resuming it, and answered by the JSON message route as requires_action", async () => {
    const agent = await agentWith(refundTool("always"), { name: "refund", input: { orderId: "K2" } });
    refundEndpoint();
    const session = await launch(agent.publicKey);
    const posted = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      body: { clientMessageId: clientMessageId(), text: "refund K2" },
    });
    expect(posted.status).toBe(201);
    const reply = (await posted.json()) as { run: { id: string; status: string } };
    expect(reply.run.status).toBe("requires_action");

    const resumed = await connect(session, { resume: { runId: reply.run.id, afterSeq: 0 } });
    const waiting = await resumed.next("run", (f) => f.status === "requires_action");
    expect(waiting.runId).toBe(reply.run.id);
    expect(waiting.actions?.[0]).toMatchObject({ name: "refund", input: { orderId: "K2" } });
    // Told once, not once for the resume and again for the waiting run.
    expect(resumed.all("run").filter((f) => f.status === "requires_action")).toHaveLength(1);
    resumed.send({ type: "approval", approvalId: waiting.actions![0]!.approvalId, decision: "approve" });
    expect((await resumed.next("run", (f) => f.status === "succeeded")).runId).toBe(reply.run.id);
    resumed.ws.close();
  });
});

describe("a run that ends before it waits", () => {
  it("cancels the approvals it asked for in the step that never finished", async () => {
    const agent = await liveAgent({
      artifact: {
        model: {
          provider: "local",
          model: "echo",
          local: {
            toolCalls: [
              { name: "refund", input: { orderId: "L3" } },
              { name: "lookup", input: { orderId: "L3" } },
            ],
          },
        },
        tools: [
          refundTool("always"),
          { name: "lookup", description: "Looks slowly.", url: LOOKUP_URL, signingSecret: "hook-signing" },
        ],
      },
    });
    const put = await api("/v1/secrets/hook-signing", {
      method: "PUT",
      key: agent.apiKey,
      body: { value: SIGNING_SECRET },
    });
    expect(put.status).toBe(204);
    let lookupStarted = false;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const request = new Request(input, init);
      if (request.url !== LOOKUP_URL) throw new Error(`unexpected outbound request to ${request.url}`);
      lookupStarted = true;
      // The lookup never answers: only the run's cancel ends it.
      return new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener("abort", () => reject(init.signal?.reason), { once: true });
      });
    });
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "refund and look" });
    const asked = await socket.next("entry", (f) => f.entry.kind === "approval_request");
    await waitFor(
      async () => lookupStarted,
      (started) => started,
      { what: "the lookup call" },
    );
    socket.send({ type: "cancel", runId: asked.entry.runId! });
    const ended = await socket.next("run", (f) => f.status === "aborted");
    expect(ended.reason).toBe("cancelled");
    const decided = await socket.next("entry", (f) => f.entry.kind === "approval_decision");
    expect(decided.entry.decision).toMatchObject({ decision: "deny", by: "system", reason: "cancelled" });
    const late = await tenantDecides(agent, session.threadId, asked.entry.approval!.approvalId, "approve");
    expect(late.status).toBe(409);
    socket.ws.close();
  });
});
