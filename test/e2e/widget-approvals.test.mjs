// Browser tests of approvals and client tools in the widget (docs/widget.md#approvals-and-client-tools): the approval
// card (keyboard, screen reader, axe, the outcome, decisions in history) and the host page's registerTool.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { after, before, describe, it } from "node:test";
import AxeBuilder from "@axe-core/playwright";
import { AdminClient } from "agent-threads/client";
import {
  API_KEY,
  BASE_URL,
  eventually,
  FRESH,
  openAndConnect,
  openWidgetPage,
  send,
  useBrowser,
  waitForReply,
  waitForText,
} from "./helpers.mjs";
import { seedAgent } from "./server.mjs";

async function axe(page, what) {
  for (const colorScheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme });
    const result = await new AxeBuilder({ page })
      .include("agent-thread")
      .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"])
      .analyze();
    const violations = result.violations.map(
      (v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
    );
    assert.deepEqual(violations, [], `axe (${what}, ${colorScheme})`);
  }
}

/**
 * Opens the widget with its socket passed through a route: `toPage(frame)` adds a server frame, `sent` lists the
 * frames the page sent (`approval` and `tool_result` frames are kept from the server: these tests play its part).
 */
async function openRouted(browser) {
  const opened = await openWidgetPage(browser, { query: FRESH, reducedMotion: "reduce" });
  const sockets = [];
  const sent = [];
  await opened.page.routeWebSocket(/\/ws$/, (ws) => {
    const server = ws.connectToServer();
    ws.onMessage((message) => {
      const frame = JSON.parse(String(message));
      sent.push(frame);
      if (frame.type !== "approval" && frame.type !== "tool_result") server.send(message);
    });
    sockets.push(ws);
  });
  await openAndConnect(opened.page);
  const toPage = (frame) => sockets.at(-1).send(JSON.stringify(frame));
  return { ...opened, sent, toPage, sockets };
}

const expiresAt = () => new Date(Date.now() + 60_000).toISOString();
const refund = (approvalId) => ({
  approvalId,
  toolCallId: `call_${approvalId}`,
  name: "refund",
  input: { orderId: "A-1001", amount: 30, lines: [{ sku: "mug", qty: 1 }] },
  by: "user",
  expiresAt: expiresAt(),
  title: "Refund an order",
  description: "Sends the money back to the customer's card.",
});

describe("approval cards as the widget sees them", () => {
  const browser = useBrowser();

  it("shows a card per approval, announced, decided by keyboard, and the outcome replaces the buttons", async () => {
    const { page, sent, toPage, log } = await openRouted(browser);
    await send(page, "refund my mug");
    await waitForReply(page, "Echo: refund my mug");
    toPage({ type: "run", runId: "run_card_1", status: "running" });
    toPage({ type: "run", runId: "run_card_1", status: "requires_action", actions: [refund("apr_card_1")] });

    const card = page.getByRole("group", { name: "Approval needed: Refund an order" });
    await card.waitFor();
    assert.equal(await card.locator("code").textContent(), "refund", "the tool's name");
    await waitForText(card.locator("p[dir=auto]"), "Sends the money back to the customer's card.");
    const list = await card.locator("dt, dd").allTextContents();
    assert.deepEqual(list, ["orderId", "A-1001", "amount", "30", "lines", '[{"sku":"mug","qty":1}]']);
    const announcer = page.locator("agent-thread .panel > [aria-live=polite]");
    await waitForText(announcer, "Approval needed: Refund an order");
    assert.equal(await page.locator("agent-thread .typing").count(), 0, "no typing dots while the run waits");
    await axe(page, "approval card");

    // Keyboard: Tab from the log reaches Approve, Enter decides.
    const approve = card.getByRole("button", { name: "Approve" });
    await page.locator("agent-thread .log").focus();
    await eventually(async () => {
      await page.keyboard.press("Tab");
      return approve.evaluate((el) => el.getRootNode().activeElement === el);
    }, "Tab reaches Approve");
    await page.keyboard.press("Enter");
    await eventually(() => sent.find((f) => f.type === "approval"), "the approval frame").then((frame) =>
      assert.deepEqual(frame, { type: "approval", approvalId: "apr_card_1", decision: "approve" }),
    );
    await waitForText(card.locator(".o"), "Approved");
    assert.equal(await card.getByRole("button").count(), 0, "the buttons are gone");
    await waitForText(announcer, "Approved");
    await axe(page, "decided card");
    assert.deepEqual(log.errors, []);
  });

  it("shows decisions in history: a denied approval's card says so, with no buttons", async () => {
    const { page, toPage } = await openRouted(browser);
    const createdAt = new Date().toISOString();
    const entry = { parentId: null, role: null, runId: "run_hist", text: "", createdAt };
    toPage({
      type: "history",
      items: [
        { ...entry, id: "ent_req", kind: "approval_request", approval: refund("apr_hist") },
        {
          ...entry,
          id: "ent_dec",
          kind: "approval_decision",
          decision: { approvalId: "apr_hist", decision: "deny", by: "user", reason: null },
        },
      ],
    });
    const card = page.getByRole("group", { name: "Approval needed: Refund an order" });
    await waitForText(card.locator(".o"), "Denied");
    assert.equal(await card.getByRole("button").count(), 0);

    // An approval only the tenant may decide: the card, without buttons for the visitor.
    toPage({
      type: "run",
      runId: "run_tenant",
      status: "requires_action",
      actions: [{ ...refund("apr_tenant"), by: "tenant", title: "Refund a large order" }],
    });
    const tenantCard = page.getByRole("group", { name: "Approval needed: Refund a large order" });
    await tenantCard.locator("dl").waitFor();
    assert.equal(await tenantCard.getByRole("button").count(), 0);
  });

  it("speaks the visitor's language: the card in German", async () => {
    const opened = await openWidgetPage(browser, {
      query: { ...FRESH, locale: "de" },
      reducedMotion: "reduce",
    });
    const sockets = [];
    await opened.page.routeWebSocket(/\/ws$/, (ws) => {
      ws.connectToServer();
      sockets.push(ws);
    });
    await opened.page.locator("agent-thread [part=launcher]").click();
    await waitForText(opened.page.locator("agent-thread .status"), "Online");
    sockets.at(-1).send(
      JSON.stringify({
        type: "run",
        runId: "run_de",
        status: "requires_action",
        actions: [refund("apr_de")],
      }),
    );
    const card = opened.page.getByRole("group", { name: "Freigabe erforderlich: Refund an order" });
    await card.getByRole("button", { name: "Genehmigen" }).waitFor();
    await card.getByRole("button", { name: "Ablehnen" }).waitFor();
  });
});

