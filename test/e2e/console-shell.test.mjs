// The console in a real browser: signing in with a key (which the browser never keeps), the agents list, creating an
// agent, changing its settings, rotating its key; signing out for good; a read-only key's console; the session
// cookie refused cross-site; the page's CSP; axe on every screen at desktop and phone sizes, light and dark.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AdminClient, launchPublic, OperatorClient } from "agent-threads/client";
import {
  browserStorage,
  CONSOLE_KEYS,
  checkScreen,
  consoleFetch,
  cspViolations,
  csrfToken,
  focused,
  focusedOnceSettled,
  PHONE,
  signIn,
  signOut,
  useConsoleBrowser,
  waitForHeading,
} from "./console-helpers.mjs";
import { API_KEY, BASE_URL, OPERATOR_TOKEN, OTHER_ORIGIN, waitForText } from "./helpers.mjs";
import { seedAgent } from "./server.mjs";

const admin = new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });

/** A slug no other run or test uses. */
const unique = (prefix) => `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

async function agentBySlug(slug) {
  for await (const agent of admin.agents.all()) if (agent.slug === slug) return agent;
  return undefined;
}

describe("the console", () => {
  const browser = useConsoleBrowser();

  it("answers its page with the strict CSP, Trusted Types included, and renders under it", async () => {
    const { page, response } = await browser.open({ path: "/console/agents" });
    const csp = response.headers()["content-security-policy"] ?? "";
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "require-trusted-types-for 'script'",
      "trusted-types 'none'",
      "frame-ancestors 'self'",
    ]) {
      assert.ok(csp.includes(directive), `CSP has ${directive}: ${csp}`);
    }
    await page.getByRole("heading", { level: 1, name: "Sign in to the console" }).waitFor();
    await signIn(page, CONSOLE_KEYS.admin);
    await waitForHeading(page, "Agents");
    assert.deepEqual(await cspViolations(page), []);
  });

  it("signs in, lists agents, creates one, saves its settings and rotates its key", async () => {
    const { page, log } = await browser.open();
    await signIn(page, CONSOLE_KEYS.admin);
    await waitForHeading(page, "Agents");
    assert.equal(new URL(page.url()).pathname, "/console/agents");
    // The seeded agents are listed by name with their slug.
    const table = page.getByRole("table", { name: "Agents" });
    await waitForText(table, "fast");
    assert.ok((await table.textContent()).includes("presented"));

    const slug = unique("console-made");
    await page.getByRole("button", { name: "New agent" }).click();
    await page.getByLabel("Name").fill("Console made");
    // The slug follows the name until edited.
    assert.equal(await page.getByLabel("Slug").inputValue(), "console-made");
    await page.getByLabel("Slug").fill(slug);
    await page.getByLabel("Allowed origins").fill("https://Shop.example.com\nhttps://*.example.org");
    await page.getByRole("button", { name: "Create agent" }).click();

    await waitForHeading(page, "Console made");
    assert.deepEqual(
      await focusedOnceSettled(page, { tag: "h1", text: "Console made" }),
      { tag: "h1", text: "Console made" },
      "focus moved to the new page",
    );
    await waitForText(page.getByRole("status"), "Agent “Console made” created.");
    const created = await agentBySlug(slug);
    assert.ok(created, "the agent exists in the API");
    assert.deepEqual(created.allowedOrigins, ["https://shop.example.com", "https://*.example.org"]);
    assert.equal(new URL(page.url()).pathname, `/console/agents/${created.id}`);

    // The embed snippet is the README's script tag with this host and this agent's key, and copies as such.
    const snippet = `<script src="${BASE_URL}/embed.js" data-agent-key="${created.publicKey}" async></script>`;
    assert.equal((await page.locator("pre.snippet").textContent()).trim(), snippet);
    await page.getByRole("button", { name: "Copy embed snippet" }).click();
    await waitForText(page.getByRole("status"), "Copied to the clipboard.");
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), snippet);

    // Links to the agent's other pages.
    const sub = page.getByRole("navigation", { name: "This agent" });
    for (const [label, suffix] of [
      ["Draft", "/draft"],
      ["Playground", "/playground"],
      ["Versions", "/versions"],
      ["Releases", "/releases"],
    ]) {
      assert.equal(
        await sub.getByRole("link", { name: label }).getAttribute("href"),
        `/console/agents/${created.id}${suffix}`,
      );
    }

    // Settings: private, one more origin, disabled, 30-day retention.
    await page.getByLabel(/^Private/).check();
    await page.getByLabel("Allowed origins").fill("https://shop.example.com\nhttps://admin.example.com");
    await page.getByLabel("Status").selectOption("disabled");
    await page.getByLabel(/Delete conversations older than/).check();
    await page.getByLabel("Maximum age in days").fill("30");
    await page.getByRole("button", { name: "Save settings" }).click();
    await waitForText(page.getByRole("status"), "Settings saved.");
    const saved = await admin.agents.get(created.id);
    assert.deepEqual(
      {
        visibility: saved.visibility,
        status: saved.status,
        allowedOrigins: saved.allowedOrigins,
        retention: saved.retention,
      },
      {
        visibility: "private",
        status: "disabled",
        allowedOrigins: ["https://shop.example.com", "https://admin.example.com"],
        retention: { maxAgeDays: 30 },
      },
    );
    // A bad origin is refused under its field, and nothing changes.
    await page.getByLabel("Allowed origins").fill("ftp://nope.example.com/path");
    await page.getByRole("button", { name: "Save settings" }).click();
    await waitForText(page.locator("#settings-origins-error"), "Entry 1:");
    assert.equal(await page.getByLabel("Allowed origins").getAttribute("aria-invalid"), "true");
    assert.deepEqual((await admin.agents.get(created.id)).allowedOrigins, saved.allowedOrigins);

    // After a reload the form shows what was stored.
    await page.reload();
    await waitForHeading(page, "Console made");
    assert.equal(await page.getByLabel("Status").inputValue(), "disabled");
    assert.equal(await page.getByLabel("Maximum age in days").inputValue(), "30");
    assert.ok(await page.getByLabel(/^Private/).isChecked());

    // Rotation asks first; Escape and Cancel keep the key.
    await page.getByRole("button", { name: "Rotate public key…" }).click();
    const dialog = page.getByRole("dialog", { name: "Rotate the public key?" });
    await dialog.waitFor();
    assert.deepEqual(await focused(page), { tag: "button", text: "Cancel" }, "focus starts on Cancel");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    assert.deepEqual(await focused(page), { tag: "button", text: "Rotate public key…" }, "focus returns");
    assert.equal((await admin.agents.get(created.id)).publicKey, created.publicKey);
    await page.getByRole("button", { name: "Rotate public key…" }).click();
    await dialog.getByRole("button", { name: "Rotate key" }).click();
    await dialog.waitFor({ state: "hidden" });
    await waitForText(page.getByRole("status"), "New key issued");
    const rotated = await admin.agents.get(created.id);
    assert.notEqual(rotated.publicKey, created.publicKey);
    assert.equal(await page.locator(".public-key").textContent(), rotated.publicKey);
    assert.ok((await page.locator("pre.snippet").textContent()).includes(rotated.publicKey));

    // Navigation by the menu moves focus to the new page's heading.
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Agents" }).click();
    await waitForHeading(page, "Agents");
    assert.deepEqual(await focusedOnceSettled(page, { tag: "h1", text: "Agents" }), {
      tag: "h1",
      text: "Agents",
    });
    assert.deepEqual(await cspViolations(page), []);
    assert.deepEqual(log.errors, []);
  });

  it("never keeps the key in the browser: not in storage, IndexedDB, cookies readable by script, or the DOM", async () => {
    const { page, context } = await browser.open();
    await signIn(page, CONSOLE_KEYS.admin);
    await waitForHeading(page, "Agents");
    const stored = await browserStorage(page);
    for (const [where, text] of Object.entries(stored)) {
      assert.ok(!text.includes(CONSOLE_KEYS.admin), `the key is not in ${where}`);
      assert.ok(!text.includes("sk_"), `no key at all in ${where}: ${text}`);
    }
    assert.equal(stored.indexedDB, "[]", "no IndexedDB database");
    assert.equal(stored.cookie, "", "the session cookie is not readable by script");
    const cookies = await context.cookies(BASE_URL);
    const session = cookies.find((c) => c.name === "__Host-console");
    assert.ok(session, `the session cookie is set: ${cookies.map((c) => c.name)}`);
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, "Strict");
    assert.ok(!session.value.includes(CONSOLE_KEYS.admin));
    assert.ok(!(await page.content()).includes(CONSOLE_KEYS.admin), "the key is not left in the page");
  });

  it("signs out: back to the sign-in, and the old cookie no longer opens anything", async () => {
    const { page, context } = await browser.open();
    await signIn(page, CONSOLE_KEYS.admin);
    await waitForHeading(page, "Agents");
    const csrf = await csrfToken(page);
    assert.ok(csrf);
    const cookie = (await context.cookies(BASE_URL)).find((c) => c.name === "__Host-console");
    const withOldCookie = () =>
      fetch(`${BASE_URL}/v1/agents`, {
        headers: {
          Cookie: `${cookie.name}=${cookie.value}`,
          Origin: BASE_URL,
          "Sec-Fetch-Site": "same-origin",
          "X-Console-CSRF": csrf,
        },
      });
    assert.equal((await withOldCookie()).status, 200, "the cookie works while signed in");

    await signOut(page);
    await waitForText(page.getByRole("status"), "Signed out.");
    assert.equal((await withOldCookie()).status, 401, "the old cookie is refused after sign-out");
    // A reload stays signed out.
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "Sign in to the console" }).waitFor();
    assert.equal((await consoleFetch(page, "GET", "/v1/agents", { csrf })).status, 401);
  });

  it("refuses a wrong key with a message, and keeps the form", async () => {
    const { page } = await browser.open();
    await page.getByLabel("API key").fill("sk_not_a_real_key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await waitForText(page.getByRole("alert"), /./);
    assert.equal(await page.getByLabel("API key").getAttribute("aria-invalid"), "true");
    assert.equal(await page.getByRole("navigation", { name: "Console" }).count(), 0);
  });

  it("gives a read-only key a read-only console: writes disabled, and a forced write answers 403", async () => {
    const { page } = await browser.open();
    await signIn(page, CONSOLE_KEYS.read);
    await waitForHeading(page, "Agents");
    assert.equal(await page.locator(".badge").textContent(), "read-only");
    await waitForText(page.locator("#read-only-note"), "read-only key");
    const create = page.getByRole("button", { name: "New agent" });
    assert.equal(await create.isDisabled(), true);
    assert.equal(await create.getAttribute("aria-describedby"), "read-only-note");

    const fast = await agentBySlug("fast");
    await page.locator(`a[href="/console/agents/${fast.id}"]`).click();
    await waitForHeading(page, "Demo agent");
    assert.equal(await page.getByRole("button", { name: "Save settings" }).isDisabled(), true);
    assert.equal(await page.getByRole("button", { name: "Rotate public key…" }).isDisabled(), true);
    assert.equal(await page.getByLabel("Name").isDisabled(), true);
    // Reading still works: the snippet can be copied.
    await page.getByRole("button", { name: "Copy embed snippet" }).click();
    await waitForText(page.getByRole("status"), "Copied to the clipboard.");
    await checkScreen(page, "agent-read-only");

    const csrf = await csrfToken(page);
    const forced = await consoleFetch(page, "PATCH", `/v1/agents/${fast.id}`, {
      body: { name: "Renamed by a reader" },
      csrf,
    });
    assert.equal(forced.status, 403, forced.body);
    assert.equal(JSON.parse(forced.body).error.code, "forbidden");
    assert.equal((await admin.agents.get(fast.id)).name, fast.name);
  });

  it("refuses the session cookie on a cross-site request, and nothing changes", async () => {
    const { page, context } = await browser.open();
    await signIn(page, CONSOLE_KEYS.admin);
    await waitForHeading(page, "Agents");
    const slug = unique("cross-site");
    const before = (await admin.agents.list({ limit: 200 })).items.length;

    const other = await browser.newPage(context);
    await other.goto(`${OTHER_ORIGIN}/favicon.svg`);
    const attempts = await other.evaluate(
      async ([base, body]) => {
        const tries = [
          // A "simple" request: no preflight, so only the server can refuse it.
          { method: "POST", headers: { "Content-Type": "text/plain" }, body },
          { method: "POST", headers: { "Content-Type": "application/json" }, body },
          {
            method: "POST",
            headers: { "Content-Type": "application/json", "X-Console-CSRF": "guessed" },
            body,
          },
        ];
        const out = [];
        for (const init of tries) {
          try {
            const res = await fetch(`${base}/v1/agents`, { ...init, credentials: "include" });
            out.push(res.status);
          } catch {
            out.push("blocked");
          }
        }
        // And a form post, as a page could send without script.
        try {
          await fetch(`${base}/v1/agents`, { method: "POST", mode: "no-cors", credentials: "include", body });
          out.push("sent");
        } catch {
          out.push("blocked");
        }
        return out;
      },
      [BASE_URL, JSON.stringify({ slug, name: "Cross-site", visibility: "public", allowedOrigins: [] })],
    );
    for (const status of attempts.slice(0, 3))
      assert.ok(status === "blocked" || status >= 400, String(status));
    assert.equal(await agentBySlug(slug), undefined, `no agent was created (${attempts})`);
    assert.equal((await admin.agents.list({ limit: 200 })).items.length, before);
    // The same request from the console's own page, with the cookie and the CSRF header, works.
    const csrf = await csrfToken(page);
    const own = await consoleFetch(page, "GET", "/v1/agents", { csrf });
    assert.equal(own.status, 200);
    // Without the CSRF header the cookie alone is refused, even same-origin.
    assert.ok((await consoleFetch(page, "GET", "/v1/agents")).status >= 401);
  });

  it("pages through a long agent list", async () => {
    const operator = new OperatorClient({ baseUrl: BASE_URL, operatorToken: OPERATOR_TOKEN });
    const tenant = await operator.createTenant("Console paging");
    const owner = new AdminClient({ baseUrl: BASE_URL, apiKey: tenant.apiKey });
    for (let i = 1; i <= 23; i += 1) {
      await owner.agents.create({
        slug: `paged-${String(i).padStart(2, "0")}`,
        name: `Paged agent ${i}`,
        visibility: "public",
        allowedOrigins: [],
      });
    }
    const { page } = await browser.open();
    await signIn(page, tenant.apiKey);
    await waitForHeading(page, "Agents");
    assert.equal(await page.locator(".tenant").textContent(), "Console paging");
    const rows = page.locator(".table-wrap tbody tr");
    await waitForText(page.locator(".pager"), "Page 1");
    assert.equal(await rows.count(), 20);
    const firstPage = await rows.allTextContents();
    await page.getByRole("button", { name: "Next page" }).click();
    await waitForText(page.locator(".pager"), "Page 2");
    await waitForText(rows.first(), /Paged agent/);
    assert.equal(await rows.count(), 3);
    assert.equal(await page.getByRole("button", { name: "Next page" }).isDisabled(), true);
    const secondPage = await rows.allTextContents();
    assert.equal(new Set([...firstPage, ...secondPage]).size, 23, "every agent once");
    await page.getByRole("button", { name: "Previous page" }).click();
    await waitForText(page.locator(".pager"), "Page 1");
    assert.deepEqual(await rows.allTextContents(), firstPage);
  });

  it("passes axe on every screen at desktop size, light and dark", async () => {
    const { page } = await browser.open();
    await page.getByRole("heading", { level: 1, name: "Sign in to the console" }).waitFor();
    await checkScreen(page, "sign-in");
    await page.getByLabel("API key").fill("sk_wrong");
    await page.getByRole("button", { name: "Sign in" }).click();
    await waitForText(page.getByRole("alert"), /./);
    await checkScreen(page, "sign-in-error");

    await signIn(page, CONSOLE_KEYS.admin);
    await waitForHeading(page, "Agents");
    await waitForText(page.getByRole("table", { name: "Agents" }), "fast");
    await checkScreen(page, "agents");
    await page.getByRole("button", { name: "New agent" }).click();
    await page.getByRole("button", { name: "Create agent" }).click();
    await page.locator(".field-error").first().waitFor();
    await checkScreen(page, "agents-create-errors");

    const fast = await agentBySlug("fast");
    await page.goto(`${BASE_URL}/console/agents/${fast.id}`);
    await waitForHeading(page, "Demo agent");
    await checkScreen(page, "agent");
    await page.getByRole("button", { name: "Rotate public key…" }).click();
    await page.getByRole("dialog").waitFor();
    await checkScreen(page, "agent-rotate-confirm");
    await page.getByRole("button", { name: "Cancel" }).click();

    await page.goto(`${BASE_URL}/console/no-such-page`);
    await waitForHeading(page, "Page not found");
    await checkScreen(page, "not-found");
    assert.deepEqual(await cspViolations(page), []);
  });

  it("works at phone size (390×844): the menu folds, nothing scrolls sideways, axe passes", async () => {
    const { page } = await browser.open({ viewport: PHONE });
    await checkScreen(page, "phone-sign-in");
    await signIn(page, CONSOLE_KEYS.admin);
    await waitForHeading(page, "Agents");
    const nav = page.getByRole("navigation", { name: "Console" });
    const menu = page.getByRole("button", { name: "Menu" });
    assert.equal(await menu.getAttribute("aria-expanded"), "false");
    assert.equal(await nav.getByRole("link", { name: "Sessions" }).isVisible(), false);
    const noSidewaysScroll = () =>
      page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
    assert.ok(await noSidewaysScroll(), "the agents page fits");
    await checkScreen(page, "phone-agents");

    await menu.click();
    assert.equal(await menu.getAttribute("aria-expanded"), "true");
    await nav.getByRole("link", { name: "Sessions" }).waitFor();
    await checkScreen(page, "phone-menu");

    const fast = await agentBySlug("fast");
    await page.goto(`${BASE_URL}/console/agents/${fast.id}`);
    await waitForHeading(page, "Demo agent");
    assert.ok(await noSidewaysScroll(), "the agent page fits");
    await checkScreen(page, "phone-agent");
    await page.getByRole("button", { name: "Rotate public key…" }).click();
    await page.getByRole("dialog").waitFor();
    await checkScreen(page, "phone-agent-rotate-confirm");
  });

  it("a rotated-away key no longer starts conversations; the new one does", async () => {
    const agent = await seedAgent(BASE_URL, API_KEY, {
      slug: unique("rotated"),
      visibility: "public",
      local: { chunks: 2, chunkDelayMs: 5 },
      origin: BASE_URL,
    });
    const launch = (agentKey) =>
      launchPublic({ baseUrl: BASE_URL, agentKey, origin: BASE_URL }).then(
        () => "launched",
        (error) => error.status,
      );
    assert.equal(await launch(agent.publicKey), "launched");
    const { page } = await browser.open({ path: `/console/agents/${agent.id}` });
    await signIn(page, CONSOLE_KEYS.admin);
    await waitForHeading(page, "Demo agent");
    await page.getByRole("button", { name: "Rotate public key…" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Rotate key" }).click();
    await waitForText(page.getByRole("status"), "New key issued");
    const shown = (await page.locator(".public-key").textContent()).trim();
    assert.notEqual(shown, agent.publicKey);
    assert.notEqual(await launch(agent.publicKey), "launched", "the old key is refused");
    assert.equal(await launch(shown), "launched", "the key the console shows works");
  });
});
