// The conversation controls in a real browser: retry a reply, edit the last message, thumbs feedback, past
// conversations, and a person taking over the thread (handoff) — each reachable by keyboard and passing axe.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import AxeBuilder from "@axe-core/playwright";
import { AdminClient, launchPublic } from "agent-threads/client";
import { describeError, request } from "../../scripts/lib/http-client.mjs";
import {
  API_KEY,
  BASE_URL,
  deepFocus,
  eventually,
  OTHER_ORIGIN,
  openAndConnect,
  openWidgetPage,
  send,
  useBrowser,
  waitForHostEvents,
  waitForReply,
  waitForText,
} from "./helpers.mjs";
import { seedAgent } from "./server.mjs";

/** Each test its own thread: sessionStorage belongs to one tab, so a new page starts a new visitor. */
const OWN_TAB = { persist: "session" };

/**
 * The widget as a customer embeds it: on a page of another origin (OTHER_ORIGIN) than the service (BASE_URL), so
 * every call it makes — launch, WebSocket, `GET /v1/me/threads` — is cross-origin and needs the service's CORS.
 */
const HOST_PAGE = `${OTHER_ORIGIN}/test/customer.html`;

const FAST = { chunks: 12, chunkDelayMs: 25 };
const agentKeys = new Map();
/** An echo agent (fast, unless `local` says otherwise) that allows only the customer's origin; one per `local`. */
function customerAgent(local = FAST) {
  const id = JSON.stringify(local);
  if (!agentKeys.has(id)) {
    const slug = `controls-${agentKeys.size}-${Date.now().toString(36)}`;
    const agent = seedAgent(BASE_URL, API_KEY, { slug, visibility: "public", local, origin: OTHER_ORIGIN });
    agentKeys.set(
      id,
      agent.then((a) => a.publicKey),
    );
  }
  return agentKeys.get(id);
}

/** Opens the customer's page (its scripts from the service, at another origin) with the widget. */
async function openCustomerPage(browser, options = {}) {
  const query = new URLSearchParams({
    key: await customerAgent(options.local),
    service: BASE_URL,
    ...OWN_TAB,
  });
  return openWidgetPage(browser, { ...options, url: `${HOST_PAGE}?${query}` });
}

/** The stored messages the host page saw, in order (`message` events: `{id, role, text, status}`). */
const hostMessages = (page) =>
  page.evaluate(() => window.testEvents.filter((e) => e.name === "message").map((e) => e.detail));

/** The tenant's backend, as the tests play it. */
const admin = () => new AdminClient({ baseUrl: BASE_URL, apiKey: API_KEY });

/** The widget's saved thread id and visitor token (what it keeps in the page's sessionStorage). */
async function saved(page) {
  const key = await customerAgent();
  return page.evaluate((k) => JSON.parse(sessionStorage.getItem(`agent-threads:${k}`) ?? "{}"), key);
}

/**
 * One branch of the thread over HTTP, as the visitor may read it: a launch resuming the thread with the visitor
 * token (sent from the customer's origin), then `GET /v1/threads/:id/entries?leafId`.
 */
async function branch(page, leafId) {
  const { threadId, visitorToken } = await saved(page);
  const headers = { Origin: OTHER_ORIGIN };
  const launch = await launchPublic({
    baseUrl: BASE_URL,
    origin: OTHER_ORIGIN,
    agentKey: await customerAgent(),
    threadId,
    visitorToken,
  });
  const query = leafId === undefined ? "" : `?leafId=${encodeURIComponent(leafId)}`;
  const res = await request(BASE_URL, "GET", `/v1/threads/${threadId}/entries${query}`, {
    headers,
    token: launch.token,
  });
  assert.equal(res.status, 200, describeError(res));
  return res.body.items
    .filter((entry) => entry.kind === "message")
    .map(({ id, role, text }) => ({ id, role, text }));
}

async function axe(page, what) {
  for (const colorScheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme });
    const result = await new AxeBuilder({ page })
      .include("agent-thread")
      .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"])
      .analyze();
    const violations = result.violations.map(
      (v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
    );
    assert.deepEqual(violations, [], `axe (${what}, ${colorScheme})`);
  }
}

async function talk(page, text) {
  await send(page, text);
  await waitForReply(page, `Echo: ${text}`);
}