describe("host-page client tools as the widget sees them", () => {
  const browser = useBrowser();

  it("runs a registered tool once per call and answers with its output or its error", async () => {
    const { page, sent, toPage, log } = await openRouted(browser);
    await page.evaluate(() => {
      window.toolCalls = [];
      window.AgentThreads.registerTool("cart", async (input, ctx) => {
        window.toolCalls.push({ input, ctx });
        return { items: 2, first: input.first };
      });
      // The element's equivalent of the global's.
      document.querySelector("agent-thread").registerTool("broken", () => {
        throw new Error("no cart here");
      });
    });
    const call = {
      type: "tool_request",
      runId: "run_tool",
      name: "cart",
      input: { first: "mug" },
      expiresAt: expiresAt(),
    };
    toPage({ ...call, toolCallId: "call_cart_1" });
    const answer = await eventually(
      () => sent.find((f) => f.type === "tool_result"),
      "the tool_result frame",
    );
    assert.deepEqual(answer, {
      type: "tool_result",
      toolCallId: "call_cart_1",
      output: { items: 2, first: "mug" },
    });
    const [seen] = await page.evaluate(() => window.toolCalls);
    assert.equal(seen.ctx.runId, "run_tool");
    assert.equal(seen.ctx.toolCallId, "call_cart_1");
    assert.match(seen.ctx.threadId, /^thr_/);

    // A replay after a reconnect answers again without running the tool again.
    toPage({ ...call, toolCallId: "call_cart_1" });
    await eventually(
      () => sent.filter((f) => f.type === "tool_result").length === 2,
      "the answer sent again",
    );
    assert.equal(await page.evaluate(() => window.toolCalls.length), 1, "the tool ran once");

    toPage({ ...call, name: "broken", toolCallId: "call_broken" });
    const failed = await eventually(
      () => sent.find((f) => f.toolCallId === "call_broken"),
      "the broken tool's answer",
    );
    assert.deepEqual(failed, { type: "tool_result", toolCallId: "call_broken", error: "no cart here" });

    // A tool this page did not register: another tab or the host's own client may answer it.
    toPage({ ...call, name: "elsewhere", toolCallId: "call_elsewhere" });
    await send(page, "still here");
    await waitForReply(page, "Echo: still here");
    assert.equal(sent.filter((f) => f.toolCallId === "call_elsewhere").length, 0);
    assert.deepEqual(log.errors, []);
  });
});

/**
 * Agents whose `local` model calls one tool on the first step, then says what the tool returned ("The refund tool
 * returned: …"): `refund`, a webhook needing the visitor's approval, and `cart`, a tool of the host page.
 */
