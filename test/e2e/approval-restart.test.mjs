// A run waiting for an approval survives a redeploy (docs/tools.md#approvals): on a `wrangler dev` of its own, a run
// parks, the server is stopped and started again on the same state, and the decision then wakes the thread, runs the
// tool exactly once with the approval's id as its `webhook-id`, and the reply arrives.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import { AdminClient } from "agent-threads/client";
import { request } from "../../scripts/lib/http-client.mjs";
import { eventually } from "./helpers.mjs";
import { startServer } from "./server.mjs";

/** A local tool server answering every POST with a refund; records each call's `webhook-id`. */
async function startToolServer() {
  const received = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push(req.headers["webhook-id"]);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ refunded: true }));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** A private agent whose every turn calls `refund`, a tool that waits for anyone's approval. */
async function seedRefundAgent(admin, toolUrl) {
  const alias = "refund-tool";
  await admin.secrets.put(alias, `whsec_${randomBytes(32).toString("base64")}`);
  const agent = await admin.agents.create({
    slug: "refunds-restart",
    name: "Refund desk",
    visibility: "private",
    allowedOrigins: [],
  });
  const draft = await admin.drafts.put(
    agent.id,
    {
      schemaVersion: 1,
      name: "Refund desk",
      instructions: "Refund orders.",
      model: {
        provider: "local",
        model: "echo",
        local: { chunks: 2, toolCall: { name: "refund", input: { orderId: "77" } } },
      },
      tools: [
        {
          name: "refund",
          description: "Refunds an order.",
          url: `${toolUrl}/refund`,
          signingSecret: alias,
          inputSchema: { type: "object", properties: { orderId: { type: "string" } } },
          approval: "always",
        },
      ],
    },
    0,
  );
  const version = await admin.versions.publish(agent.id, draft.revision);
  const release = await admin.releases.create(agent.id, {
    environment: "development",
    allocations: [{ version: version.version, weight: 10_000 }],
  });
  await admin.releases.activate(agent.id, release.id);
  return agent;
}

describe("approvals across a restart of wrangler dev", () => {
  let server;
  let tools;

  before(async () => {
    tools = await startToolServer();
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
    await tools?.close();
  });

  test("a parked run keeps its approval through the restart; the decision continues it once", async () => {
    const { baseUrl, apiKey } = server;
    const admin = new AdminClient({ baseUrl, apiKey });
    const agent = await seedRefundAgent(admin, tools.url);
    const launch = await admin.launch({ agentId: agent.id, subject: "restart-visitor" });
    const threadId = launch.threadId;
    const sent = await request(baseUrl, "POST", `/v1/threads/${threadId}/messages`, {
      token: launch.token,
      body: { clientMessageId: `cm_${randomBytes(8).toString("hex")}`, text: "Refund order 77" },
      timeoutMs: 30_000,
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const [approval] = await eventually(async () => {
      const res = await request(baseUrl, "GET", `/v1/approvals?status=pending&agentId=${agent.id}`, {
        token: apiKey,
      });
      return res.body?.items?.length === 1 ? res.body.items : null;
    }, "the pending approval");
    assert.equal(approval.threadId, threadId);
    assert.deepEqual(tools.received, [], "nothing runs before the decision");

    await server.restart();

    const decided = await request(baseUrl, "POST", `/v1/threads/${threadId}/approvals/${approval.id}`, {
      token: launch.token,
      body: { decision: "approve" },
      timeoutMs: 30_000,
    });
    assert.equal(decided.status, 200, JSON.stringify(decided.body));
    assert.equal(decided.body.approval.status, "approved");

    const entries = await eventually(async () => {
      const res = await request(baseUrl, "GET", `/v1/threads/${threadId}/entries`, { token: launch.token });
      const items = res.body?.items ?? [];
      return items.some((e) => e.role === "assistant") ? items : null;
    }, "the continuation's reply");
    assert.deepEqual(
      entries.map((e) => e.kind),
      ["message", "approval_request", "approval_decision", "message"],
    );
    assert.match(entries.at(-1).text, /"refunded":true/);
    assert.deepEqual(tools.received, [approval.id], "the tool ran once, its webhook-id the approval's");

    // A second decision is refused, and the run is not left waiting.
    const again = await request(baseUrl, "POST", `/v1/threads/${threadId}/approvals/${approval.id}`, {
      token: launch.token,
      body: { decision: "deny" },
    });
    assert.equal(again.status, 409);
    assert.equal(again.body.error.reason, "already_decided");
    const session = await eventually(async () => {
      const res = await request(baseUrl, "GET", `/v1/sessions/${threadId}`, { token: apiKey });
      return res.body?.lastRun?.status === "succeeded" ? res.body : null;
    }, "the run succeeded in the session view");
    assert.equal(session.lastRun.status, "succeeded");
    assert.deepEqual(tools.received, [approval.id]);
  });
});