describe("message controls", () => {
  const browser = useBrowser();

  it("retries the last reply: a new reply streams, the old one stays readable as a branch", async () => {
    const { page, w, log } = await openCustomerPage(browser, { reducedMotion: "reduce" });
    await openAndConnect(page);
    await talk(page, "tell me once more");
    await waitForHostEvents(page, "message", 2);
    const [question, oldReply] = await hostMessages(page);
    assert.equal(oldReply.role, "assistant");

    const retry = page.getByRole("button", { name: "Retry this reply" });
    await retry.focus();
    await page.keyboard.press("Enter");
    assert.equal((await deepFocus(page))?.part, "input", "focus goes back to the composer");
    // The new reply is a new stored entry: a third `message` event, with its own id.
    await waitForHostEvents(page, "message", 3);
    await waitForReply(page, "Echo: tell me once more");
    const newReply = (await hostMessages(page))[2];
    assert.equal(newReply.role, "assistant");
    assert.notEqual(newReply.id, oldReply.id);
    assert.deepEqual(await w.userMessages.allTextContents(), ["tell me once more"]);
    assert.deepEqual(await w.replies.allTextContents(), ["Echo: tell me once more"], "the new branch only");

    // Over HTTP: the current branch ends in the new reply; the old reply is still there, as its own branch.
    assert.deepEqual(
      (await branch(page)).map((e) => e.id),
      [question.id, newReply.id],
    );
    assert.deepEqual(await branch(page, oldReply.id), [
      { id: question.id, role: "user", text: "tell me once more" },
      { id: oldReply.id, role: "assistant", text: "Echo: tell me once more" },
    ]);
    assert.deepEqual(log.errors, []);
  });

  it("offers retry on a failed reply, and retrying starts a new reply in its place", async () => {
    const { page, w } = await openCustomerPage(browser, {
      local: { chunks: 6, chunkDelayMs: 20, failAfterChunks: 2 },
    });
    await openAndConnect(page);
    await send(page, "this reply breaks");
    const note = page.locator("agent-thread .msg.assistant .meta");
    await waitForText(note, "The reply could not be finished.");
    const retry = page.getByRole("button", { name: "Retry this reply" });
    await waitForHostEvents(page, "message", 2);
    const failed = (await hostMessages(page))[1];
    assert.equal(failed.status, "failed");
    await retry.click();
    // A new run: a second failed reply is stored (a third `message` event), shown as the only reply.
    await waitForHostEvents(page, "message", 3);
    const again = (await hostMessages(page))[2];
    assert.equal(again.role, "assistant");
    assert.notEqual(again.id, failed.id);
    await waitForText(note, "The reply could not be finished.");
    assert.equal(await w.replies.count(), 1);
    assert.deepEqual(await w.userMessages.allTextContents(), ["this reply breaks"]);
    assert.equal(await retry.isVisible(), true, "and it can be retried again");
  });

  it("edits the last message: Enter saves and a new reply streams; the old branch stays readable", async () => {
    const { page, w } = await openCustomerPage(browser);
    await openAndConnect(page);
    await talk(page, "first draft");
    await waitForHostEvents(page, "message", 2);
    const [oldQuestion, oldReply] = await hostMessages(page);

    // Escape cancels: the message is unchanged, the panel stays open, focus returns to the edit button.
    const editButton = page.getByRole("button", { name: "Edit your message" });
    await editButton.click();
    const editor = page.getByRole("textbox", { name: "Edit message" });
    assert.equal((await deepFocus(page))?.tag, "textarea");
    assert.equal(await editor.inputValue(), "first draft");
    await editor.fill("not this");
    await page.keyboard.press("Escape");
    assert.equal(await editor.count(), 0);
    assert.equal(await w.panel.isVisible(), true, "Escape closed the editor, not the panel");
    assert.equal((await deepFocus(page))?.label, "Edit your message");
    assert.deepEqual(await w.userMessages.allTextContents(), ["first draft"]);

    await page.keyboard.press("Enter");
    await editor.fill("second draft");
    await page.keyboard.press("Enter");
    await waitForReply(page, "Echo: second draft");
    await waitForHostEvents(page, "message", 4);
    assert.deepEqual(await w.userMessages.allTextContents(), ["second draft"]);
    assert.deepEqual(await w.replies.allTextContents(), ["Echo: second draft"]);

    assert.deepEqual(
      (await branch(page)).map((e) => e.text),
      ["second draft", "Echo: second draft"],
    );
    assert.deepEqual(await branch(page, oldReply.id), [
      { id: oldQuestion.id, role: "user", text: "first draft" },
      { id: oldReply.id, role: "assistant", text: "Echo: first draft" },
    ]);
  });

  it("sends thumbs down as feedback on the reply, and takes it back on a second click", async () => {
    // Needs the server's side of feedback (docs/protocol.md): stored and shown on GET /v1/sessions/:id/messages.
    const { page } = await openCustomerPage(browser);
    await openAndConnect(page);
    await talk(page, "rate this");
    await waitForHostEvents(page, "message", 2);
    const reply = (await hostMessages(page))[1];
    const { threadId } = await saved(page);

    const down = page.getByRole("button", { name: "Bad reply" });
    const up = page.getByRole("button", { name: "Good reply" });
    await down.click();
    assert.equal(await down.getAttribute("aria-pressed"), "true");
    assert.equal(await up.getAttribute("aria-pressed"), "false");
    await waitForText(page.locator("agent-thread .panel > [aria-live=polite]"), "Thanks for your feedback.");

    const feedbackOf = async () => {
      const messages = await admin().sessions.messages(threadId);
      return messages.items.find((m) => m.id === reply.id)?.feedback ?? null;
    };
    await eventually(async () => (await feedbackOf())?.rating === "down", "feedback.rating down");

    await down.click();
    assert.equal(await down.getAttribute("aria-pressed"), "false");
    await eventually(async () => ((await feedbackOf())?.rating ?? null) === null, "the rating taken back");
  });

  it("passes axe with retry, edit and thumbs shown, and while editing", async () => {
    const { page } = await openCustomerPage(browser, { reducedMotion: "reduce" });
    await openAndConnect(page);
    await talk(page, "controls for axe");
    await waitForHostEvents(page, "message", 2);
    for (const name of ["Retry this reply", "Edit your message", "Good reply", "Bad reply"]) {
      assert.equal(await page.getByRole("button", { name }).isVisible(), true, name);
    }
    await axe(page, "controls shown");
    await page.getByRole("button", { name: "Edit your message" }).click();
    await axe(page, "editing");
  });
});

