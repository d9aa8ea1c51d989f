// The console's approval inbox in Chromium against `wrangler dev`: a run that asks for the tenant's approval shows
// in the inbox with its tool, conversation and times; Approve decides it (the row goes, the tool is called once) and
// the session's branch shows the request and the decision.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import { AdminClient } from "agent-threads/client";
import { request } from "../../scripts/lib/http-client.mjs";
import { CONSOLE_KEYS, checkScreen, signIn, useConsoleBrowser, waitForHeading } from "./console-helpers.mjs";
import { API_KEY, BASE_URL, eventually, waitForText } from "./helpers.mjs";

const admin = new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });

/** A local tool server answering every POST; records each call. */
async function startToolServer() {
  const received = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      received.push(Buffer.concat(chunks).toString("utf8"));
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

/** A private agent whose every turn calls `refund`, a tool that waits for the tenant's approval. */
async function seedRefundAgent(toolUrl) {
  const alias = `refund-tool-${Date.now()}`;
  await admin.secrets.put(alias, `whsec_${randomBytes(32).toString("base64")}`);
  const agent = await admin.agents.create({
    slug: `refunds-${Date.now()}`,
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
        local: { chunks: 2, toolCall: { name: "refund", input: { orderId: "42", amount: 20 } } },
      },
      tools: [
        {
          name: "refund",
          description: "Refunds an order.",
          url: `${toolUrl}/refund`,
          signingSecret: alias,
          inputSchema: {
            type: "object",
            properties: { orderId: { type: "string" }, amount: { type: "number" } },
          },
          approval: { by: "tenant", title: "Refund the order" },
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

/** The tenant's pending approvals of `agentId`, read as a backend would. */
async function pendingApprovals(agentId) {
  const res = await request(BASE_URL, "GET", `/v1/approvals?agentId=${agentId}`, { token: API_KEY });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.items;
}

describe("console: approvals", () => {
  const browser = useConsoleBrowser();
  let tools;
  let agent;
  let threadId;
  let approval;

  before(async () => {
    tools = await startToolServer();
    agent = await seedRefundAgent(tools.url);
    const launch = await admin.launch({
      agentId: agent.id,
      subject: `approver-${randomBytes(4).toString("hex")}`,
    });
    threadId = launch.threadId;
    const sent = await request(BASE_URL, "POST", `/v1/threads/${threadId}/messages`, {
      token: launch.token,
      body: { clientMessageId: `cm_${randomBytes(8).toString("hex")}`, text: "Refund order 42 please" },
      timeoutMs: 30_000,
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    [approval] = await eventually(async () => {
      const items = await pendingApprovals(agent.id);
      return items.length === 1 ? items : null;
    }, "the pending approval in D1");
  });
  after(async () => {
    await tools?.close();
  });

  test("a pending approval shows in the inbox; Approve decides it, the row goes and the tool runs once", async () => {
    assert.equal(approval.toolName, "refund");
    assert.equal(approval.threadId, threadId);
    assert.equal(approval.by, "tenant");
    assert.equal(tools.received.length, 0, "nothing runs before the decision");

    const { page, log } = await browser.open({ path: "/console/approvals" });
    await signIn(page, CONSOLE_KEYS.admin);
    log.errors.length = 0;
    await waitForHeading(page, "Approvals");
    const table = page.getByRole("region", { name: "Pending approvals" });
    const row = table.locator(`tr[data-approval="${approval.id}"]`);
    await row.waitFor();
    await waitForText(row, "refund");
    await waitForText(row, "your team");
    assert.equal(
      await row.getByRole("link", { name: threadId }).getAttribute("href"),
      `/console/sessions/${threadId}`,
    );
    await checkScreen(page, "approvals");

    await row.getByRole("button", { name: `Approve refund ${approval.id}` }).click();
    await waitForText(page.getByRole("status"), `Approved refund (${approval.id}).`);
    await row.waitFor({ state: "detached" });
    // The decision reached the thread: the tool ran once and the approval left D1's pending list.
    await eventually(async () => tools.received.length === 1, "the approved tool call");
    await eventually(async () => (await pendingApprovals(agent.id)).length === 0, "the decision in D1");
    // Read again from the server: it no longer lists the decided approval (other tests' approvals may remain).
    await page.reload();
    await waitForHeading(page, "Approvals");
    await page.getByText("Nothing is waiting for a decision.").or(table).waitFor();
    assert.equal(await page.locator(`tr[data-approval="${approval.id}"]`).count(), 0);
    assert.equal(tools.received.length, 1);
    assert.deepEqual(log.errors, []);
  });

  test("the session's branch shows the approval request and its decision", async () => {
    await eventually(async () => (await pendingApprovals(agent.id)).length === 0, "the decision in D1");
    await eventually(async () => {
      const kinds = (await admin.sessions.messages(threadId)).items.map((m) => m.kind);
      return kinds.includes("approval_decision") && kinds.filter((k) => k === "message").length >= 2;
    }, "the decision and the reply in the projection");
    const { page } = await browser.open({ path: `/console/sessions/${threadId}` });
    await signIn(page, CONSOLE_KEYS.admin);
    await waitForHeading(page, "Refund order 42 please");
    const request_ = page.locator('li[data-kind="approval_request"]');
    await waitForText(request_, "Approval requested for refund");
    await waitForText(request_, "Refund the order");
    const decision = page.locator('li[data-kind="approval_decision"]');
    await waitForText(decision, "approved by your team");
  });
});
