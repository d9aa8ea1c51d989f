// The widget on demanding host pages: a disallowed origin, a missing key, strict CSP with Trusted Types, and a
// cross-origin isolated (COEP) page. Every failure shows a message in the panel and names the fix in the console.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AdminClient } from "agent-threads/client";
import {
  API_KEY,
  BASE_URL,
  FRESH,
  hostEvents,
  KEYS,
  OTHER_ORIGIN,
  openAndConnect,
  openWidgetPage,
  send,
  useBrowser,
  waitForReply,
  waitForText,
} from "./helpers.mjs";

describe("host pages", () => {
  const browser = useBrowser();

  it("explains a disallowed origin in the panel and in one console line", async () => {
    const { page, log, w } = await openWidgetPage(browser, {
      url: `${OTHER_ORIGIN}/test/widget.html?key=${KEYS.fast}`,
    });
    await w.launcher.click();
    await waitForText(w.notice, "This website is not allowed to use this chat.");
    await waitForText(w.status, "Unavailable");
    const warning = log.warnings.find((line) => line.includes("is not in the agent's allowed origins"));
    assert.ok(warning, `console named the fix; saw ${JSON.stringify(log.warnings)}`);
    assert.ok(warning.startsWith(`agent-threads: origin ${OTHER_ORIGIN} `), warning);
    const errors = await page.evaluate(() =>
      window.testEvents.filter((e) => e.name === "error").map((e) => e.detail.code),
    );
    assert.deepEqual(errors, ["origin_not_allowed"]);
    assert.equal(await w.input.isDisabled(), true, "nothing can be sent that would be refused");
  });

  it("says an agent without an active release is not available, once, instead of retrying", async () => {
    // An agent published but never released in this environment: the launch itself is refused (409).
    const created = await new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY }).agents.create({
      slug: `unreleased-${Date.now()}`,
      name: "Unreleased",
      visibility: "public",
      allowedOrigins: [BASE_URL],
    });
    const launches = [];
    const { page, log, w } = await openWidgetPage(browser, {
      url: `${BASE_URL}/test/widget.html?key=${created.publicKey}&persist=memory`,
    });
    page.on("response", (res) => {
      if (res.url().endsWith("/v1/agent-sessions") && res.request().method() === "POST")
        launches.push(res.status());
    });
    await w.launcher.click();
    await waitForText(w.notice, "This chat is not available right now.");
    await waitForText(w.status, "Unavailable");
    assert.ok(
      log.warnings.some((line) => line.includes("no active release")),
      JSON.stringify(log.warnings),
    );
    const errors = await page.evaluate(() =>
      window.testEvents.filter((e) => e.name === "error").map((e) => e.detail.code),
    );
    assert.deepEqual(errors, ["agent_unavailable"]);
    // A retry would have come within the first backoff step; none does.
    await page.waitForTimeout(2_000);
    assert.deepEqual(launches, [409]);
  });

  it("explains a missing agent key instead of showing a blank panel", async () => {
    const { log, w } = await openWidgetPage(browser, { url: `${BASE_URL}/test/widget.html` });
    await w.launcher.click();
    await waitForText(w.notice, "This chat is not set up correctly.");
    assert.ok(
      log.warnings.some((line) => line.includes('data-agent-key="pk_…"')),
      JSON.stringify(log.warnings),
    );
  });

  it("works under a strict CSP with Trusted Types enforced, without a single violation", async () => {
    const { page, log, response } = await openWidgetPage(browser, { path: "/test/strict-csp.html" });
    assert.match(response.headers()["content-security-policy"] ?? "", /require-trusted-types-for 'script'/);
    await openAndConnect(page);
    await send(page, "**strict** _policy_ with `code`");
    await waitForReply(page, "Echo: strict policy with code");
    assert.equal(await page.locator("agent-thread .msg.assistant strong").first().textContent(), "strict");
    const violations = await page.evaluate(() => window.cspViolations);
    assert.deepEqual(violations, []);
    assert.deepEqual(
      log.errors.filter((line) => /Content Security Policy|TrustedHTML|TrustedScript/i.test(line)),
      [],
    );
  });

  it("works on a cross-origin isolated page (COEP require-corp)", async () => {
    const { page, response } = await openWidgetPage(browser, { path: "/test/coep.html" });
    assert.equal(response.headers()["cross-origin-embedder-policy"], "require-corp");
    assert.equal(await page.evaluate(() => window.crossOriginIsolated), true);
    await openAndConnect(page);
    await send(page, "isolated hello");
    await waitForReply(page, "Echo: isolated hello");
    assert.deepEqual(await hostEvents(page).then((names) => names.includes("error")), false);
  });
});

describe("private agents", () => {
  const browser = useBrowser();

  it("connect through identify(getLaunchToken), with the token minted by the host's backend", async () => {
    const { page } = await openWidgetPage(browser, { url: `${BASE_URL}/test/widget.html?persist=memory` });
    const reasons = [];
    // Stands in for the host's backend: it holds the tenant API key and names its signed-in user.
    await page.exposeFunction("mintLaunchToken", async (reason) => {
      reasons.push(reason);
      return new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY }).launch({
        agentKey: KEYS.private,
        subject: "customer-42",
      });
    });
    await page.evaluate(() => window.AgentThreads.identify((reason) => window.mintLaunchToken(reason)));
    await openAndConnect(page);
    await send(page, "hello from a signed-in customer");
    await waitForReply(page, "Echo: hello from a signed-in customer");
    assert.deepEqual(reasons, ["start"]);
  });

  it("refuses to launch a private agent from the browser with its public key", async () => {
    const { log, w } = await openWidgetPage(browser, { key: KEYS.private, query: FRESH });
    await w.launcher.click();
    await waitForText(w.notice, "This chat is not available right now.");
    assert.ok(
      log.warnings.some((line) => line.includes("unknown, disabled or rotated")),
      JSON.stringify(log.warnings),
    );
  });
});