describe("past conversations", () => {
  const browser = useBrowser();

  it("lists the visitor's threads and reopens the first with its transcript", async () => {
    const { page, w, log } = await openCustomerPage(browser, { reducedMotion: "reduce" });
    await openAndConnect(page);
    await talk(page, "conversation number one");
    const first = (await saved(page)).threadId;
    await page.getByRole("button", { name: "Start a new conversation" }).click();
    await waitForText(w.status, "Online");
    await talk(page, "conversation number two");
    assert.notEqual((await saved(page)).threadId, first);

    const pastButton = page.getByRole("button", { name: "Past conversations" });
    const list = page.getByRole("list", { name: "Past conversations" });
    const items = list.getByRole("button");
    // The list comes from D1, which trails the thread by a moment: reopen it until both threads are there, once a
    // second as a person would (each reopen is a CORS preflight, and preflights are limited to 30 a minute per
    // network: polling faster could spend the budget the next test's launch needs).
    await eventually(
      async () => {
        if ((await pastButton.getAttribute("aria-expanded")) === "true") await pastButton.click();
        await pastButton.click();
        await waitForText(page.locator("agent-thread .past"), /conversation|No past|could not/);
        return (await items.count()) === 2;
      },
      "two past conversations",
      { interval: 1_000 },
    );
    assert.equal(await pastButton.getAttribute("aria-expanded"), "true");
    assert.equal(await w.log.isVisible(), false, "the list replaces the transcript");
    assert.equal((await deepFocus(page))?.tag, "button", "focus moves to the first conversation");
    const texts = await items.allTextContents();
    assert.match(texts[0], /^conversation number two/, "newest first");
    assert.match(texts[1], /^conversation number one/);
    assert.equal(await items.first().getAttribute("aria-current"), "true", "the open thread is marked");
    await axe(page, "past conversations open");

    // Escape leaves the list (not the panel), back to the button.
    await page.keyboard.press("Escape");
    assert.equal(await w.log.isVisible(), true);
    assert.equal(await w.panel.isVisible(), true);
    assert.equal((await deepFocus(page))?.label, "Past conversations");

    await pastButton.click();
    await items.nth(1).click();
    await waitForText(w.replies, "Echo: conversation number one");
    assert.deepEqual(await w.userMessages.allTextContents(), ["conversation number one"]);
    assert.deepEqual(await w.replies.allTextContents(), ["Echo: conversation number one"]);
    assert.equal((await saved(page)).threadId, first, "the reopened thread is the one kept");

    // The reopened thread goes on, and a new conversation still starts afresh.
    await talk(page, "back again");
    assert.deepEqual(await w.userMessages.allTextContents(), ["conversation number one", "back again"]);
    await page.getByRole("button", { name: "Start a new conversation" }).click();
    await waitForText(w.status, "Online");
    assert.equal(await w.userMessages.count(), 0);
    assert.deepEqual(log.errors, []);
  });
});