describe("approvals and client tools with the thread", () => {
  const browser = useBrowser();
  const hook = { calls: [], url: "" };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", () => {
      hook.calls.push({ id: req.headers["webhook-id"], body });
      res.setHeader("Content-Type", "application/json");
      res.end(JSON.stringify({ refunded: true, refundId: "rf_1" }));
    });
  });
  const keys = {};

  before(async () => {
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    hook.url = `http://127.0.0.1:${server.address().port}/refund`;
    const admin = new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });
    await admin.secrets.put("refund-hook", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    const stamp = Date.now().toString(36);
    const agent = (slug, local, tools) =>
      seedAgent(BASE_URL, API_KEY, {
        slug: `${slug}-${stamp}`,
        visibility: "public",
        local,
        origin: BASE_URL,
        tools,
      });
    const refund = {
      name: "refund",
      description: "Refunds an order.",
      url: hook.url,
      signingSecret: "refund-hook",
      approval: "always",
    };
    keys.refund = (
      await agent(
        "refund",
        {
          chunks: 4,
          chunkDelayMs: 10,
          toolCall: { name: "refund", input: { orderId: "A-1001", amount: 30 } },
        },
        [refund],
      )
    ).publicKey;
    keys.cart = (
      await agent(
        "cart",
        { chunks: 4, chunkDelayMs: 10, toolCall: { name: "cart", input: { currency: "EUR" } } },
        [{ name: "cart", description: "Reads the visitor's cart on the page.", executor: "client" }],
      )
    ).publicKey;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  const open = async (key) => {
    const opened = await openWidgetPage(browser, { key, query: FRESH, reducedMotion: "reduce" });
    await openAndConnect(opened.page);
    return opened;
  };

  it("approve in the widget: the tool runs once and the reply continues with its result", async () => {
    const { page, log } = await open(keys.refund);
    const before = hook.calls.length;
    await send(page, "refund order A-1001");
    const card = page.getByRole("group", { name: "Approval needed: refund" });
    await card.waitFor();
    const shown = await card.locator("dt, dd").allTextContents();
    // The thread may order the input's keys (it stores it canonically): compare key by key.
    const pairs = Object.fromEntries(shown.flatMap((text, i) => (i % 2 === 0 ? [[text, shown[i + 1]]] : [])));
    assert.deepEqual(pairs, { orderId: "A-1001", amount: "30" });
    assert.equal(hook.calls.length, before, "nothing refunded before the decision");
    await card.getByRole("button", { name: "Approve" }).click();
    await waitForText(card.locator(".o"), "Approved");
    const reply = await waitForReply(page, /The refund tool returned: .*"refunded":true/);
    assert.match(reply, /rf_1/);
    assert.equal(hook.calls.length, before + 1, "the webhook was called once");
    assert.deepEqual(log.errors, []);
  });

  it("a reload while the run waits: the card is back with its buttons, and approving continues the reply", async () => {
    const opened = await openWidgetPage(browser, {
      key: keys.refund,
      query: { persist: "session" },
      reducedMotion: "reduce",
    });
    const { page, log } = opened;
    await openAndConnect(page);
    await send(page, "refund order A-1001 after a reload");
    const card = page.getByRole("group", { name: "Approval needed: refund" });
    await card.getByRole("button", { name: "Approve" }).waitFor();
    await page.reload();
    await openAndConnect(page);
    await card.getByRole("button", { name: "Approve" }).click();
    await waitForText(card.locator(".o"), "Approved");
    await waitForReply(page, /The refund tool returned: .*"refunded":true/);
    assert.equal(await page.getByRole("group", { name: "Approval needed: refund" }).count(), 1, "one card");
    assert.deepEqual(log.errors, []);
  });

  it("a denied refund: nothing is refunded and the reply shows the denial", async () => {
    const { page, log } = await open(keys.refund);
    const before = hook.calls.length;
    await send(page, "refund order A-1001 please");
    const card = page.getByRole("group", { name: "Approval needed: refund" });
    await card.getByRole("button", { name: "Deny" }).click();
    await waitForText(card.locator(".o"), "Denied");
    const reply = await waitForReply(page, /The refund tool returned: .*"denied":true/);
    assert.doesNotMatch(reply, /rf_1/);
    assert.equal(hook.calls.length, before, "the webhook was never called");
    assert.deepEqual(log.errors, []);
  });

  it("a host-page client tool answers and the reply says what it returned", async () => {
    const { page, log } = await open(keys.cart);
    await page.evaluate(() => {
      window.cartCalls = [];
      window.AgentThreads.registerTool("cart", async (input, ctx) => {
        window.cartCalls.push({ input, ctx });
        return { items: 3, total: "42.00", currency: input.currency };
      });
    });
    await send(page, "what is in my cart?");
    const reply = await waitForReply(page, /The cart tool returned: .*"items":3/);
    assert.match(reply, /"total":"42.00"/);
    const calls = await page.evaluate(() => window.cartCalls);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0].input, { currency: "EUR" });
    assert.ok(calls[0].ctx.runId && calls[0].ctx.threadId, "the call names its run and thread");
    assert.deepEqual(log.errors, []);
  });
});
