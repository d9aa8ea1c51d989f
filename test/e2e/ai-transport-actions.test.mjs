// The AI SDK transport's approvals and client tools against the Worker in workerd, driven by a real `Chat` (the `ai`
// package's AbstractChat): an approval arrives as an `approval-requested` tool part, `addToolApprovalResponse` (with
// `sendAutomaticallyWhen`) decides it and the run's continuation lands in the same message; a client tool reaches
// `onToolCall`, and `addToolOutput` answers it. The typed client underneath answers client tools on its own and the
// admin client lists and decides a tenant's approvals.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from "ai";
import { request } from "../../scripts/lib/http-client.mjs";
import { importClient, NodeChat, textOf } from "./ai-chat.mjs";
import { API_KEY, BASE_URL, eventually } from "./helpers.mjs";
import { seedAgent } from "./server.mjs";

/** Each part as `type:state` (tool parts) or `text:…`, so a message's shape reads in one line. */
const partsOf = (message) =>
  message.parts.map((part) =>
    "toolCallId" in part
      ? `${part.type}:${part.state}`
      : part.type === "text"
        ? `text:${part.text}`
        : part.type,
  );

describe("AI SDK transport: approvals and client tools", () => {
  let client;
  let dir;
  const agents = {};
  const hook = { calls: [], url: "" };
  const webhook = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      hook.calls.push({ id: req.headers["webhook-id"], body });
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ refunded: true, refundId: "rf_7" }));
    });
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "agent-threads-ai-actions-"));
    client = await importClient(dir);
    await new Promise((resolve) => webhook.listen(0, "127.0.0.1", resolve));
    hook.url = `http://127.0.0.1:${webhook.address().port}/refund`;
    const admin = new client.AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });
    await admin.secrets.put("ai-refund-hook", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    const stamp = Date.now().toString(36);
    const agent = (slug, local, tools) =>
      seedAgent(BASE_URL, API_KEY, {
        slug: `${slug}-${stamp}`,
        visibility: "private",
        local,
        origin: BASE_URL,
        tools,
      });
    agents.refund = await agent(
      "ai-refund",
      { chunks: 4, chunkDelayMs: 10, toolCall: { name: "refund", input: { orderId: "A-7", amount: 30 } } },
      [
        {
          name: "refund",
          description: "Refunds an order.",
          url: hook.url,
          signingSecret: "ai-refund-hook",
          approval: { title: "Refund the order" },
        },
      ],
    );
    agents.three = await agent(
      "ai-refund-three",
      {
        chunks: 4,
        chunkDelayMs: 10,
        toolCalls: ["B-1", "B-2", "B-3"].map((orderId) => ({
          name: "refund",
          input: { orderId, amount: 5 },
        })),
      },
      [
        {
          name: "refund",
          description: "Refunds an order.",
          url: hook.url,
          signingSecret: "ai-refund-hook",
          approval: "always",
        },
      ],
    );
    agents.cart = await agent(
      "ai-cart",
      { chunks: 4, chunkDelayMs: 10, toolCall: { name: "cart", input: { currency: "EUR" } } },
      [{ name: "cart", description: "Reads the visitor's cart on the page.", executor: "client" }],
    );
  });

  after(async () => {
    await new Promise((resolve) => webhook.close(resolve));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A private launch of `agent` for a new subject, and a transport over it. */
  async function transportFor(agent) {
    const subject = `user-${crypto.randomUUID()}`;
    const res = await request(BASE_URL, "POST", "/v1/agent-sessions", {
      token: API_KEY,
      body: { agentId: agent.id, subject },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const launched = res.body;
    const transport = new client.AgentThreadsChatTransport({
      launch: launched,
      backoff: { initialMs: 100, maxMs: 1000 },
    });
    return { transport, launched };
  }

  async function storedBranch(launched) {
    const res = await request(BASE_URL, "GET", `/v1/threads/${launched.threadId}/entries`, {
      token: launched.token,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.items;
  }

  test("approve with addToolApprovalResponse: the tool runs once and the continuation lands in the same message", async () => {
    const { transport, launched } = await transportFor(agents.refund);
    const chat = new NodeChat({
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    try {
      const before = hook.calls.length;
      await chat.sendMessage({ text: "Refund order A-7." });
      assert.equal(chat.status, "ready", String(chat.error));
      const asked = chat.messages.at(-1);
      assert.deepEqual(partsOf(asked), ["step-start", "tool-refund:approval-requested"]);
      const part = asked.parts[1];
      assert.deepEqual(part.input, { orderId: "A-7", amount: 30 });
      assert.equal(part.approval.descriptor.title, "Refund the order");
      assert.equal(hook.calls.length, before, "nothing refunded before the decision");

      await chat.addToolApprovalResponse({ id: part.approval.id, approved: true });
      await eventually(
        () =>
          chat.status === "ready" && /The refund tool returned: .*rf_7/.test(textOf(chat.messages.at(-1))),
        "the continuation",
        { timeout: 15_000, interval: 20 },
      );
      assert.equal(hook.calls.length, before + 1, "the webhook was called once");
      assert.equal(hook.calls.at(-1).id, part.approval.id, "its webhook-id is the approval id");
      assert.deepEqual(
        chat.messages.map((m) => m.role),
        ["user", "assistant"],
      );
      const reply = chat.messages.at(-1);
      assert.deepEqual(partsOf(reply).slice(0, 3), [
        "step-start",
        "tool-refund:approval-responded",
        "step-start",
      ]);
      // The thread holds the same story: request, decision, reply — the message's entry is the stored reply.
      const stored = await storedBranch(launched);
      assert.deepEqual(
        stored.map((e) => e.kind),
        ["message", "approval_request", "approval_decision", "message"],
      );
      assert.equal(stored[2].decision.decision, "approve");
      assert.equal(reply.metadata.entryId, stored[3].id);
      assert.equal(textOf(reply), stored[3].text);
      // The transport loads the branch as the same message.
      const loaded = await transport.loadMessages();
      assert.deepEqual(partsOf(loaded.at(-1)), partsOf(reply));
    } finally {
      await chat.dispose();
    }
  });

  test("deny with a reason: the model hears the denial and the part shows output-denied", async () => {
    const { transport } = await transportFor(agents.refund);
    const chat = new NodeChat({
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    try {
      const before = hook.calls.length;
      await chat.sendMessage({ text: "Refund order A-8." });
      const part = chat.messages.at(-1).parts[1];
      await chat.addToolApprovalResponse({
        id: part.approval.id,
        approved: false,
        reason: "Past the window.",
      });
      await eventually(
        () => chat.status === "ready" && /Past the window/.test(textOf(chat.messages.at(-1))),
        "the continuation after the denial",
        { timeout: 15_000, interval: 20 },
      );
      assert.match(textOf(chat.messages.at(-1)), /"denied":true/);
      assert.deepEqual(partsOf(chat.messages.at(-1)).slice(0, 2), [
        "step-start",
        "tool-refund:output-denied",
      ]);
      assert.equal(hook.calls.length, before, "a denied call never reaches the webhook");
    } finally {
      await chat.dispose();
    }
  });

  test("three approvals in one step, answered one by one: one request with every decision, one continuation", async () => {
    const { transport } = await transportFor(agents.three);
    const chat = new NodeChat({
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    const sent = [];
    const send = transport.connection.decide.bind(transport.connection);
    transport.connection.decide = (...args) => {
      sent.push(args);
      send(...args);
    };
    try {
      const before = hook.calls.length;
      await chat.sendMessage({ text: "Refund all three." });
      const parts = chat.messages.at(-1).parts.filter((p) => "toolCallId" in p);
      assert.deepEqual(
        parts.map((p) => [p.state, p.input.orderId]),
        [
          ["approval-requested", "B-1"],
          ["approval-requested", "B-2"],
          ["approval-requested", "B-3"],
        ],
      );
      await chat.addToolApprovalResponse({ id: parts[0].approval.id, approved: true });
      await chat.addToolApprovalResponse({ id: parts[1].approval.id, approved: false, reason: "Duplicate." });
      assert.equal(sent.length, 0, "nothing is sent while a call of the step waits for its answer");
      await chat.addToolApprovalResponse({ id: parts[2].approval.id, approved: true });
      await eventually(
        () => chat.status === "ready" && /Duplicate/.test(textOf(chat.messages.at(-1))),
        "the one continuation",
        { timeout: 15_000, interval: 20 },
      );
      assert.deepEqual(
        sent.map(([id, decision]) => [id, decision]),
        [
          [parts[0].approval.id, "approve"],
          [parts[1].approval.id, "deny"],
          [parts[2].approval.id, "approve"],
        ],
      );
      const text = textOf(chat.messages.at(-1));
      assert.equal(text.match(/rf_7/g)?.length, 2, text);
      assert.equal(hook.calls.length, before + 2, "the two approved calls ran, once each");
      assert.deepEqual(
        partsOf(chat.messages.at(-1)).filter((p) => p.startsWith("tool-")),
        ["tool-refund:approval-responded", "tool-refund:output-denied", "tool-refund:approval-responded"],
      );
      assert.deepEqual(
        chat.messages.map((m) => m.role),
        ["user", "assistant"],
      );
    } finally {
      await chat.dispose();
    }
  });

  test("a client tool: onToolCall runs once, addToolOutput's output reaches the model, the reply goes on", async () => {
    const { transport } = await transportFor(agents.cart);
    const calls = [];
    const chat = new NodeChat({
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall: ({ toolCall }) => {
        calls.push(toolCall);
        void chat.addToolOutput({
          tool: toolCall.toolName,
          toolCallId: toolCall.toolCallId,
          output: { items: 2 },
        });
      },
    });
    try {
      await chat.sendMessage({ text: "What is in my cart?" });
      await eventually(
        () => chat.status === "ready" && textOf(chat.messages.at(-1)).includes("The cart tool returned:"),
        "the continuation",
        { timeout: 15_000, interval: 20 },
      );
      assert.equal(calls.length, 1);
      assert.equal(calls[0].toolName, "cart");
      assert.deepEqual(calls[0].input, { currency: "EUR" });
      const reply = chat.messages.at(-1);
      assert.match(textOf(reply), /The cart tool returned: \{"items":2\}/);
      assert.deepEqual(partsOf(reply).slice(0, 3), [
        "step-start",
        "tool-cart:output-available",
        "step-start",
      ]);
      assert.equal(reply.metadata.status, "complete");
      assert.deepEqual(
        chat.messages.map((m) => m.role),
        ["user", "assistant"],
      );
    } finally {
      await chat.dispose();
    }
  });

  test("the typed client: onToolRequest answers a client tool; the tenant lists and decides an approval", async () => {
    // A client tool answered by the connection's handler, with no chat at all.
    const cart = await transportFor(agents.cart);
    const connection = cart.transport.connection;
    const requests = [];
    connection.onToolRequest((request) => {
      requests.push(request);
      return { items: 5 };
    });
    const replies = [];
    connection.on("entry", (frame) => {
      if (frame.entry.role === "assistant") replies.push(frame.entry.text);
    });
    await connection.connect();
    connection.send({ text: "Count my cart." });
    await eventually(() => replies.length === 1, "the reply after the tool's answer", {
      timeout: 15_000,
      interval: 20,
    });
    assert.match(replies[0], /The cart tool returned: \{"items":5\}/);
    assert.equal(requests.length, 1);
    assert.deepEqual(requests[0].input, { currency: "EUR" });
    cart.transport.close();

    // An approval the thread's page leaves to the tenant: listed by the admin client, decided through it.
    const refund = await transportFor(agents.refund);
    const page = refund.transport.connection;
    const asked = [];
    page.onApprovalRequest((approval) => asked.push(approval));
    const done = [];
    page.on("run", (frame) => {
      if (frame.status === "succeeded") done.push(frame.runId);
    });
    await page.connect();
    page.send({ text: "Refund order A-9." });
    await eventually(() => asked.length === 1, "the approval request", { timeout: 15_000, interval: 20 });
    assert.equal(asked[0].name, "refund");
    assert.deepEqual(
      page.pendingApprovals.map((a) => a.approvalId),
      [asked[0].approvalId],
    );
    const admin = new client.AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });
    const listed = await eventually(
      async () => {
        const listing = await admin.approvals.list({ status: "pending", agentId: agents.refund.id });
        return listing.items.find((a) => a.id === asked[0].approvalId);
      },
      "the approval in the tenant's list",
      { timeout: 15_000, interval: 200 },
    );
    assert.equal(listed.threadId, refund.launched.threadId);
    const decided = await admin.sessions.decide(refund.launched.threadId, asked[0].approvalId, {
      decision: "approve",
    });
    assert.equal(decided.approval.status, "approved");
    assert.equal(decided.approval.decidedBy, "tenant");
    await eventually(() => done.length === 1, "the run's end", { timeout: 15_000, interval: 20 });
    assert.deepEqual(page.pendingApprovals, []);
    refund.transport.close();
  });
});
