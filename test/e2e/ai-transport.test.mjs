// The AI SDK transport against the Worker in workerd: a real `Chat` (the `ai` package's AbstractChat with a plain
// state) streams a reply, survives a socket killed mid-reply without a duplicated or missing word, resumes a live
// run from a second chat, and regenerates into a sibling branch.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { request } from "../../scripts/lib/http-client.mjs";
import { importClient, NodeChat, textOf } from "./ai-chat.mjs";
import { API_KEY, BASE_URL, eventually } from "./helpers.mjs";
import { seedAgent } from "./server.mjs";

/** A TCP relay in front of the Worker, so a test can cut every socket the way a network drop does. */
async function startRelay(port) {
  const sockets = new Set();
  let connections = 0;
  const server = createServer((client) => {
    connections += 1;
    const upstream = createConnection({ host: "127.0.0.1", port });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: server.address().port,
    get connections() {
      return connections;
    },
    kill() {
      for (const s of sockets) s.destroy();
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe("AI SDK transport", () => {
  let client;
  let relay;
  let dir;
  let agentId;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "agent-threads-ai-"));
    client = await importClient(dir);
    relay = await startRelay(Number(new URL(BASE_URL).port));
    const agent = await seedAgent(BASE_URL, API_KEY, {
      slug: `lorem-${Date.now()}`,
      visibility: "private",
      model: "lorem",
      local: { chunks: 40, chunkDelayMs: 50 },
      origin: BASE_URL,
    });
    agentId = agent.id;
  });

  after(async () => {
    await relay?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A private launch from the tenant's backend, its socket going through the relay. */
  async function launch(subject, threadId) {
    const res = await request(BASE_URL, "POST", "/v1/agent-sessions", {
      token: API_KEY,
      body: { agentId, subject, ...(threadId ? { threadId } : {}) },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const ws = new URL(res.body.websocketUrl);
    ws.host = `127.0.0.1:${relay.port}`;
    return { ...res.body, websocketUrl: ws.href };
  }

  function transportFor(launched, subject) {
    return new client.AgentThreadsChatTransport({
      launch: launched,
      refreshLaunch: (current) => launch(subject, current.threadId),
      backoff: { initialMs: 100, maxMs: 1000 },
    });
  }

  async function storedBranch(launched, leafId) {
    const query = leafId ? `?leafId=${encodeURIComponent(leafId)}` : "";
    const res = await request(BASE_URL, "GET", `/v1/threads/${launched.threadId}/entries${query}`, {
      token: launched.token,
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.items;
  }

  test("a reply streams in several deltas and ends as the stored entry's text", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const launched = await launch(subject);
    const transport = transportFor(launched, subject);
    const chat = new NodeChat({ transport });
    try {
      await chat.sendMessage({ text: "Tell me about the weather." });
      assert.equal(chat.status, "ready", String(chat.error));
      const reply = chat.messages.at(-1);
      assert.equal(reply.role, "assistant");
      const stored = await storedBranch(launched);
      const entry = stored.at(-1);
      assert.equal(entry.role, "assistant");
      assert.ok(entry.text.length > 40);
      assert.equal(textOf(reply), entry.text);
      assert.equal(reply.metadata.entryId, entry.id);
      assert.equal(reply.metadata.status, "complete");
      // The chat showed the reply growing, delta by delta, not all at once.
      assert.ok(chat.plain.shown.length >= 10, `only ${chat.plain.shown.length} intermediate texts`);
      for (const [i, text] of chat.plain.shown.entries()) {
        assert.ok(entry.text.startsWith(text), `shown text ${i} is not a prefix of the reply`);
      }
      // The user message is the stored one: its id is the clientMessageId the thread keeps.
      const user = stored.find((e) => e.role === "user");
      assert.equal(user.clientMessageId, chat.messages[0].id);
      assert.equal(user.text, "Tell me about the weather.");
    } finally {
      await chat.dispose();
    }
  });

  test("a socket killed mid-reply reconnects and resumes with no duplicated or missing text", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const launched = await launch(subject);
    const transport = transportFor(launched, subject);
    const statuses = [];
    transport.connection.onStatus((status) => statuses.push(status));
    const chat = new NodeChat({ transport });
    try {
      const before = relay.connections;
      const sending = chat.sendMessage({ text: "Write a long story." });
      await eventually(() => (transport.connection.liveRun?.lastSeq ?? 0) >= 8, "the eighth delta", {
        timeout: 15_000,
        interval: 20,
      });
      const cutAt = transport.connection.liveRun.lastSeq;
      relay.kill();
      await sending;
      assert.equal(chat.status, "ready", String(chat.error));
      assert.ok(statuses.includes("reconnecting"), `statuses: ${statuses.join(",")}`);
      assert.ok(relay.connections >= before + 2, "no second socket was opened");
      const entry = (await storedBranch(launched)).at(-1);
      assert.equal(entry.role, "assistant");
      assert.equal(entry.status, "complete");
      assert.ok(cutAt < 40, "the reply had ended before the cut");
      assert.equal(textOf(chat.messages.at(-1)), entry.text);
      assert.equal(chat.messages.filter((m) => m.role === "assistant").length, 1);
    } finally {
      await chat.dispose();
    }
  });

  test("a second chat resumes the live run with reconnectToStream and ends with the stored text", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const launched = await launch(subject);
    const first = new NodeChat({ transport: transportFor(launched, subject) });
    // Another page of the same user (a reload): a new launch for the thread, a new connection.
    const second = new NodeChat({
      transport: transportFor(await launch(subject, launched.threadId), subject),
    });
    try {
      const sending = first.sendMessage({ text: "Tell me a long tale." });
      await eventually(() => first.plain.shown.length >= 5, "the first deltas", {
        timeout: 15_000,
        interval: 20,
      });
      await second.resumeStream();
      await sending;
      assert.equal(second.status, "ready", String(second.error));
      const entry = (await storedBranch(launched)).at(-1);
      assert.equal(entry.role, "assistant");
      const resumed = second.messages.at(-1);
      assert.equal(resumed.role, "assistant");
      assert.equal(textOf(resumed), entry.text);
      assert.equal(resumed.metadata.entryId, entry.id);
      // Once the run has ended there is nothing to resume: the chat stays as it is.
      await second.resumeStream();
      assert.equal(second.messages.length, 1);
    } finally {
      await first.dispose();
      await second.dispose();
    }
  });

  test("regenerate creates a sibling reply below the same user message", async () => {
    const subject = `user-${crypto.randomUUID()}`;
    const launched = await launch(subject);
    const transport = transportFor(launched, subject);
    const chat = new NodeChat({ transport });
    try {
      await chat.sendMessage({ text: "Say something." });
      const firstReply = chat.messages.at(-1);
      await chat.regenerate();
      assert.equal(chat.status, "ready", String(chat.error));
      assert.equal(chat.messages.length, 2);
      const secondReply = chat.messages.at(-1);
      assert.notEqual(secondReply.metadata.entryId, firstReply.metadata.entryId);

      const current = await storedBranch(launched);
      const older = await storedBranch(launched, firstReply.metadata.entryId);
      const [a, b] = [older.at(-1), current.at(-1)];
      assert.equal(a.id, firstReply.metadata.entryId);
      assert.equal(b.id, secondReply.metadata.entryId);
      assert.equal(a.role, "assistant");
      assert.equal(b.role, "assistant");
      assert.equal(a.parentId, b.parentId);
      assert.equal(a.parentId, current[0].id);
      assert.equal(textOf(secondReply), b.text);

      // The transport also loads the branch as UI messages, the ids matching the live ones.
      const loaded = await transport.loadMessages();
      assert.deepEqual(
        loaded.map((m) => [m.id, m.role, textOf(m), m.metadata.entryId]),
        chat.messages.map((m) => [m.id, m.role, textOf(m), m.metadata?.entryId ?? current[0].id]),
      );
    } finally {
      await chat.dispose();
    }
  });
});
