// The console's data screens in Chromium against `wrangler dev`: a conversation with a tool call and an edited
// branch opens as a tree (both branches reachable), its run's model input verifies, search finds it, export
// downloads it, erasure removes it everywhere; analytics charts count its turns; an API key is shown once and
// revoked; a secret is listed without its value; a webhook endpoint's deliveries appear in its log and redeliver.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { after, before, describe, test } from "node:test";
import { AdminClient } from "agent-threads/client";
import { request } from "../../scripts/lib/http-client.mjs";
import {
  CONSOLE_KEYS,
  checkScreen,
  cspViolations,
  PHONE,
  signIn,
  useConsoleBrowser,
  waitForHeading,
} from "./console-helpers.mjs";
import { API_KEY, BASE_URL, eventually, waitForText } from "./helpers.mjs";

const admin = new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });

/** A local HTTP server answering every POST with `answer(body)` as JSON; records each request body. */
async function startServer(answer) {
  const received = [];
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      received.push({ headers: req.headers, body });
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer(body)));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** A private agent whose every turn first calls the `lookup_order` tool (the local model's scripted call). */
async function seedToolAgent(toolUrl) {
  const alias = `order-tool-${Date.now()}`;
  await admin.secrets.put(alias, `whsec_${randomBytes(32).toString("base64")}`);
  const agent = await admin.agents.create({
    slug: `orders-${Date.now()}`,
    name: "Order desk",
    visibility: "private",
    allowedOrigins: [],
  });
  const draft = await admin.drafts.put(
    agent.id,
    {
      schemaVersion: 1,
      name: "Order desk",
      instructions: "Look orders up.",
      model: {
        provider: "local",
        model: "echo",
        local: { chunks: 4, chunkDelayMs: 10, toolCall: { name: "lookup_order", input: { orderId: "42" } } },
      },
      tools: [
        {
          name: "lookup_order",
          description: "Finds an order.",
          url: `${toolUrl}/orders`,
          signingSecret: alias,
          inputSchema: { type: "object", properties: { orderId: { type: "string" } } },
        },
      ],
    },
    0,
  );
  const version = await admin.versions.publish(agent.id, draft.revision);
  const release = await admin.releases.create(agent.id, {
    environment: "development",
    allocations: [{ version: version.version, weight: 10_000 }],
  });
  await admin.releases.activate(agent.id, release.id);
  return agent;
}

/** One turn over HTTP, waiting for the reply; `parentId` forks below that entry. */
async function turn(launch, text, parentId) {
  const res = await request(BASE_URL, "POST", `/v1/threads/${launch.threadId}/messages`, {
    token: launch.token,
    body: {
      clientMessageId: `cm_${randomBytes(8).toString("hex")}`,
      text,
      ...(parentId ? { parentId } : {}),
    },
    timeoutMs: 30_000,
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.equal(res.body.run.status, "succeeded", JSON.stringify(res.body.run));
  return res.body.entries;
}

/**
 * u1 "Where is order <word>?" ─ a1 (tool call) ─ u2 "Thanks for checking" ─ a2
 *                                            └─ u2' "And order 43, <word>?" ─ a2'   (a fork below a1: the current leaf)
 */
async function seedConversation(agentId, word) {
  const subject = `console-${randomBytes(6).toString("hex")}`;
  const launch = await admin.launch({ agentId, subject });
  const [u1, a1] = await turn(launch, `Where is order ${word}?`);
  await turn(launch, "Thanks for checking");
  const [forked] = await turn(launch, `And order 43, ${word}?`, a1.id);
  await eventually(
    async () => (await admin.sessions.messages(launch.threadId)).items.length >= 6,
    "the projection",
  );
  return { threadId: launch.threadId, subject, u1, a1, forked };
}

describe("console: sessions, analytics, keys, secrets, webhooks", () => {
  const browser = useConsoleBrowser();
  /** A page at `path`, signed in with the tests' admin key; the screen of `path` shows once signed in. */
  const open = async (path, options = {}) => {
    const { viewport, ...rest } = options;
    const { page, log } = await browser.open({ path, ...rest });
    await signIn(page, CONSOLE_KEYS.admin);
    // Signed out, the page's session check answers 401 (logged by the browser); only what follows sign-in counts.
    log.errors.length = 0;
    // The shell folds its navigation on a phone, where signIn could not see it: sign in wide, then narrow.
    if (viewport) await page.setViewportSize(viewport);
    return { page, log };
  };
  let tools;
  let agent;
  let seeded;
  /** A word no other test writes: the search must find exactly this conversation. */
  const word = `zebra${randomBytes(3).toString("hex")}`;

  before(async () => {
    tools = await startServer(() => ({ status: "shipped", carrier: "Northwind" }));
    agent = await seedToolAgent(tools.url);
    seeded = await seedConversation(agent.id, word);
  });
  after(async () => {
    await tools?.close();
  });

  test("the session view shows the tree: both branches, the tool call, and the run's verified model input", async () => {
    const { page, log } = await open(`/console/sessions/${seeded.threadId}`);
    await waitForHeading(page, `Where is order ${word}?`);

    const outline = page.getByRole("navigation", { name: "2 branches" });
    await outline.waitFor();
    assert.equal(await outline.getByRole("button").count(), 2);
    await outline.getByRole("button", { name: /^Branch 1 .*Thanks for checking/ }).waitFor();
    // It opens on the thread's own leaf: the fork.
    const conversation = page.getByRole("list", { name: /^Messages of branch 2/ });
    await waitForText(conversation, "The lookup_order tool returned");
    assert.match(await conversation.textContent(), new RegExp(`And order 43, ${word}\\?`));
    assert.doesNotMatch(await conversation.textContent(), /Thanks for checking/);

    // The fork's switcher reaches the other branch, and back.
    const switcher = page.getByRole("group", { name: /Alternative 2 of 2: edited or resent message/ });
    await switcher.getByRole("button", { name: /Previous alternative/ }).click();
    const first = page.getByRole("list", { name: /^Messages of branch 1/ });
    await waitForText(first, "Thanks for checking");
    assert.doesNotMatch(await first.textContent(), /And order 43/);
    // Focus stays on the fork's switcher (now on the first alternative, where only "next" is left); it moves there
    // once the branch has rendered, so it is awaited, not read at once.
    await page
      .waitForFunction(
        () => /^Next alternative/.test(document.activeElement?.getAttribute("aria-label") ?? ""),
        null,
        {
          timeout: 5_000,
        },
      )
      .catch(() => {});
    const focusedLabel = await page.evaluate(() => document.activeElement?.getAttribute("aria-label"));
    assert.match(focusedLabel ?? "", /^Next alternative/);
    await waitForText(
      page.getByRole("status").filter({ hasText: "Showing branch" }),
      "Showing branch 1 of 2.",
    );
    await outline.getByRole("button", { name: /Branch 2 \(current\)/ }).click();
    await waitForText(page.getByRole("list", { name: /^Messages of branch 2/ }), "And order 43");

    // The first reply carries its tool call and the tool's answer.
    const toolCall = page.locator("details", { hasText: "Tool call lookup_order" }).first();
    await toolCall.locator("summary").click();
    await waitForText(toolCall, '"orderId": "42"');
    await waitForText(toolCall, "Northwind");
    assert.ok(tools.received.length >= 3, "the tool server was called for each turn");

    // The reply's model input, rebuilt from storage, verifies against the digest the message list carries.
    const messages = (await admin.sessions.messages(seeded.threadId)).items;
    const reply = messages.find((m) => m.id === seeded.a1.id);
    assert.ok(reply.inputDigest?.startsWith("sha256:"));
    const firstReply = page.locator(`#entry-${seeded.a1.id}`);
    await firstReply.getByRole("button", { name: "Model input" }).click();
    const audit = firstReply.getByRole("region", { name: /Model input of run/ });
    await waitForText(audit, "Verified");
    await waitForText(audit, reply.inputDigest);
    await waitForText(audit, `Where is order ${word}?`);
    // That reply called a tool: its run made two model calls, the last one shown; the first is a click away, and the
    // digest the message list carries is the first call's.
    await waitForText(audit, "2 of 2");
    await audit.getByRole("button", { name: "Call 1" }).click();
    await waitForText(audit, "1 of 2");
    await waitForText(audit, "Verified");
    assert.equal(await audit.locator("dd code").first().textContent(), reply.inputDigest);

    await checkScreen(page, "console-session-tree");
    assert.deepEqual(await cspViolations(page), []);
    assert.deepEqual(log.errors, []);
  });

  test("search finds the conversation by a word of its text and opens its branch at the match", async () => {
    const { page } = await open("/console/sessions");
    // The words travel in the search's JSON body, never in an API URL (docs/privacy.md#end-user-ids-stay-out-of-urls).
    const apiRequests = [];
    page.on("request", (r) => {
      const url = new URL(r.url());
      if (url.pathname.startsWith("/v1/"))
        apiRequests.push({ method: r.method(), url: r.url(), body: r.postData() });
    });
    await page.getByRole("searchbox", { name: "Search messages" }).fill(word);
    await page.getByRole("button", { name: "Search" }).click();
    const results = page.getByRole("list", { name: `Conversations matching “${word}”` });
    await results.waitFor();
    // The list keeps the unfiltered rows until the search answers; the search's rows each carry a snippet.
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll(".session-list > li")];
      return rows.length > 0 && rows.every((row) => row.querySelector(".snippet mark"));
    });
    assert.equal(await results.getByRole("listitem").count(), 1);
    assert.equal(await results.locator("mark").first().textContent(), word);
    // The words stay in the address's fragment, which no request carries.
    assert.match(page.url(), new RegExp(`#(.*&)?q=${word}`));
    assert.ok(!new URL(page.url()).search.includes(word), "the search words are not in the page's query");
    const searches = apiRequests.filter((r) => r.method === "POST" && r.url.endsWith("/v1/sessions/search"));
    assert.ok(
      searches.some((r) => JSON.parse(r.body ?? "{}").q === word),
      "the search posts its words",
    );
    assert.deepEqual(
      apiRequests.filter((r) => r.url.includes(word)).map((r) => r.url),
      [],
    );
    await checkScreen(page, "console-sessions-search");

    await results.getByRole("link").click();
    await waitForHeading(page, `Where is order ${word}?`);
    // The newest matching message is the fork's; it is marked where the branch shows it.
    await page.locator('.msg[aria-current="true"]', { hasText: `And order 43, ${word}?` }).waitFor();
  });

  test("sessions list and session view fit a phone screen", async () => {
    const { page } = await open(`/console/sessions#subject=${seeded.subject}`, { viewport: PHONE });
    const screens = [
      ["console-sessions-phone", `/console/sessions#subject=${seeded.subject}`, ".session-row"],
      ["console-session-phone", `/console/sessions/${seeded.threadId}`, ".conversation"],
    ];
    for (const [name, path, content] of screens) {
      await page.goto(`${BASE_URL}${path}`);
      await page.locator(content).first().waitFor();
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= PHONE.width, `${path} is ${width}px wide on a ${PHONE.width}px screen`);
      await checkScreen(page, name);
    }
  });

  test("the analytics charts count the seeded turns, by day and by version", async () => {
    const { page, log } = await open("/console/analytics");
    await page.getByLabel("Agent").selectOption(agent.id);
    await page.getByRole("button", { name: "Show" }).click();
    const turns = page.getByRole("figure", { name: "Turns and failures per day" });
    await waitForText(turns, "3 turns");
    assert.equal(await turns.getByRole("img").count(), 1);
    await turns.getByText("Data table").click();
    const today = new Date().toISOString().slice(0, 10);
    const row = turns.getByRole("row", { name: new RegExp(`^${today}`) });
    assert.deepEqual(await row.getByRole("cell").allTextContents(), ["3", "0"]);
    assert.ok((await turns.locator("rect.series-1").count()) >= 1, "a bar for the day's turns");
    await page.getByRole("figure", { name: "Tokens per day" }).waitFor();
    await page.getByRole("figure", { name: "Time to first delta per day" }).waitFor();

    const versions = page.getByRole("region", { name: "Versions compared" });
    const v1 = versions.getByRole("row", { name: /^v1/ });
    await waitForText(v1, "100.00%");
    assert.equal((await v1.getByRole("cell").allTextContents())[2], "3");
    await checkScreen(page, "console-analytics");
    assert.deepEqual(await cspViolations(page), []);
    assert.deepEqual(log.errors, []);
  });

  test("export downloads the conversation's JSON; erasure asks first, then it is gone from the list and its URL", async () => {
    const { page } = await open(`/console/sessions/${seeded.threadId}`);
    await waitForHeading(page, `Where is order ${word}?`);

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export JSON" }).click(),
    ]);
    assert.equal(download.suggestedFilename(), `conversation-${seeded.threadId}.json`);
    const exported = JSON.parse(readFileSync(await download.path(), "utf8"));
    assert.equal(exported.threadId, seeded.threadId);
    const texts = exported.entries.map((e) => e.body?.text);
    for (const text of [`Where is order ${word}?`, "Thanks for checking", `And order 43, ${word}?`])
      assert.ok(texts.includes(text), `the export holds "${text}"`);

    // Cancel changes nothing.
    await page.getByRole("button", { name: "Erase…" }).click();
    const dialog = page.getByRole("dialog", { name: "Erase this conversation?" });
    await dialog.waitFor();
    await checkScreen(page, "console-session-erase");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    assert.equal((await admin.sessions.get(seeded.threadId)).threadId, seeded.threadId);

    await page.getByRole("button", { name: "Erase…" }).click();
    await dialog.getByRole("button", { name: "Erase conversation" }).click();
    await waitForHeading(page, "Conversation erased");
    await page.getByRole("link", { name: "Back to the sessions" }).click();

    await page.goto(`${BASE_URL}/console/sessions#subject=${seeded.subject}`);
    await waitForText(
      page.getByRole("status").filter({ hasText: "No conversation" }),
      "No conversation matches.",
    );
    await page.goto(`${BASE_URL}/console/sessions/${seeded.threadId}`);
    await waitForHeading(page, "Conversation not found");
    const res = await request(BASE_URL, "GET", `/v1/sessions/${seeded.threadId}`, { token: API_KEY });
    assert.equal(res.status, 404);
  });

  test("an API key is shown once with a copy button, listed by its last four, and revoked after confirming", async () => {
    const { page } = await open("/console/keys");
    const name = `Reporting ${randomBytes(3).toString("hex")}`;
    await page.getByLabel("Name", { exact: true }).fill(name);
    await page.getByLabel(/^Read/).check();
    await page.getByRole("button", { name: "Create key" }).click();
    const shown = page.getByRole("region", { name: `New read key “${name}”` });
    await waitForText(shown, "shown only this once");
    const key = await shown.getByLabel("API key").inputValue();
    assert.match(key, /^sk_/);
    await shown.getByRole("button", { name: "Copy API key" }).waitFor();
    const works = await request(BASE_URL, "GET", "/v1/agents", { token: key });
    assert.equal(works.status, 200);
    await checkScreen(page, "console-keys-created");
    await shown.getByRole("button", { name: "I have saved it" }).click();
    await shown.waitFor({ state: "detached" });
    // Gone from the page: the key is never shown again.
    assert.equal((await page.content()).includes(key), false);

    const row = page.getByRole("row", { name: new RegExp(name) });
    await waitForText(row, key.slice(-4));
    await row.getByRole("button", { name: `Revoke ${name}` }).click();
    const dialog = page.getByRole("dialog", { name: `Revoke “${name}”?` });
    await dialog.getByRole("button", { name: "Revoke key" }).click();
    await waitForText(row, "revoked");
    const refused = await request(BASE_URL, "GET", "/v1/agents", { token: key });
    assert.equal(refused.status, 401);
  });

  test("a secret is set write-only: listed by alias, its value never shown", async () => {
    const { page } = await open("/console/secrets");
    const alias = `provider-${randomBytes(3).toString("hex")}`;
    const value = `sk-live-${randomBytes(12).toString("hex")}`;
    await page.getByLabel("Alias", { exact: true }).fill(alias);
    await page.getByLabel("Value", { exact: true }).fill(value);
    await page.getByRole("button", { name: "Save secret" }).click();
    await waitForText(page.getByRole("status"), `Saved “${alias}”`);
    const row = page.getByRole("row", { name: new RegExp(alias) });
    await waitForText(row, "hidden (write-only)");
    assert.equal(await page.getByLabel("Value", { exact: true }).inputValue(), "");
    assert.equal((await page.content()).includes(value), false);
    const listed = await admin.secrets.list({ limit: 200 });
    assert.ok(listed.items.some((s) => s.alias === alias));
    assert.equal(JSON.stringify(listed).includes(value), false);
    await checkScreen(page, "console-secrets");
  });

  test("a webhook endpoint: the secret shown once, its deliveries in the log, and a redelivery", async () => {
    const receiver = await startServer(() => ({ ok: true }));
    try {
      const { page } = await open("/console/webhooks");
      const form = page.getByRole("form", { name: "Add an endpoint" });
      await form.getByLabel("URL").fill(`${receiver.url}/hooks`);
      for (const type of ["message.feedback", "handoff.requested", "session.erased", "run.failed"]) {
        await form.getByRole("checkbox", { name: new RegExp(type.replace(".", "\\.")) }).uncheck();
      }
      await form.getByLabel("Description (optional)").fill("CRM");
      await form.getByRole("button", { name: "Add endpoint" }).click();
      const secret = page.getByRole("region", { name: /^Signing secret of/ });
      await waitForText(secret, "shown only this once");
      assert.match(await secret.getByLabel("Signing secret").inputValue(), /^whsec_/);
      await secret.getByRole("button", { name: "I have saved it" }).click();

      // A conversation happens: thread.created, then run.succeeded.
      const launch = await admin.launch({
        agentId: agent.id,
        subject: `hook-${randomBytes(4).toString("hex")}`,
      });
      await turn(launch, "Hello hooks");
      await eventually(() => receiver.received.length >= 2, "two deliveries");

      const endpoint = page.getByRole("listitem").filter({ hasText: `${receiver.url}/hooks` });
      await endpoint.getByRole("button", { name: "Delivery log" }).click();
      const log = endpoint.getByRole("region", { name: `Deliveries to ${receiver.url}/hooks` });
      await eventually(async () => {
        await endpoint.getByRole("button", { name: "Refresh" }).click();
        const text = await endpoint.textContent();
        return text.includes("run.succeeded") && text.includes("thread.created") ? true : undefined;
      }, "the delivery log");
      const created = log.getByRole("row", { name: /thread\.created/ });
      await waitForText(created, "succeeded");
      await waitForText(created, "HTTP 200");
      await checkScreen(page, "console-webhooks");

      const before = receiver.received.length;
      await created.getByRole("button", { name: /^Redeliver thread\.created/ }).click();
      await waitForText(endpoint.getByRole("status"), "Queued a new delivery of thread.created");
      await eventually(() => receiver.received.length > before, "the redelivery");
      // The same event again: the redelivery carries the first delivery's webhook-id.
      const createdId = receiver.received.find((r) => JSON.parse(r.body).type === "thread.created")?.headers[
        "webhook-id"
      ];
      assert.ok(createdId);
      assert.equal(receiver.received.at(-1).headers["webhook-id"], createdId);
    } finally {
      await receiver.close();
    }
  });
});
