// Continuity in a real browser: a reload mid-reply continues the same reply once; a message written offline is
// delivered exactly once when the connection comes back.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  FRESH,
  KEYS,
  openAndConnect,
  openWidgetPage,
  send,
  useBrowser,
  waitForHostEvents,
  waitForReply,
  waitForText,
} from "./helpers.mjs";

const SLOW_REPLY = "Echo: please keep streaming through a reload of this page";

describe("continuity", () => {
  const browser = useBrowser();

  it("continues a reply after a reload mid-stream, without duplicated text", async () => {
    const { page, w } = await openWidgetPage(browser, { key: KEYS.slow });
    await openAndConnect(page);
    await send(page, "please keep streaming through a reload of this page");
    // The slow agent writes 30 deltas 100 ms apart: reload once a few have arrived.
    await waitForText(w.replies.last(), /^Echo: p/);
    const before = await w.replies.last().textContent();
    assert.ok(before.length < SLOW_REPLY.length, `reloaded mid-stream (had ${JSON.stringify(before)})`);

    await page.reload();
    await openAndConnect(page);
    // The same reply is back and still being written: continued, not restarted from the end.
    await waitForText(w.replies, "Echo: p");
    assert.equal(
      await w.log.getAttribute("aria-busy"),
      "true",
      "the reply was still streaming after the reload",
    );
    const finished = await waitForReply(page, SLOW_REPLY, 30_000);
    assert.equal(finished, SLOW_REPLY);
    // The reply's final entry has arrived: nothing more is coming for this run.
    await waitForHostEvents(page, "message", 1);
    assert.deepEqual(await w.userMessages.allTextContents(), [
      "please keep streaming through a reload of this page",
    ]);
    assert.deepEqual(await w.replies.allTextContents(), [SLOW_REPLY]);

    // And once more from history alone: the thread holds one user turn and one reply.
    await page.reload();
    await openAndConnect(page);
    await waitForText(w.replies, SLOW_REPLY);
    assert.equal(await w.userMessages.count(), 1);
    assert.equal(await w.replies.count(), 1);
  });

  it("keeps a message written offline and delivers it once when back online", async () => {
    const { page, w } = await openWidgetPage(browser);
    await openAndConnect(page);

    await browser.context.setOffline(true);
    await waitForText(w.status, "Offline");
    await send(page, "written while offline");
    await waitForText(page.locator("agent-thread .msg.user .meta"), "Waiting to send");
    // That nothing arrives has no event to await, so this one window stays fixed.
    await page.waitForTimeout(1500);
    assert.equal(await w.replies.count(), 0, "nothing was delivered while offline");

    await browser.context.setOffline(false);
    await waitForReply(page, "Echo: written while offline");
    await waitForText(w.status, "Online");
    assert.deepEqual(await w.userMessages.allTextContents(), ["written while offline"]);
    assert.deepEqual(await w.replies.allTextContents(), ["Echo: written while offline"]);

    // The server stored it once: a fresh page rebuilds the thread from history.
    await page.reload();
    await openAndConnect(page);
    // History is drawn in one step, so once its reply shows, all of it does.
    await waitForText(w.replies, "Echo: written while offline");
    assert.deepEqual(await w.userMessages.allTextContents(), ["written while offline"]);
    assert.equal(await w.replies.count(), 1);
  });
});

describe("stopping a reply", () => {
  const browser = useBrowser();

  it("stops mid-stream from the stop button and keeps what was written", async () => {
    const { page, w } = await openWidgetPage(browser, { key: KEYS.slow, query: FRESH });
    await openAndConnect(page);
    await send(page, "stop me somewhere in the middle of this reply");
    await waitForText(w.replies.last(), /^Echo: s/);
    await page.getByRole("button", { name: "Stop the reply" }).click();
    await waitForText(page.locator("agent-thread .msg.assistant .meta"), "Stopped.");
    assert.equal(await w.log.getAttribute("aria-busy"), "false");
    const kept = await w.replies.last().textContent();
    assert.ok(
      kept.startsWith("Echo: s") &&
        kept.length < "Echo: stop me somewhere in the middle of this reply".length,
      kept,
    );
    assert.equal(await page.getByRole("button", { name: "Send message" }).isVisible(), true);
  });
});
