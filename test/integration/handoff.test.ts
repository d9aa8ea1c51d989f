// Handoff (docs/protocol.md): a person of the tenant's team takes a thread over; sends are stored without a run, the person's
// replies reach every socket and D1, every socket learns each mode change, and the model can ask for one.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { entrySchema } from "../../src/shared/protocol";
import { handoffResponse, messageResponse, sessionResponse } from "../../src/shared/sessions-api";
import { type Entry, EntryStore } from "../../src/storage/thread/entry-store";
import { migrateThreadSchema } from "../../src/storage/thread/thread-schema";
import { PromptHistory } from "../../src/thread/run/prompt-history";
import { drainThread, launchFor, threadStub } from "../helpers/projection";
import { api, createApiKey, expectError, json } from "../helpers/tenants";
import { clientMessageId, connect, type FrameReader, type LiveAgent, liveAgent } from "../helpers/threads";

const messageList = z.object({ items: z.array(messageResponse), nextCursor: z.string().optional() });
const sessionList = z.object({ items: z.array(sessionResponse), nextCursor: z.string().optional() });
const humanReply = z.object({ entry: entrySchema });

function handoff(agent: { apiKey: string }, threadId: string, body: unknown) {
  return api(`/v1/sessions/${threadId}/handoff`, { method: "POST", key: agent.apiKey, body });
}

function humanMessage(agent: { apiKey: string }, threadId: string, body: unknown) {
  return api(`/v1/sessions/${threadId}/messages`, { method: "POST", key: agent.apiKey, body });
}

async function privateAgent(artifact: Record<string, unknown> = {}): Promise<LiveAgent> {
  return liveAgent({ agent: { visibility: "private" }, artifact });
}

/** A thread with one finished turn (so it is bound and projected), and a socket on it. */
async function threadWithTurn(agent: LiveAgent) {
  const session = await launchFor(agent, "user-1");
  const ws = await connect(session);
  ws.send({ type: "send", clientMessageId: clientMessageId(), text: "first question" });
  await ws.next("run", (f) => f.status === "succeeded");
  return { session, ws };
}

/** Pings and waits for the answer: every frame the server sent before it has arrived. */
async function settle(ws: FrameReader): Promise<void> {
  const before = ws.all("pong").length;
  ws.send({ type: "ping" });
  await ws.next("pong", () => ws.all("pong").length > before);
}

const runsOf = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_i, state) =>
    Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM runs").one().n),
  );

