// The console's cookie session in a real Chromium against `wrangler dev` on plain http: the browser keeps the
// `__Host-console` cookie (Secure, HttpOnly, SameSite=Strict) on 127.0.0.1 and on localhost, sends it only to its own
// origin, and the admin API answers the page that holds the session's CSRF token.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AdminClient } from "agent-threads/client";
import { API_KEY, BASE_URL, OTHER_ORIGIN, useBrowser } from "./helpers.mjs";

/** A page on `origin` (any same-origin document will do: the health route's). */
async function pageOn(browser, origin) {
  const page = await browser.context.newPage();
  browser.track(page);
  await page.goto(`${origin}/v1/health`);
  return page;
}

/** `fetch` inside the page: the browser decides which cookies go along. */
function pageFetch(page, path, { method = "GET", body, csrf } = {}) {
  return page.evaluate(
    async ({ path, method, body, csrf }) => {
      const headers = { Accept: "application/json" };
      if (body !== undefined) headers["Content-Type"] = "application/json";
      if (csrf !== undefined) headers["X-Console-CSRF"] = csrf;
      const res = await fetch(path, {
        method,
        headers,
        credentials: "same-origin",
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      return { status: res.status, body: text === "" ? null : JSON.parse(text) };
    },
    { path, method, body, csrf },
  );
}

async function sessionCookie(browser, origin) {
  return (await browser.context.cookies(origin)).find((cookie) => cookie.name === "__Host-console");
}

describe("the console session in Chromium", () => {
  const browser = useBrowser();

  for (const origin of [BASE_URL, OTHER_ORIGIN]) {
    it(`keeps the Secure __Host- cookie on ${new URL(origin).hostname} over http and signs in and out`, async () => {
      const page = await pageOn(browser, origin);
      const signedIn = await pageFetch(page, "/v1/console/session", {
        method: "POST",
        body: { apiKey: API_KEY },
      });
      assert.equal(signedIn.status, 201, JSON.stringify(signedIn.body));
      const { csrfToken, scope } = signedIn.body;
      assert.equal(scope, "admin");

      const cookie = await sessionCookie(browser, origin);
      assert.ok(cookie, "the browser kept the session cookie");
      assert.equal(cookie.httpOnly, true);
      assert.equal(cookie.secure, true);
      assert.equal(cookie.sameSite, "Strict");
      assert.equal(cookie.path, "/");
      assert.equal(cookie.domain, new URL(origin).hostname);
      // HttpOnly: the page's script never sees it.
      assert.equal(await page.evaluate(() => document.cookie.includes("__Host-console")), false);

      const agents = await pageFetch(page, "/v1/agents", { csrf: csrfToken });
      assert.equal(agents.status, 200, JSON.stringify(agents.body));
      assert.ok(agents.body.items.length >= 1);
      assert.equal((await pageFetch(page, "/v1/agents")).status, 403);

      // A reload keeps the cookie; the session answers its CSRF token again.
      await page.reload();
      const restored = await pageFetch(page, "/v1/console/session");
      assert.equal(restored.status, 200);
      assert.equal(restored.body.csrfToken, csrfToken);

      const out = await pageFetch(page, "/v1/console/session", { method: "DELETE", csrf: csrfToken });
      assert.equal(out.status, 204);
      assert.equal(await sessionCookie(browser, origin), undefined);
      assert.equal((await pageFetch(page, "/v1/agents", { csrf: csrfToken })).status, 401);
    });
  }

  it("never sends the cookie with another site's request", async () => {
    const own = await pageOn(browser, BASE_URL);
    const signedIn = await pageFetch(own, "/v1/console/session", {
      method: "POST",
      body: { apiKey: API_KEY },
    });
    assert.equal(signedIn.status, 201);
    const admin = new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });
    const before = (await admin.agents.list({ limit: 200 })).items.length;

    // localhost and 127.0.0.1 are different sites: a page on one posting to the other, as a form would.
    const other = await pageOn(browser, OTHER_ORIGIN);
    await other.evaluate(async (target) => {
      await fetch(`${target}/v1/agents`, {
        method: "POST",
        mode: "no-cors",
        credentials: "include",
        headers: { "Content-Type": "text/plain" },
        body: JSON.stringify({ slug: "csrf-attempt", name: "x", visibility: "public", allowedOrigins: [] }),
      }).catch(() => undefined);
    }, BASE_URL);
    assert.equal((await admin.agents.list({ limit: 200 })).items.length, before);

    await pageFetch(own, "/v1/console/session", { method: "DELETE", csrf: signedIn.body.csrfToken });
  });
});
