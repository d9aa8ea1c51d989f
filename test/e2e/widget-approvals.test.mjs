// Browser tests of approvals and client tools in the widget (docs/widget.md#approvals-and-client-tools): the approval
// card (keyboard, screen reader, axe, the outcome, decisions in history) and the host page's registerTool.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import AxeBuilder from "@axe-core/playwright";
import {
  eventually,
  FRESH,
  openAndConnect,
  openWidgetPage,
  send,
  useBrowser,
  waitForReply,
  waitForText,
} from "./helpers.mjs";

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
    sockets
      .at(-1)
      .send(
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
      window.AgentThreads.registerTool("broken", () => {
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