describe("POST /v1/sessions/:threadId/handoff", () => {
  it("announces each change to every open socket, and ready carries the mode after a reconnect and an eviction", async () => {
    const agent = await privateAgent();
    const { session, ws: first } = await threadWithTurn(agent);
    const second = await connect(session);
    expect(second.all("ready")[0]).toMatchObject({ mode: "agent" });

    const started = await json(
      await handoff(agent, session.threadId, { action: "start", agentName: "Dana" }),
      200,
      handoffResponse,
    );
    expect(started).toMatchObject({
      threadId: session.threadId,
      mode: "handoff",
      agentName: "Dana",
      changed: true,
    });
    for (const ws of [first, second]) {
      expect(await ws.next("mode")).toEqual({ type: "mode", mode: "handoff", agentName: "Dana" });
      const event = await ws.next("entry", (f) => f.entry.kind === "event");
      expect(event.entry.event).toEqual({ type: "handoff_started", agentName: "Dana" });
    }
    // Starting again changes nothing and announces nothing.
    const again = await json(
      await handoff(agent, session.threadId, { action: "start" }),
      200,
      handoffResponse,
    );
    expect(again).toMatchObject({ mode: "handoff", agentName: "Dana", changed: false });

    // The tenant's console sees the mode, and can list the threads in handoff.
    const row = await json(
      await api(`/v1/sessions/${session.threadId}`, { key: agent.apiKey }),
      200,
      sessionResponse,
    );
    expect(row.mode).toBe("handoff");
    // So does a client of the thread's HTTP API.
    const info = await api(`/v1/threads/${session.threadId}`, {
      headers: { Authorization: `Bearer ${session.token}` },
    });
    expect(await info.json()).toMatchObject({ threadId: session.threadId, mode: "handoff" });
    const inHandoff = await json(
      await api("/v1/sessions?mode=handoff", { key: agent.apiKey }),
      200,
      sessionList,
    );
    expect(inHandoff.items.map((s) => s.threadId)).toEqual([session.threadId]);
    const inAgent = await json(await api("/v1/sessions?mode=agent", { key: agent.apiKey }), 200, sessionList);
    expect(inAgent.items).toEqual([]);

    first.ws.close();
    second.ws.close();
    const stub = await threadStub(agent, session.threadId);
    await evictDurableObject(stub);
    const reconnected = await connect(session);
    expect(reconnected.all("ready")[0]).toMatchObject({ mode: "handoff", agentName: "Dana" });
    // The change is in the thread's own history too.
    reconnected.send({ type: "history" });
    const history = await reconnected.next("history");
    expect(history.items.map((e) => e.event?.type ?? e.role)).toEqual([
      "user",
      "assistant",
      "handoff_started",
    ]);

    const ended = await json(await handoff(agent, session.threadId, { action: "end" }), 200, handoffResponse);
    expect(ended).toMatchObject({ mode: "agent", changed: true });
    expect(await reconnected.next("mode")).toEqual({ type: "mode", mode: "agent" });
    const after = await connect(session);
    expect(after.all("ready")[0]).toMatchObject({ mode: "agent" });
    expect(after.all("ready")[0]).not.toHaveProperty("agentName");
    const back = await json(
      await api(`/v1/sessions/${session.threadId}`, { key: agent.apiKey }),
      200,
      sessionResponse,
    );
    expect(back.mode).toBe("agent");
  });

  it("interrupts a reply still streaming, then starts the handoff below it", async () => {
    const agent = await privateAgent({
      model: { provider: "local", model: "lorem", local: { chunks: 50, chunkDelayMs: 40 } },
    });
    const session = await launchFor(agent, "user-1");
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "tell me a long story" });
    await ws.next("delta");
    const res = await handoff(agent, session.threadId, { action: "start" });
    expect(res.status).toBe(200);
    const aborted = await ws.next("run", (f) => f.status === "aborted");
    const reply = await ws.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.status).toBe("interrupted");
    expect(reply.entry.runId).toBe(aborted.runId);
    const event = await ws.next("entry", (f) => f.entry.kind === "event");
    expect(event.entry.parentId).toBe(reply.entry.id);
    expect(await ws.next("mode")).toMatchObject({ mode: "handoff" });
  });

  it("keeps the messages queued behind the interrupted reply, in order, for the person, and answers none", async () => {
    const agent = await privateAgent({
      model: { provider: "local", model: "lorem", local: { chunks: 50, chunkDelayMs: 40 } },
      conversation: { multitask: "enqueue" },
    });
    const session = await launchFor(agent, "user-1");
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "tell me a long story" });
    await ws.next("delta");
    const queued = ["first while waiting", "second while waiting"];
    for (const text of queued) {
      ws.send({ type: "send", clientMessageId: clientMessageId(), text });
      await ws.next(
        "run",
        (f) => f.status === "queued" && !ws.all("run").some((r) => r !== f && r.runId === f.runId),
      );
    }
    const queuedRuns = ws
      .all("run")
      .filter((f) => f.status === "queued" && f.position !== undefined)
      .map((f) => f.runId);
    expect(new Set(queuedRuns).size).toBe(2);
    expect((await handoff(agent, session.threadId, { action: "start" })).status).toBe(200);
    await ws.next("mode");
    for (const runId of queuedRuns) {
      expect(await ws.next("run", (f) => f.runId === runId && f.status === "aborted")).toMatchObject({
        reason: "handoff",
      });
    }
    await settle(ws);
    // Both messages are in the tree below the handoff, in the order they were sent; no reply was started for them.
    const users = ws
      .all("entry")
      .filter((f) => f.entry.role === "user")
      .map((f) => f.entry);
    expect(users.map((e) => e.text)).toEqual(["tell me a long story", ...queued]);
    const event = ws.all("entry").find((f) => f.entry.kind === "event");
    expect(users[1]?.parentId).toBe(event?.entry.id);
    expect(users[2]?.parentId).toBe(users[1]?.id);
    expect(ws.all("run").filter((f) => f.status === "running")).toHaveLength(1);
    const stub = await threadStub(agent, session.threadId);
    const waiting = await runInDurableObject(stub, (_i, state) =>
      Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM queued_turns").one().n),
    );
    expect(waiting).toBe(0);
  });
});

