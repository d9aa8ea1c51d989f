// Continuity in a real browser: a reload mid-reply continues the same reply once; a message written offline is
// delivered exactly once when the connection comes back.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  KEYS,
  launchBrowser,
  openAndConnect,
  openPage,
  send,
  testPage,
  waitForReply,
  waitForText,
  widget,
} from "./helpers.mjs";

const SLOW_REPLY = "Echo: please keep streaming through a reload of this page";

describe("continuity", () => {
  let browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  it("continues a reply after a reload mid-stream, without duplicated text", async () => {
    const { page } = await openPage(browser.context, testPage("/test/widget.html", KEYS.slow));
    const w = widget(page);
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
    await page.waitForTimeout(500);
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
    await page.close();
  });

  it("keeps a message written offline and delivers it once when back online", async () => {
    const { page } = await openPage(browser.context, testPage("/test/widget.html", KEYS.fast));
    const w = widget(page);
    await openAndConnect(page);

    await browser.context.setOffline(true);
    await waitForText(w.status, "Offline");
    await send(page, "written while offline");
    await waitForText(page.locator("agent-thread .msg.user .meta"), "Waiting to send");
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
    await waitForText(w.replies, "Echo: written while offline");
    await page.waitForTimeout(300);
    assert.deepEqual(await w.userMessages.allTextContents(), ["written while offline"]);
    assert.equal(await w.replies.count(), 1);
    await page.close();
  });
});

describe("stopping a reply", () => {
  let browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  it("stops mid-stream from the stop button and keeps what was written", async () => {
    const { page } = await openPage(
      browser.context,
      testPage("/test/widget.html", KEYS.slow, "&persist=memory"),
    );
    const w = widget(page);
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
    await page.close();
  });
});
