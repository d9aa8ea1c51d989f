// The typed client's approvals and client tools over a fake socket: a `tool_request` is answered with the handler's
// output or error, once however often a reconnect replays it; approvals are announced once and decided by frame.
import { describe, expect, it } from "vitest";
import { AdminClient, ThreadConnection } from "../../src/client/index";
import type { JsonObject, ServerFrame } from "../../src/shared/protocol";
import { fakeLaunch, fakeSockets } from "../helpers/fake-socket";
import { waitFor } from "../helpers/wait-for";

const expiresAt = "2030-01-01T00:00:00.000Z";

function toolRequest(toolCallId: string, input: JsonObject = {}, runId = "run_1"): ServerFrame {
  return { type: "tool_request", runId, toolCallId, name: "getLocation", input, expiresAt };
}

const action = (approvalId: string, toolCallId: string) => ({
  approvalId,
  toolCallId,
  name: "refund",
  input: { amount: 40 },
  by: "any" as const,
  expiresAt,
});

async function connected() {
  const fake = fakeSockets();
  const connection = new ThreadConnection({
    launch: fakeLaunch,
    WebSocket: fake.WebSocket,
    backoff: { initialMs: 1, maxMs: 1 },
  });
  const ready = connection.connect();
  fake.last().accept();
  await ready;
  return { connection, fake };
}

describe("client tools on the thread connection", () => {
  it("answers a tool_request with what the handler returned, and a thrown error with its message", async () => {
    const { connection, fake } = await connected();
    const seen: unknown[] = [];
    connection.onToolRequest(async (request) => {
      seen.push(request);
      if (request.input.fail === true) throw new Error("No GPS fix.");
      return { city: "Lisbon" };
    });
    const socket = fake.last();
    socket.frame(toolRequest("call_ok"));
    socket.frame(toolRequest("call_bad", { fail: true }));
    const results = await waitFor(
      () => socket.sentOf("tool_result"),
      (sent) => sent.length === 2,
      { what: "two tool results" },
    );
    expect(results).toEqual([
      { type: "tool_result", toolCallId: "call_ok", output: { city: "Lisbon" } },
      { type: "tool_result", toolCallId: "call_bad", error: "No GPS fix." },
    ]);
    expect(seen).toEqual([
      { runId: "run_1", toolCallId: "call_ok", name: "getLocation", input: {}, expiresAt },
      { runId: "run_1", toolCallId: "call_bad", name: "getLocation", input: { fail: true }, expiresAt },
    ]);
    connection.close();
  });

  it("runs a call replayed after a reconnect only once, and sends an answer made while offline after ready", async () => {
    const { connection, fake } = await connected();
    let calls = 0;
    let release: (value: unknown) => void = () => {};
    connection.onToolRequest(() => {
      calls += 1;
      return new Promise((resolve) => {
        release = resolve;
      });
    });
    const first = fake.last();
    first.frame({ type: "run", runId: "run_1", status: "running" });
    first.frame(toolRequest("call_1"));
    first.frame({ type: "run", runId: "run_1", status: "requires_action", actions: [] });
    expect(calls).toBe(1);
    first.drop();
    release("answered offline");
    const second = await waitFor(
      () => fake.sockets.length,
      (n) => n === 2,
      { what: "a reconnect" },
    ).then(() => fake.last());
    second.accept();
    // The server replays the pending call after hello; the handler is not run again.
    second.frame({ type: "run", runId: "run_1", status: "requires_action", actions: [] });
    second.frame(toolRequest("call_1"));
    expect(calls).toBe(1);
    expect(first.sentOf("tool_result")).toEqual([]);
    await waitFor(
      () => second.sentOf("tool_result"),
      (sent) => sent.length > 0,
      { what: "the answer on the new socket" },
    );
    expect(calls).toBe(1);
    expect(second.sentOf("tool_result")).toEqual([
      { type: "tool_result", toolCallId: "call_1", output: "answered offline" },
    ]);
    // The reconnect resumed the parked run: it is still live.
    expect(second.sentOf("hello")[0]?.resume).toEqual({ runId: "run_1", afterSeq: 0 });
    connection.close();
  });

  it("runs calls already pending when the handler is registered, and the same call id of another run too", async () => {
    const { connection, fake } = await connected();
    const socket = fake.last();
    socket.frame(toolRequest("call_same", {}, "run_1"));
    expect(connection.pendingToolRequests.map((r) => r.toolCallId)).toEqual(["call_same"]);
    const runs: string[] = [];
    connection.onToolRequest((request) => {
      runs.push(request.runId);
      return undefined;
    });
    socket.frame({ type: "run", runId: "run_1", status: "succeeded" });
    socket.frame(toolRequest("call_same", {}, "run_2"));
    await waitFor(
      () => socket.sentOf("tool_result"),
      (sent) => sent.length === 2,
      { what: "two answers" },
    );
    expect(runs).toEqual(["run_1", "run_2"]);
    // A handler's `undefined` travels as null: a tool_result always carries output or error.
    expect(socket.sentOf("tool_result")[0]).toEqual({
      type: "tool_result",
      toolCallId: "call_same",
      output: null,
    });
    expect(connection.pendingToolRequests).toEqual([]);
    connection.close();
  });

  it("answers by hand once with sendToolResult", async () => {
    const { connection, fake } = await connected();
    const socket = fake.last();
    socket.frame(toolRequest("call_1"));
    expect(connection.sendToolResult("call_1", { error: "The user closed the picker." })).toBe(true);
    expect(connection.sendToolResult("call_1", { output: 1 })).toBe(false);
    expect(socket.sentOf("tool_result")).toEqual([
      { type: "tool_result", toolCallId: "call_1", error: "The user closed the picker." },
    ]);
    connection.close();
  });
});