describe("a thread in handoff", () => {
  it("stores a user's send and starts no run, over WebSocket and HTTP", async () => {
    const agent = await privateAgent();
    const { session, ws } = await threadWithTurn(agent);
    const other = await connect(session);
    const stub = await threadStub(agent, session.threadId);
    expect(await runsOf(stub)).toBe(1);
    await handoff(agent, session.threadId, { action: "start" });
    await ws.next("mode");

    const framesBefore = ws.frames.length;
    const id = clientMessageId();
    ws.send({ type: "send", clientMessageId: id, text: "is anyone there?" });
    const stored = await ws.next("entry", (f) => f.entry.clientMessageId === id);
    expect(stored.entry).toMatchObject({ role: "user", text: "is anyone there?", runId: null });
    expect((await other.next("entry", (f) => f.entry.clientMessageId === id)).entry.id).toBe(stored.entry.id);
    // A retry answers with the same entry and stores nothing.
    ws.send({ type: "send", clientMessageId: id, text: "is anyone there?" });
    const retried = await ws.next("entry", (f) => f.entry.clientMessageId === id);
    expect(retried.entry.id).toBe(stored.entry.id);
    await settle(ws);
    const since = ws.frames.slice(framesBefore);
    expect(since.filter((f) => f.type === "run" || f.type === "delta")).toEqual([]);
    expect(await runsOf(stub)).toBe(1);

    // Edits and regenerates wait for the handoff to end.
    ws.send({ type: "regenerate", entryId: stored.entry.id });
    expect(await ws.next("error")).toMatchObject({ code: "conflict" });

    // HTTP: the JSON answer has no run; SSE streams the entry and the mode, and ends.
    const http = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}` },
      body: { clientMessageId: clientMessageId(), text: "hello over http" },
    });
    const body = z
      .object({ run: z.null(), entries: z.array(entrySchema) })
      .parse(JSON.parse(await http.clone().text()));
    expect(http.status).toBe(201);
    expect(body.entries.map((e) => [e.role, e.text])).toEqual([["user", "hello over http"]]);
    const sse = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, Accept: "text/event-stream" },
      body: { clientMessageId: clientMessageId(), text: "hello over sse" },
    });
    const text = await sse.text();
    expect(sse.status).toBe(200);
    expect(text).toContain("event: entry");
    expect(text).toContain('"mode":"handoff"');
    expect(await runsOf(stub)).toBe(1);

    // In D1 the held messages are there like any other.
    await drainThread(stub);
    const messages = await json(
      await api(`/v1/sessions/${session.threadId}/messages`, { key: agent.apiKey }),
      200,
      messageList,
    );
    expect(messages.items.filter((m) => m.role === "user").map((m) => m.content)).toEqual([
      "first question",
      "is anyone there?",
      "hello over http",
      "hello over sse",
    ]);

    // Once it ends, a send starts a run again; the held send's retry still starts none.
    await handoff(agent, session.threadId, { action: "end" });
    ws.send({ type: "send", clientMessageId: id, text: "is anyone there?" });
    expect((await ws.next("entry", (f) => f.entry.clientMessageId === id)).entry.id).toBe(stored.entry.id);
    await settle(ws);
    expect(await runsOf(stub)).toBe(1);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "back to the bot" });
    await ws.next("run", (f) => f.status === "succeeded" && ws.all("run").length > 3);
    expect(await runsOf(stub)).toBe(2);
  });

  it("keeps the thread's send rate: past it the socket closes 4429 and the excess is not stored", async () => {
    const agent = await privateAgent({ limits: { maxSendsPerMinute: 3 } });
    const { session, ws } = await threadWithTurn(agent);
    await handoff(agent, session.threadId, { action: "start" });
    await ws.next("mode");
    for (const text of ["one", "two", "three"])
      ws.send({ type: "send", clientMessageId: clientMessageId(), text });
    expect((await ws.waitClosed()).code).toBe(4429);
    const stub = await threadStub(agent, session.threadId);
    const users = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql
        .exec(
          "SELECT json_extract(body_json, '$.text') AS text FROM entries WHERE role = 'user' ORDER BY seq",
        )
        .toArray()
        .map((r) => r.text),
    );
    // The first turn's message counts in the same minute: it and two held sends fill the rate of three.
    expect(users).toEqual(["first question", "one", "two"]);
  });

  it("delivers a person's reply to every open socket, the thread's entries and the D1 messages", async () => {
    const agent = await privateAgent();
    const { session, ws } = await threadWithTurn(agent);
    const other = await connect(session);

    // Only in handoff.
    await expectError(await humanMessage(agent, session.threadId, { text: "too early" }), 409, "conflict");
    await handoff(agent, session.threadId, { action: "start", agentName: "Dana" });

    const posted = await json(
      await humanMessage(agent, session.threadId, { text: "Hi, Dana here. How can I help?" }),
      201,
      humanReply,
    );
    expect(posted.entry).toMatchObject({ role: "human_agent", authorName: "Dana", runId: null });
    for (const socket of [ws, other]) {
      const live = await socket.next("entry", (f) => f.entry.role === "human_agent");
      expect(live.entry).toEqual(posted.entry);
    }
    const named = await json(
      await humanMessage(agent, session.threadId, { text: "Sam here too.", authorName: "Sam" }),
      201,
      humanReply,
    );
    expect(named.entry.authorName).toBe("Sam");
    expect(named.entry.parentId).toBe(posted.entry.id);

    const entries = await json(
      await api(`/v1/threads/${session.threadId}/entries`, {
        headers: { Authorization: `Bearer ${session.token}` },
      }),
      200,
      z.object({ items: z.array(entrySchema) }),
    );
    expect(entries.items.filter((e) => e.role === "human_agent").map((e) => e.text)).toEqual([
      "Hi, Dana here. How can I help?",
      "Sam here too.",
    ]);
    const messages = await json(
      await api(`/v1/sessions/${session.threadId}/messages`, { key: agent.apiKey }),
      200,
      messageList,
    );
    expect(
      messages.items.filter((m) => m.role === "human_agent").map((m) => [m.content, m.authorName]),
    ).toEqual([
      ["Hi, Dana here. How can I help?", "Dana"],
      ["Sam here too.", "Sam"],
    ]);
  });
});

describe("the model after a handoff", () => {
  it("reads the person's replies as its own turns and leaves the handoff events out", async () => {
    const stub = env.THREAD.get(env.THREAD.idFromName(`handoff-prompt-${crypto.randomUUID()}`));
    const history = await runInDurableObject(stub, (_i, state) => {
      migrateThreadSchema(state.storage);
      const store = new EntryStore(state.storage, { now: () => 1 });
      let last: Entry | null = null;
      const add = (input: {
        kind: "message" | "event";
        role?: "user" | "assistant" | "human_agent";
        body: unknown;
      }) => {
        const appended = store.append({ parentId: last?.id ?? null, ...input });
        if (!appended.ok) throw new Error(appended.message);
        last = appended.value.entry;
        return last;
      };
      add({ kind: "message", role: "user", body: { text: "my order is late" } });
      add({ kind: "message", role: "assistant", body: { text: "Let me get a person." } });
      add({ kind: "event", body: { event: "handoff_started", agentName: "Dana", by: "model" } });
      add({ kind: "message", role: "user", body: { text: "hello?" } });
      add({
        kind: "message",
        role: "human_agent",
        body: { text: "Dana here: it ships tomorrow.", authorName: "Dana" },
      });
      add({ kind: "event", body: { event: "handoff_ended", by: "tenant" } });
      const question = add({ kind: "message", role: "user", body: { text: "thanks, and my refund?" } });
      return new PromptHistory(store, 10_000).historyFor(question);
    });
    expect(history).toEqual([
      { role: "user", text: "my order is late" },
      { role: "assistant", text: "Let me get a person." },
      { role: "user", text: "hello?" },
      { role: "assistant", text: "Dana here: it ships tomorrow." },
      { role: "user", text: "thanks, and my refund?" },
    ]);
  });
});

describe("request_handoff", () => {
  it("lets the model start a handoff once its reply is sealed, and records handoff.requested", async () => {
    const agent = await privateAgent({
      handoff: { enabled: true },
      model: {
        provider: "local",
        model: "echo",
        local: { toolCall: { name: "request_handoff", input: { reason: "The user asked for a person." } } },
      },
    });
    const session = await launchFor(agent, "user-1");
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "I want to talk to a human" });
    const done = await ws.next("run", (f) => f.status === "succeeded");
    const reply = await ws.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.text).toContain("request_handoff");
    const mode = await ws.next("mode");
    expect(mode).toEqual({ type: "mode", mode: "handoff" });
    // The mode frame follows the run's end.
    expect(ws.frames.indexOf(mode)).toBeGreaterThan(ws.frames.indexOf(done));

    const stub = await threadStub(agent, session.threadId);
    const events = await runInDurableObject(stub, (_i, state) =>
      state.storage.sql
        .exec("SELECT type, data_json FROM thread_events WHERE type = 'handoff.requested' ORDER BY seq")
        .toArray(),
    );
    expect(events.map((e) => e.type)).toEqual(["handoff.requested"]);
    expect(JSON.parse(String(events[0]?.data_json))).toMatchObject({
      threadId: session.threadId,
      agentId: agent.agentId,
      version: 1,
      runId: done.runId,
      reason: "The user asked for a person.",
    });

    // From now on a send is held for the person.
    const id = clientMessageId();
    ws.send({ type: "send", clientMessageId: id, text: "hello?" });
    await ws.next("entry", (f) => f.entry.clientMessageId === id);
    await settle(ws);
    expect(await runsOf(stub)).toBe(1);
    const row = await json(
      await api(`/v1/sessions/${session.threadId}`, { key: agent.apiKey }),
      200,
      sessionResponse,
    );
    expect(row.mode).toBe("handoff");
  });

  it("is not offered to an agent without handoff, and its name is reserved when handoff is on", async () => {
    const agent = await privateAgent({
      model: {
        provider: "local",
        model: "echo",
        local: { toolCall: { name: "request_handoff", input: {} } },
      },
    });
    const session = await launchFor(agent, "user-1");
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "a human please" });
    await ws.next("run", (f) => f.status === "succeeded");
    await settle(ws);
    expect(ws.all("mode")).toEqual([]);

    const saved = await api(`/v1/agents/${agent.agentId}/draft`, {
      method: "PUT",
      key: agent.apiKey,
      headers: { "If-Match": '"1"' },
      body: {
        schemaVersion: 1,
        name: "Support",
        instructions: "x",
        model: { provider: "local", model: "echo" },
        handoff: { enabled: true },
        tools: [
          {
            name: "request_handoff",
            description: "mine",
            url: "https://hooks.example.com/h",
            signingSecret: "hook",
          },
        ],
      },
    });
    expect(saved.status).toBe(200);
    const published = await api(`/v1/agents/${agent.agentId}/versions`, {
      method: "POST",
      key: agent.apiKey,
      body: { draftRevision: 2 },
    });
    const error = await expectError(published, 400, "bad_request");
    expect(JSON.stringify(error.details)).toContain("tools.0.name");
  });
});

describe("handoff refusals", () => {
  it("answers another tenant's thread with 404, bad bodies with 400, a read-only key with 403, and changes nothing", async () => {
    const agent = await privateAgent();
    const { session, ws } = await threadWithTurn(agent);
    const stranger = await privateAgent();

    await expectError(await handoff(stranger, session.threadId, { action: "start" }), 404, "not_found");
    await expectError(await humanMessage(stranger, session.threadId, { text: "hi" }), 404, "not_found");
    await expectError(await handoff(agent, "thr_missing", { action: "start" }), 404, "not_found");

    for (const body of [
      {},
      { action: "pause" },
      { action: "start", extra: true },
      { action: "end", agentName: "Dana" },
      { action: "start", agentName: "" },
      { action: "start", agentName: "x".repeat(101) },
    ]) {
      await expectError(await handoff(agent, session.threadId, body), 400, "bad_request");
    }
    await expectError(
      await api(`/v1/sessions/${session.threadId}/handoff`, {
        method: "POST",
        key: agent.apiKey,
        body: "action=start",
        headers: { "Content-Type": "text/plain" },
      }),
      415,
      "unsupported_media_type",
    );
    const readOnly = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");
    await expectError(
      await handoff({ apiKey: readOnly.apiKey }, session.threadId, { action: "start" }),
      403,
      "forbidden",
    );

    await handoff(agent, session.threadId, { action: "start" });
    await ws.next("mode");
    for (const body of [{}, { text: "" }, { text: "hi", role: "assistant" }, { text: 5 }]) {
      await expectError(await humanMessage(agent, session.threadId, body), 400, "bad_request");
    }
    await expectError(
      await humanMessage(agent, session.threadId, { text: "x".repeat(8001) }),
      400,
      "bad_request",
    );
    await settle(ws);
    expect(ws.all("entry").filter((f) => f.entry.role === "human_agent")).toEqual([]);
  });
});
