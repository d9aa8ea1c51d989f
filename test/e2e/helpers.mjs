// Shared pieces of the browser tests: Debian's Chromium via playwright-core, pages against the e2e server, and
// readers for what a visitor sees inside the widget's (open) shadow root.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before } from "node:test";
import { chromium } from "playwright-core";

export const BASE_URL = process.env.E2E_BASE_URL ?? "";
export const OTHER_ORIGIN = process.env.E2E_OTHER_ORIGIN ?? "";
export const KEYS = JSON.parse(process.env.E2E_KEYS ?? "{}");
export const RESULTS = process.env.E2E_RESULTS ?? "test-results";
/** The test tenant's API key: what a host's backend uses to launch private agents. */
export const API_KEY = process.env.E2E_API_KEY ?? "";
/** The throwaway server's operator token: for tests of the operator API. */
export const OPERATOR_TOKEN = process.env.E2E_OPERATOR_TOKEN ?? "";

if (!BASE_URL) throw new Error("run the browser tests with `npm run test:e2e` (it starts the server)");

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

/** A browser with a fresh profile (its language `locale`, English by default); `close()` also removes the profile. */
export async function launchBrowser({ locale = "en-US" } = {}) {
  const profile = mkdtempSync(join(tmpdir(), "agent-threads-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ARGS,
    viewport: { width: 1280, height: 800 },
    locale,
  });
  await context.pages()[0]?.close();
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * One browser for the enclosing `describe`: launched before its tests and closed after them; every page a test
 * opened with `openWidgetPage` is closed when that test ends, passed or failed.
 */
export function useBrowser(options = {}) {
  const session = { browser: null, pages: [] };
  before(async () => {
    session.browser = await launchBrowser(options);
  });
  afterEach(async () => {
    for (const page of session.pages.splice(0)) await page.close();
  });
  after(async () => {
    await session.browser?.close();
  });
  return {
    get context() {
      return session.browser.context;
    },
    track(page) {
      session.pages.push(page);
    },
  };
}

/**
 * Opens a test page with the widget and records console warnings, page errors and dialogs (none of which should
 * ever be an XSS).
 *
 * - `url` replaces the default `/test/widget.html?key=…` address entirely; otherwise `path`, `key` (default: the
 *   fast agent) and `query` (`persist`, `dir`, `layout`, `target`, … appended as given) build it.
 * - `viewport`, `colorScheme` and `reducedMotion` are set before the page loads.
 */
export async function openWidgetPage(browser, options = {}) {
  const {
    path = "/test/widget.html",
    key = KEYS.fast,
    query = {},
    viewport,
    colorScheme,
    reducedMotion,
  } = options;
  const url = options.url ?? `${BASE_URL}${path}?${new URLSearchParams({ key: key ?? "", ...query })}`;
  const page = await browser.context.newPage();
  browser.track(page);
  if (viewport) await page.setViewportSize(viewport);
  if (colorScheme || reducedMotion) await page.emulateMedia({ colorScheme, reducedMotion });
  const log = { warnings: [], errors: [], dialogs: [] };
  page.on("console", (message) => {
    if (message.type() === "warning") log.warnings.push(message.text());
    if (message.type() === "error") log.errors.push(message.text());
  });
  page.on("pageerror", (error) => log.errors.push(error.message));
  page.on("dialog", async (dialog) => {
    log.dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  const response = await page.goto(url);
  return { page, log, response, w: widget(page) };
}

/** Every test that passes this starts its own thread: nothing is persisted between its pages. */
export const FRESH = { persist: "memory" };

/** Locators for the widget's parts; Playwright's CSS engine pierces open shadow roots. */
export function widget(page) {
  return {
    launcher: page.locator("agent-thread [part=launcher]"),
    panel: page.locator("agent-thread .panel"),
    input: page.getByRole("textbox", { name: "Message" }),
    status: page.locator("agent-thread .status"),
    notice: page.locator("agent-thread .notice"),
    log: page.locator("agent-thread .log"),
    userMessages: page.locator("agent-thread .msg.user .bubble"),
    replies: page.locator("agent-thread .msg.assistant .bubble"),
  };
}

/**
 * Whether the page's floating panel reopens by itself: it was open when this browser last showed the agent
 * (docs/widget.md#remembered-between-page-views), so a click on the launcher would close it again.
 */
export function reopens(page) {
  return page.evaluate(() => {
    const host = document.querySelector("agent-thread");
    const storage = host?.getAttribute("persist") === "session" ? sessionStorage : localStorage;
    try {
      return (
        JSON.parse(storage.getItem(`agent-threads:${host?.getAttribute("agent-key") ?? "private"}`)).open ===
        true
      );
    } catch {
      return false;
    }
  });
}

/** Opens the floating panel (unless it reopens by itself) and waits until the thread is connected. */
export async function openAndConnect(page) {
  const w = widget(page);
  if (!(await reopens(page))) await w.launcher.click();
  await w.panel.waitFor({ state: "visible" });
  await waitForText(w.status, "Online");
  return w;
}

export async function send(page, text) {
  const w = widget(page);
  await w.input.fill(text);
  await w.input.press("Enter");
}

/**
 * Re-reads `read` (sync or async) until it gives a truthy value and returns that value; a read that throws counts as
 * "not yet" (a row not written, a page navigating). At the deadline it fails naming `what` and the last error.
 */
export async function eventually(read, what, { timeout = 20_000, interval = 200 } = {}) {
  const deadline = Date.now() + timeout;
  let lastError;
  for (;;) {
    try {
      const value = await read();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what}${lastError === undefined ? "" : `; last error: ${lastError}`}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
/** Waits until a locator's text equals (string) or matches (RegExp) the expectation. */
export async function waitForText(locator, expected, timeout = 15_000) {
  const deadline = Date.now() + timeout;
  let last = "";
  while (Date.now() < deadline) {
    last = (await locator.allTextContents()).join("|");
    if (typeof expected === "string" ? last.includes(expected) : expected.test(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${expected}; last text: ${JSON.stringify(last)}`);
}

/** Waits until the last reply is complete (the log is no longer busy) and returns its text. */
export async function waitForReply(page, expected, timeout = 20_000) {
  const w = widget(page);
  await waitForText(w.replies.last(), expected, timeout);
  const deadline = Date.now() + timeout;
  while ((await w.log.getAttribute("aria-busy")) !== "false") {
    if (Date.now() > deadline) throw new Error("the reply never finished (aria-busy stayed true)");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return w.replies.last().textContent();
}

/**
 * A locator's box once it has come to rest: its own animations and transitions finished (endless ones, like the
 * typing dots, excepted) and the box unchanged across two animation frames. Measuring right after an action would
 * catch the panel mid-animation.
 */
export async function settledBox(locator) {
  await locator.evaluate(async (element) => {
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    const read = () => {
      const { x, y, width, height } = element.getBoundingClientRect();
      return `${x},${y},${width},${height}`;
    };
    for (let previous = null; ; ) {
      const running = element
        .getAnimations()
        .filter((animation) => animation.effect?.getComputedTiming().endTime !== Infinity);
      await Promise.all(running.map((animation) => animation.finished.catch(() => {})));
      const box = read();
      if (running.length === 0 && box === previous) return;
      previous = box;
      await frame();
    }
  });
  return locator.boundingBox();
}

/** Waits until the host page has seen `count` events named `name` through `AgentThreads.on`. */
export async function waitForHostEvents(page, name, count, timeout = 15_000) {
  await page.waitForFunction(
    ([eventName, atLeast]) => window.testEvents.filter((e) => e.name === eventName).length >= atLeast,
    [name, count],
    { timeout },
  );
}

/** The focused element, looking through shadow roots: `{tag, part, label}`. */
export function deepFocus(page) {
  return page.evaluate(() => {
    let active = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    return active
      ? {
          tag: active.tagName.toLowerCase(),
          part: active.getAttribute("part"),
          label: active.getAttribute("aria-label"),
        }
      : null;
  });
}

/** Events the host page saw through `AgentThreads.on` (recorded by /test/boot.js). */
export const hostEvents = (page) => page.evaluate(() => window.testEvents.map((e) => e.name));
