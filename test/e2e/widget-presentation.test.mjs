// The agent's presentation in a real browser: title, greeting and suggested prompts, accent and position, and the
// widget speaking the visitor's language (bundled translations fetched on demand), all keyboard- and axe-clean.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import AxeBuilder from "@axe-core/playwright";
import {
  deepFocus,
  FRESH,
  KEYS,
  openWidgetPage,
  settledBox,
  useBrowser,
  waitForReply,
  waitForText,
  widget,
} from "./helpers.mjs";

const PROMPTS = ["Where is my order?", "What are your opening hours?"];

async function axeViolations(page) {
  const result = await new AxeBuilder({ page })
    .include("agent-thread")
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"])
    .analyze();
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** Opens the floating panel and waits for the thread (status in any language: the dot's state). */
async function openConnected(page) {
  const w = widget(page);
  await w.launcher.click();
  await w.panel.waitFor({ state: "visible" });
  await page.locator("agent-thread .status[data-state=open]").waitFor();
  return w;
}

const prompts = (page) => page.locator("agent-thread [part=prompt]");

describe("an agent's presentation", () => {
  const browser = useBrowser();

  it("shows its title, greeting and prompt chips; a chip sends its text and the chips leave", async () => {
    const { page, log } = await openWidgetPage(browser, { key: KEYS.presented, query: FRESH });
    const w = await openConnected(page);
    assert.equal(await page.getByRole("dialog", { name: "Acme help" }).count(), 1);
    await waitForText(page.locator("agent-thread .intro"), "Welcome to Acme! Ask us anything.");
    const group = page.getByRole("group", { name: "Suggested questions" });
    await group.waitFor();
    assert.deepEqual(await prompts(page).allTextContents(), PROMPTS);

    await page.getByRole("button", { name: PROMPTS[0] }).click();
    await waitForText(w.userMessages, PROMPTS[0]);
    assert.equal(await waitForReply(page, `Echo: ${PROMPTS[0]}`), `Echo: ${PROMPTS[0]}`);
    assert.equal(await group.isVisible(), false, "the chips leave once the conversation has messages");
    assert.equal((await deepFocus(page))?.tag, "textarea", "focus moves on to the composer");
    assert.deepEqual(log.errors, []);
  });

  it("reaches the chips with the keyboard and sends one with Enter", async () => {
    const { page } = await openWidgetPage(browser, { key: KEYS.presented, query: FRESH });
    const w = await openConnected(page);
    await prompts(page).first().waitFor();
    await w.log.focus();
    await page.keyboard.press("Tab");
    assert.deepEqual(await deepFocus(page), { tag: "button", part: "prompt", label: null });
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await waitForText(w.userMessages, PROMPTS[1]);
    await waitForReply(page, `Echo: ${PROMPTS[1]}`);
  });

  it("moves launcher and panel to the bottom left and themes them with the accent colour", async () => {
    const { page } = await openWidgetPage(browser, { key: KEYS.presented, query: FRESH });
    const w = await openConnected(page);
    const width = page.viewportSize().width;
    const launcher = await settledBox(w.launcher);
    const panel = await settledBox(w.panel);
    assert.ok(launcher.x < width / 2, `launcher at x=${launcher.x} of ${width}`);
    assert.ok(launcher.x <= 40, `launcher hugs the left edge (x=${launcher.x})`);
    assert.ok(panel.x <= 40, `panel on the left (x=${panel.x})`);
    const background = (locator) => locator.evaluate((el) => getComputedStyle(el).backgroundColor);
    assert.equal(await background(w.launcher), "rgb(15, 118, 110)");
    assert.equal(await background(page.locator("agent-thread [part=send]")), "rgb(15, 118, 110)");
  });

  it("lets the host page place the launcher on the left before the widget loads (data-position)", async () => {
    const { page, w } = await openWidgetPage(browser, { query: { ...FRESH, position: "bottom-left" } });
    const box = await settledBox(w.launcher);
    assert.ok(box.x <= 40, `launcher at x=${box.x}`);
    const plain = await openWidgetPage(browser, { query: FRESH });
    const right = await settledBox(plain.w.launcher);
    assert.ok(right.x > page.viewportSize().width / 2, `default launcher at x=${right.x}`);
  });

  it("has no axe violations with the chips shown, in light and dark", async () => {
    const { page } = await openWidgetPage(browser, {
      key: KEYS.presented,
      query: FRESH,
      reducedMotion: "reduce",
    });
    await openConnected(page);
    await prompts(page).first().waitFor();
    for (const colorScheme of ["light", "dark"]) {
      await page.emulateMedia({ colorScheme });
      assert.deepEqual(await axeViolations(page), [], `axe (${colorScheme})`);
    }
  });
});

describe("the widget in the visitor's language", () => {
  const browser = useBrowser({ locale: "es-ES" });

  it("speaks Spanish in a Spanish browser, with no CSP violation on the strict page", async () => {
    const { page, log } = await openWidgetPage(browser, { path: "/test/strict-csp.html", query: FRESH });
    const w = widget(page);
    // The 2 KB loader draws the launcher in English (or the host's strings.open) until the widget has loaded.
    await w.launcher.click();
    const input = page.getByRole("textbox", { name: "Mensaje" });
    await input.waitFor();
    assert.equal(await input.getAttribute("placeholder"), "Escribe un mensaje…");
    await waitForText(page.locator("agent-thread .intro"), "¡Hola! ¿En qué puedo ayudarte hoy?");
    await waitForText(w.status, "En línea");
    assert.equal(await w.panel.getAttribute("lang"), "es");
    assert.equal(await w.launcher.getAttribute("aria-label"), "Cerrar chat");
    await input.fill("hola");
    await input.press("Enter");
    await waitForReply(page, "Echo: hola");
    await page.keyboard.press("Escape");
    await page.getByRole("button", { name: "Abrir chat" }).waitFor();
    assert.deepEqual(await page.evaluate(() => window.cspViolations), []);
    assert.deepEqual(log.errors, []);
  });

  it("has no axe violations in Spanish", async () => {
    const { page } = await openWidgetPage(browser, { query: FRESH, reducedMotion: "reduce" });
    await openConnected(page);
    await waitForText(page.locator("agent-thread .intro"), "¡Hola!");
    assert.deepEqual(await axeViolations(page), []);
  });

  it("follows data-locale over the browser's language", async () => {
    const { page, w } = await openWidgetPage(browser, { query: { ...FRESH, locale: "fr" } });
    await w.launcher.click();
    const input = page.getByRole("textbox", { name: "Message" });
    await input.waitFor();
    await waitForText(page.locator("agent-thread .intro"), "Comment puis-je vous aider");
    assert.equal(await input.getAttribute("placeholder"), "Écrivez un message…");
    await waitForText(w.status, "En ligne");
    assert.equal(await w.panel.getAttribute("lang"), "fr");
    assert.equal(await page.getByRole("button", { name: "Commencer une nouvelle conversation" }).count(), 1);
  });
});
