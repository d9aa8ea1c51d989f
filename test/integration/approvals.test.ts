// Runs that wait for a person (docs/tools.md#approvals, #client-tools): an approval decided by the socket, by the
// thread's HTTP route or by the tenant, exactly once; a client tool answered by the page; a waiting run that survives
// its object's eviction and goes on once; denials and answers reach the model as tool results.
import { evictDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { jsonResponse } from "../helpers/fake-tool-server";
import { threadStub } from "../helpers/projection";
import { api } from "../helpers/tenants";
import { clientMessageId, connect, type LiveAgent, launch, liveAgent, ORIGIN } from "../helpers/threads";

const REFUND_URL = "https://hooks.example.com/refund";
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

    const decided = await api(`/v1/sessions/${session.threadId}/approvals/${approvalId}`, {
      method: "POST",
      key: agent.apiKey,
      body: { decision: "approve" },
    });
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