describe("past conversations on the service's own host", () => {
  const browser = useBrowser();

  it("lists them on a same-origin page too, where the browser sends no Origin on a GET", async () => {
    const { page } = await openWidgetPage(browser, { query: OWN_TAB });
    await openAndConnect(page);
    await talk(page, "on the demo host");
    const pastButton = page.getByRole("button", { name: "Past conversations" });
    const items = page.getByRole("list", { name: "Past conversations" }).getByRole("button");
    await eventually(async () => {
      if ((await pastButton.getAttribute("aria-expanded")) === "true") await pastButton.click();
      await pastButton.click();
      await waitForText(page.locator("agent-thread .past"), /demo host|No past|could not/);
      return (await items.count()) === 1;
    }, "the conversation in the list");
    assert.match(await items.first().textContent(), /^on the demo host/);
  });
});

describe("handoff to a person", () => {
  const browser = useBrowser();

  it("shows the person's message live under their name, with a status line, and passes axe", async () => {
    // Needs the server's side of handoff (docs/protocol.md): POST /v1/sessions/:id/handoff and …/messages.
    const { page, w } = await openCustomerPage(browser, { reducedMotion: "reduce" });
    await openAndConnect(page);
    await talk(page, "I would like to talk to a person");
    const { threadId } = await saved(page);

    const start = await admin().sessions.startHandoff(threadId, { agentName: "Dana" });
    assert.equal(start.mode, "handoff");
    const line = page.locator("agent-thread [part=handoff]");
    await waitForText(line, "A person will reply soon.");
    assert.equal(
      await page.getByRole("button", { name: "Retry this reply" }).count(),
      0,
      "no retry while a person answers",
    );

    await admin().sessions.postMessage(threadId, {
      text: "Hi, Dana here. How can I help?",
      authorName: "Dana",
    });
    await waitForText(w.replies.last(), "Hi, Dana here. How can I help?");
    const author = page.locator("agent-thread .msg.assistant").last().locator(".who");
    assert.equal(await author.textContent(), "Dana");
    await waitForText(line, "You're chatting with Dana");
    await waitForText(
      page.locator("agent-thread .panel > [aria-live=polite]"),
      "Dana: Hi, Dana here. How can I help?",
    );
    await axe(page, "handoff");
  });
});

describe("handoff as the widget sees it", () => {
  const browser = useBrowser();

  it("follows mode frames and a person's entry, and ignores frames it does not know", async () => {
    // The thread's frames are passed through unchanged; the test adds the frames of a handoff to them.
    const { page, w, log } = await openCustomerPage(browser, { reducedMotion: "reduce" });
    const sockets = [];
    await page.routeWebSocket(/\/ws$/, (ws) => {
      ws.connectToServer();
      sockets.push(ws);
    });
    await openAndConnect(page);
    await talk(page, "is anyone there");
    const toPage = (frame) => sockets.at(-1).send(JSON.stringify(frame));

    toPage({ type: "feedback_ack", entryId: "ent_x", rating: "up" });
    toPage({ type: "mode", mode: "handoff" });
    const line = page.locator("agent-thread [part=handoff]");
    await waitForText(line, "A person will reply soon.");
    const announcer = page.locator("agent-thread .panel > [aria-live=polite]");
    await waitForText(announcer, "A person will reply soon.");
    assert.equal(await page.getByRole("button", { name: "Retry this reply" }).count(), 0);
    assert.equal(await page.getByRole("button", { name: "Edit your message" }).count(), 0);

    const createdAt = new Date().toISOString();
    const entry = { kind: "message", role: "human_agent", runId: null, parentId: null, createdAt };
    toPage({
      type: "entry",
      entry: { ...entry, id: "ent_person_1", text: "Dana here, **hello**!", authorName: "Dana" },
    });
    await waitForText(w.replies.last(), "Dana here, hello!");
    const person = page.locator("agent-thread .msg.assistant").last();
    assert.equal(await person.locator(".who").textContent(), "Dana", "labelled with the person's name");
    assert.equal(await person.getByRole("button").count(), 0, "no thumbs or retry on a person's message");
    await waitForText(line, "You're chatting with Dana");
    await waitForText(announcer, "Dana: Dana here, **hello**!");
    await axe(page, "handoff");

    toPage({ type: "mode", mode: "agent" });
    await waitForText(announcer, "You're chatting with");
    assert.equal(await line.isVisible(), false);
    assert.equal(await w.status.textContent(), "Online", "the unknown frame broke nothing");
    await talk(page, "thanks");
    assert.deepEqual(log.errors, []);
  });
});
