// What the widget remembers of an agent between page views (docs/widget.md#remembered-between-page-views): the
// launcher wears the agent's accent before anything is opened, and a panel left open opens again without taking focus.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  deepFocus,
  eventually,
  KEYS,
  openAndConnect,
  openWidgetPage,
  send,
  useBrowser,
  waitForHostEvents,
  waitForReply,
  waitForText,
} from "./helpers.mjs";

/** The presented agent's `accentColor` (#0f766e) as the browser computes it. */
const ACCENT = "rgb(15, 118, 110)";

const background = (locator) => locator.evaluate((el) => getComputedStyle(el).backgroundColor);

/** Waits until the launcher's background is `expected`; returns the last colour seen (for the assertion's message). */
async function launcherColour(w, expected, timeout = 15_000) {
  let last;
  const read = async () => {
    last = await background(w.launcher);
    return last === expected;
  };
  await eventually(read, `a ${expected} launcher`, { timeout, interval: 50 }).catch(() => {});
  return last;
}

describe("remembered between page views", () => {
  const browser = useBrowser();

  it("draws the launcher in the agent's accent on the next page view, before any open", async () => {
    const first = await openWidgetPage(browser, { key: KEYS.presented });
    await openAndConnect(first.page);
    assert.equal(await launcherColour(first.w, ACCENT), ACCENT, "the launch applies the accent");
    await first.page.keyboard.press("Escape");
    await first.w.panel.waitFor({ state: "hidden" });

    // Another page view of the same agent: nothing opened, nothing hovered, no launch.
    const { page, w } = await openWidgetPage(browser, { key: KEYS.presented });
    await w.launcher.waitFor();
    assert.equal(await background(w.launcher), ACCENT);
    assert.equal(await w.launcher.getAttribute("aria-expanded"), "false");
    assert.equal(await w.panel.count(), 0, "the widget itself has not loaded");
    // And once it loads (the visitor reaches for the launcher), it keeps the colour until the launch confirms it.
    await w.launcher.hover();
    await w.launcher.click();
    await w.panel.waitFor({ state: "visible" });
    assert.equal(await background(w.launcher), ACCENT);
    assert.equal(await background(page.locator("agent-thread [part=send]")), ACCENT);
  });

  it("opens a panel left open again after a reload, without taking focus; a closed one stays closed", async () => {
    const { page, w, log } = await openWidgetPage(browser, { key: KEYS.fast });
    await openAndConnect(page);
    await send(page, "remember me");
    await waitForReply(page, "Echo: remember me");

    await page.reload();
    await w.panel.waitFor({ state: "visible" });
    await waitForText(w.status, "Online");
    await waitForText(w.replies, "Echo: remember me");
    assert.equal(await w.launcher.getAttribute("aria-expanded"), "true");
    assert.equal(await deepFocus(page).then((focus) => focus?.tag), "body", "focus stays with the page");
    await waitForHostEvents(page, "open", 1);

    await w.launcher.click();
    await w.panel.waitFor({ state: "hidden" });
    await page.reload();
    // The widget loads for a message sent from the page; its reply only marks the launcher unread.
    await page.evaluate(() => window.AgentThreads.send("still closed?"));
    await page.locator("agent-thread [part=launcher][data-unread]").waitFor({ timeout: 20_000 });
    assert.equal(await w.panel.isVisible(), false, "the panel stays closed");
    assert.equal(await w.launcher.getAttribute("aria-expanded"), "false");
    assert.deepEqual(log.errors, []);
  });
});