describe("approvals on the thread connection", () => {
  it("announces each approval once, replays included, and decides it with approve and deny", async () => {
    const { connection, fake } = await connected();
    const announced: string[] = [];
    connection.onApprovalRequest((request) => announced.push(`${request.runId}/${request.approvalId}`));
    const socket = fake.last();
    socket.frame({ type: "run", runId: "run_1", status: "running" });
    socket.frame({
      type: "run",
      runId: "run_1",
      status: "requires_action",
      actions: [action("apr_1", "call_1"), action("apr_2", "call_2")],
    });
    socket.frame({
      type: "run",
      runId: "run_1",
      status: "requires_action",
      actions: [action("apr_1", "call_1"), action("apr_2", "call_2")],
    });
    expect(announced).toEqual(["run_1/apr_1", "run_1/apr_2"]);
    expect(connection.pendingApprovals.map((a) => a.approvalId)).toEqual(["apr_1", "apr_2"]);

    connection.approve("apr_1");
    connection.deny("apr_2", "Too much.");
    expect(socket.sentOf("approval")).toEqual([
      { type: "approval", approvalId: "apr_1", decision: "approve" },
      { type: "approval", approvalId: "apr_2", decision: "deny", reason: "Too much." },
    ]);
    socket.frame({
      type: "entry",
      entry: {
        id: "e_1",
        parentId: null,
        kind: "approval_decision",
        role: null,
        runId: "run_1",
        text: "",
        decision: { approvalId: "apr_1", decision: "approve", by: "user", reason: null },
        createdAt: expiresAt,
      },
    });
    expect(connection.pendingApprovals.map((a) => a.approvalId)).toEqual(["apr_2"]);
    socket.frame({ type: "run", runId: "run_1", status: "running" });
    expect(connection.pendingApprovals).toEqual([]);

    // A listener added later hears of what is pending at once.
    socket.frame({
      type: "run",
      runId: "run_1",
      status: "requires_action",
      actions: [action("apr_3", "call_3")],
    });
    const late: string[] = [];
    connection.onApprovalRequest((request) => late.push(request.approvalId));
    expect(late).toEqual(["apr_3"]);
    connection.close();
  });
});

describe("approvals in the admin client", () => {
  it("lists approvals and decides one as the tenant, on the documented routes", async () => {
    const requests: { method: string; url: string; body: unknown; auth: string | null }[] = [];
    const fetch = async (input: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      requests.push({
        method: init?.method ?? "GET",
        url: String(input),
        body: init?.body === undefined ? undefined : JSON.parse(String(init.body)),
        auth: headers.get("Authorization"),
      });
      return Response.json(init?.method === "POST" ? { approval: { id: "apr_1" } } : { items: [] });
    };
    const admin = new AdminClient({ baseUrl: "http://api.test", apiKey: "sk_test", fetch });
    await admin.approvals.list({ status: "pending", agentId: "agt_1" });
    const decided = await admin.sessions.decide("thr_1", "apr_1", { decision: "deny", reason: "Not today." });
    expect(decided.approval.id).toBe("apr_1");
    expect(requests).toEqual([
      {
        method: "GET",
        url: "http://api.test/v1/approvals?status=pending&agentId=agt_1",
        body: undefined,
        auth: "Bearer sk_test",
      },
      {
        method: "POST",
        url: "http://api.test/v1/sessions/thr_1/approvals/apr_1",
        body: { decision: "deny", reason: "Not today." },
        auth: "Bearer sk_test",
      },
    ]);
  });
});
