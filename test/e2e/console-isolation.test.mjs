// A link cannot put another site's script on the Worker's origin: the customer test page follows only a loopback
// ?service=, its policy blocks any other script source, and the widget still works from a loopback service.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { API_KEY, BASE_URL, OTHER_ORIGIN, openAndConnect, openWidgetPage, useBrowser } from "./helpers.mjs";
import { seedAgent } from "./server.mjs";

const EVIL = "evil.invalid";

/**
 * What the page does toward `EVIL`: `attempted`, every request it starts (a script the policy blocks is one, failed
 * before the network), and `sent`, every request that reached the network layer (intercepted and aborted there).
 */
async function watchEvil(page) {
  const seen = { attempted: [], sent: [] };
  const isEvil = (url) => new URL(url).hostname === EVIL;
  page.on("request", (request) => {
    if (isEvil(request.url())) seen.attempted.push(request.url());
  });
  await page.route(
    (url) => url.hostname === EVIL,
    (route) => {
      seen.sent.push(route.request().url());
      return route.abort();
    },
  );
  return seen;
}

describe("the customer test page with a foreign ?service=", () => {
  const browser = useBrowser();

  it("sends no request to that host, says it refused, and its policy blocks a script from there", async () => {
    const page = await browser.context.newPage();
    browser.track(page);
    const seen = await watchEvil(page);
    const response = await page.goto(`${BASE_URL}/test/customer.html?service=http://${EVIL}&key=pk_any`);
    // Scripts the page adds while it loads hold its load event back: by now every one of them was requested.
    assert.deepEqual(seen, { attempted: [], sent: [] }, "the page never reached for that host");
    assert.equal(response.status(), 200);
    assert.match(response.headers()["content-security-policy"], /script-src 'self';/);
    await page.getByRole("alert").waitFor();
    assert.match(await page.getByRole("alert").textContent(), /must be a loopback origin/);
    assert.equal(await page.locator("agent-thread").count(), 0, "no widget was loaded from anywhere");

    // Even a script element some other way names that host is refused by the page's policy, before the network.
    const src = `http://${EVIL}/test/boot.js`;
    const failed = page.waitForEvent("requestfailed", (request) => request.url() === src);
    const violation = await page.evaluate(
      (url) =>
        new Promise((resolve) => {
          document.addEventListener(
            "securitypolicyviolation",
            (event) => resolve(`${event.effectiveDirective} ${event.blockedURI}`),
            { once: true },
          );
          const script = document.createElement("script");
          script.src = url;
          document.head.append(script);
        }),
      src,
    );
    assert.equal(violation, `script-src-elem ${src}`);
    assert.equal((await failed).failure()?.errorText, "csp", "blocked by the policy");
    assert.deepEqual(seen.sent, [], "nothing reached the network");
  });

  it("still loads and connects the widget from a loopback service at another origin", async () => {
    const agent = await seedAgent(BASE_URL, API_KEY, {
      slug: `isolation-${Date.now().toString(36)}`,
      visibility: "public",
      local: { chunks: 4, chunkDelayMs: 10 },
      origin: OTHER_ORIGIN,
    });
    const query = new URLSearchParams({ key: agent.publicKey, service: BASE_URL, persist: "memory" });
    const { page, log } = await openWidgetPage(browser, {
      url: `${OTHER_ORIGIN}/test/customer.html?${query}`,
    });
    await openAndConnect(page);
    assert.deepEqual(await page.evaluate(() => window.cspViolations), []);
    assert.deepEqual(log.errors, []);
  });
});
