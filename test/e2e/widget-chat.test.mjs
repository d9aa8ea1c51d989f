// A visitor's conversation in a real browser: open, send, streamed reply, keyboard only, inert model output, axe.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import AxeBuilder from "@axe-core/playwright";
import {
  deepFocus,
  FRESH,
  hostEvents,
  openAndConnect,
  openWidgetPage,
  RESULTS,
  send,
  settledBox,
  useBrowser,
  waitForHostEvents,
  waitForReply,
  waitForText,
} from "./helpers.mjs";

describe("a conversation in the floating widget", () => {
  const browser = useBrowser();

  it("opens from the launcher, sends a message and streams the reply into the log", async () => {
    const { page, log, w } = await openWidgetPage(browser, { query: FRESH });
    assert.equal(await w.launcher.getAttribute("aria-expanded"), "false");
    await openAndConnect(page);
    assert.equal(await w.launcher.getAttribute("aria-expanded"), "true");
    assert.equal(await page.getByRole("dialog", { name: "Demo agent" }).count(), 1);

    await send(page, "hello there");
    await waitForText(w.userMessages, "hello there");
    assert.equal(await waitForReply(page, "Echo: hello there"), "Echo: hello there");
    assert.equal(await w.userMessages.count(), 1);
    assert.equal(await w.replies.count(), 1);
    // Screen readers hear the finished reply once, from the polite announcer (the log itself stays silent).
    const announcer = page.locator("agent-thread .panel > [aria-live=polite]");
    await waitForText(announcer, "Demo agent: Echo: hello there");
    assert.equal(await w.log.getAttribute("aria-live"), "off");
    assert.deepEqual(
      (await hostEvents(page)).filter((name) => name !== "message"),
      ["open", "ready"],
      "the host saw open then ready",
    );
    assert.equal(
      (await hostEvents(page)).filter((name) => name === "message").length,
      2,
      "user + reply messages",
    );
    assert.deepEqual(log.errors, [], "no console errors");
  });

  it("works with the keyboard alone: Tab to the launcher, Enter, type, Enter, Esc back to the launcher", async () => {
    const { page, w } = await openWidgetPage(browser, { query: FRESH });
    await w.launcher.waitFor();
    await page.keyboard.press("Tab");
    assert.deepEqual(await deepFocus(page), { tag: "button", part: "launcher", label: "Open chat" });
    await page.keyboard.press("Enter");
    await w.panel.waitFor({ state: "visible" });
    await waitForText(w.status, "Online");
    assert.equal((await deepFocus(page))?.part, "input", "focus moved into the composer");
    await page.keyboard.type("typed by keyboard");
    await page.keyboard.press("Enter");
    await waitForReply(page, "Echo: typed by keyboard");
    await page.keyboard.press("Escape");
    await w.panel.waitFor({ state: "hidden" });
    assert.deepEqual(await deepFocus(page), { tag: "button", part: "launcher", label: "Open chat" });
    assert.equal(await w.launcher.getAttribute("aria-expanded"), "false");
  });

  it("renders HTML and script links in model output as inert text", async () => {
    const { page, log, w } = await openWidgetPage(browser, { query: FRESH });
    await openAndConnect(page);
    await send(page, "<img src=x onerror=alert(1)>");
    await waitForReply(page, "Echo: <img src=x onerror=alert(1)>");
    await send(page, "[x](javascript:alert(1)) <script>alert(2)</script> [ok](https://example.com)");
    await waitForReply(page, /Echo: x <script>alert\(2\)<\/script> ok/);
    // Both exchanges are final (two user entries, two replies): nothing is left to render.
    await waitForHostEvents(page, "message", 4);

    const found = await page.locator("agent-thread").evaluate((host) => {
      const root = host.shadowRoot;
      return {
        images: root.querySelectorAll("img").length,
        scripts: root.querySelectorAll("script").length,
        scriptLinks: [...root.querySelectorAll("a")].filter((a) => !/^https?:|^mailto:/.test(a.href)).length,
        links: [...root.querySelectorAll("a")].map((a) => ({ href: a.href, rel: a.rel, target: a.target })),
      };
    });
    assert.equal(found.images, 0);
    assert.equal(found.scripts, 0);
    assert.equal(found.scriptLinks, 0);
    assert.deepEqual(found.links, [
      { href: "https://example.com/", rel: "noopener noreferrer nofollow", target: "_blank" },
    ]);
    assert.deepEqual(log.dialogs, [], "no alert() ever ran");
    assert.equal(await w.replies.count(), 2);
  });

  it("has no axe violations while open, in light and dark", async () => {
    // Without motion the colour-scheme switch applies at once, so axe reads the colours it is checking.
    const { page } = await openWidgetPage(browser, { query: FRESH, reducedMotion: "reduce" });
    await openAndConnect(page);
    await send(
      page,
      "Some **markdown**:\n\n- a list\n- with `code`\n\n> and a quote, plus [a link](https://example.com)",
    );
    await waitForReply(page, "and a quote");
    for (const colorScheme of ["light", "dark"]) {
      await page.emulateMedia({ colorScheme });
      const result = await new AxeBuilder({ page })
        .include("agent-thread")
        .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"])
        .analyze();
      const violations = result.violations.map(
        (v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
      );
      assert.deepEqual(violations, [], `axe (${colorScheme})`);
    }
  });

  it("looks finished on the demo page mid-conversation (screenshot)", async () => {
    const { page, w } = await openWidgetPage(browser, { path: "/demo.html" });
    await page.getByRole("button", { name: "Talk to the demo agent" }).click();
    await w.panel.waitFor({ state: "visible" });
    await waitForText(w.status, "Online");
    await send(page, "Hi! Can I add this chat to my own site?");
    await waitForReply(page, "Echo: Hi! Can I add this chat to my own site?");
    await send(page, "Does it keep **formatting**, like `code` and [links](https://example.com/docs)?");
    await waitForReply(page, "Echo: Does it keep formatting, like code and links?");
    await page.mouse.move(10, 10);
    await settledBox(w.panel);
    await page.screenshot({ path: join(RESULTS, "widget-demo.png"), animations: "disabled" });
  });
});

describe("layouts", () => {
  const browser = useBrowser();

  it("mirrors for right-to-left pages: launcher and panel on the left, messages in their own direction", async () => {
    const { page, w } = await openWidgetPage(browser, { query: { ...FRESH, dir: "rtl" } });
    await openAndConnect(page);
    const launcher = await settledBox(w.launcher);
    const panel = await settledBox(w.panel);
    assert.ok(launcher.x < 100, `launcher at x=${launcher.x}`);
    assert.ok(panel.x < 100, `panel at x=${panel.x}`);
    await send(page, "مرحبا بالعالم");
    await waitForReply(page, "Echo: مرحبا بالعالم");
    assert.equal(await w.replies.last().getAttribute("dir"), "auto");
  });

  it("becomes a full-screen sheet on a phone", async () => {
    const { page, w } = await openWidgetPage(browser, {
      query: FRESH,
      viewport: { width: 390, height: 844 },
    });
    await openAndConnect(page);
    // Measured once the panel's opening animation has finished, not mid-way (it scales up from 97%).
    const panel = await settledBox(w.panel);
    assert.deepEqual([panel.x, panel.y, panel.width, panel.height], [0, 0, 390, 844]);
    assert.equal(await w.launcher.isVisible(), false, "the sheet has its own close button");
    await page.getByRole("button", { name: "Close chat" }).click();
    await w.panel.waitFor({ state: "hidden" });
    assert.equal(await w.launcher.isVisible(), true);
  });

  it("renders inline in the host's layout, connected without a launcher", async () => {
    const { page, w } = await openWidgetPage(browser, {
      query: { ...FRESH, layout: "inline", target: "#inline-target" },
    });
    await page.locator("#inline-target agent-thread .panel").waitFor({ state: "visible" });
    await waitForText(w.status, "Online");
    assert.equal(await w.launcher.count(), 0);
    assert.equal(await page.getByRole("region", { name: "Demo agent" }).count(), 1);
    await send(page, "inline hello");
    await waitForReply(page, "Echo: inline hello");
  });
});
