// Shared pieces of the console's browser tests: a fresh browser context (its own cookie jar) per page, sign-in
// through the form, axe at WCAG 2.2 AA in light and dark with a full-page screenshot of each, and readers for
// what the browser stored.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before } from "node:test";
import AxeBuilder from "@axe-core/playwright";
import { chromium } from "playwright-core";
import { BASE_URL, RESULTS } from "./helpers.mjs";

/** `{admin, read}`: sk_ keys of the seeded tenant that test/e2e/server.mjs made for these tests. */
export const CONSOLE_KEYS = JSON.parse(process.env.E2E_CONSOLE_KEYS ?? "{}");
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
export const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"];
const SCREENSHOTS = join(RESULTS, "console");

const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run"];

// Runs in every console page before its scripts: keeps each CSP (and Trusted Types) violation for the test to read.
function recordViolations() {
  window.__cspViolations = [];
  addEventListener("securitypolicyviolation", (event) => {
    window.__cspViolations.push(`${event.violatedDirective}: ${event.blockedURI || event.sample}`);
  });
}

/**
 * One browser for the enclosing `describe`; every `open` gets a new context (no cookies from another test) that is
 * closed when the test ends, passed or failed.
 */
export function useConsoleBrowser() {
  let browser;
  const contexts = [];
  before(async () => {
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ARGS,
    });
  });
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
  });
  after(async () => {
    await browser?.close();
  });
  return {
    /** A new context and page at `path` (default `/console/`), recording errors and CSP violations. */
    async open(options = {}) {
      const { path = "/console/", viewport = DESKTOP, colorScheme = "light" } = options;
      const context = await browser.newContext({ viewport, colorScheme, reducedMotion: "reduce" });
      contexts.push(context);
      await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: BASE_URL });
      const page = await context.newPage();
      await page.addInitScript(recordViolations);
      const log = { errors: [] };
      page.on("console", (message) => {
        // A refused request (the signed-out session check's 401, a form's 400) is the app working, not an error.
        if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
          log.errors.push(message.text());
        }
      });
      page.on("pageerror", (error) => log.errors.push(error.message));
      const response = await page.goto(`${BASE_URL}${path}`);
      return { context, page, log, response };
    },
    /** Another page in the same context (same cookies), for a second site or a second tab. */
    async newPage(context) {
      const page = await context.newPage();
      await page.addInitScript(recordViolations);
      return page;
    },
  };
}

/** Signs in through the form with `key` and waits for the signed-in frame. */
export async function signIn(page, key) {
  assert.ok(key, "run with `npm run test:e2e` (it passes the console keys)");
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  // The signed-in frame (at phone width the navigation itself is folded behind the menu button).
  await page.getByRole("button", { name: "Sign out" }).waitFor();
}

export async function signOut(page) {
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { level: 1, name: "Sign in to the console" }).waitFor();
}

/** Waits for the page's h1 to read `name` (the lazy screen has loaded). */
export async function waitForHeading(page, name) {
  await page.getByRole("heading", { level: 1, name }).waitFor();
}

/** The focused element's tag and text: navigation must leave focus on the new page's h1. */
export function focused(page) {
  return page.evaluate(() => ({
    tag: document.activeElement?.tagName.toLowerCase(),
    text: document.activeElement?.textContent?.trim(),
  }));
}

/**
 * The focused element once focus has had up to 5 s to reach `expected`: a new page moves focus to its h1 after it
 * renders, which a fast machine can check before. The caller still asserts the answer, so focus that never moves fails.
 */
export async function focusedOnceSettled(page, expected) {
  await page
    .waitForFunction(
      ({ tag, text }) =>
        document.activeElement?.tagName.toLowerCase() === tag &&
        document.activeElement?.textContent?.trim() === text,
      expected,
      { timeout: 5_000 },
    )
    .catch(() => {});
  return focused(page);
}

/** CSP and Trusted Types violations the page reported so far. */
export const cspViolations = (page) => page.evaluate(() => window.__cspViolations ?? []);

/**
 * axe at WCAG 2.2 AA on the whole page, in light then dark, with a full-page screenshot of each at
 * test-results/console/<name>-<scheme>.png. Leaves the page in light.
 */
export async function checkScreen(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  for (const colorScheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme, reducedMotion: "reduce" });
    const result = await new AxeBuilder({ page }).withTags(AXE_TAGS).analyze();
    const violations = result.violations.map(
      (v) => `${v.id}: ${v.nodes.map((n) => `${n.target.join(" ")} (${n.failureSummary})`).join(", ")}`,
    );
    assert.deepEqual(violations, [], `axe on ${name} (${colorScheme})`);
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${colorScheme}.png`), fullPage: true });
  }
  await page.emulateMedia({ colorScheme: "light", reducedMotion: "reduce" });
}

/** Everything the page's origin keeps in script-readable storage, as one string per place. */
export function browserStorage(page) {
  return page.evaluate(async () => {
    const dump = (storage) =>
      JSON.stringify(
        Array.from({ length: storage.length }, (_, i) => storage.key(i)).map((k) => [k, storage.getItem(k)]),
      );
    const databases = indexedDB.databases ? await indexedDB.databases() : [];
    const caches = "caches" in window ? await window.caches.keys() : [];
    return {
      localStorage: dump(localStorage),
      sessionStorage: dump(sessionStorage),
      indexedDB: JSON.stringify(databases),
      cookie: document.cookie,
      caches: JSON.stringify(caches),
    };
  });
}

/** The signed-in session's CSRF token, read the way the console reads it on a reload (same origin, cookie). */
export function csrfToken(page) {
  return page.evaluate(async () => {
    const res = await fetch("/v1/console/session", { credentials: "same-origin" });
    return res.ok ? (await res.json()).csrfToken : null;
  });
}

/** A same-origin call from the console page with its cookie and CSRF header: what any console control sends. */
export function consoleFetch(page, method, path, { body, csrf } = {}) {
  return page.evaluate(
    async ([m, p, b, token]) => {
      const headers = { Accept: "application/json" };
      if (token) headers["X-Console-CSRF"] = token;
      if (b !== undefined) headers["Content-Type"] = "application/json";
      const res = await fetch(p, {
        method: m,
        headers,
        credentials: "same-origin",
        ...(b !== undefined ? { body: JSON.stringify(b) } : {}),
      });
      return { status: res.status, body: await res.text() };
    },
    [method, path, body, csrf],
  );
}
