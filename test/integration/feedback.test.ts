// Feedback on assistant replies (docs/protocol.md): over WebSocket and HTTP, latest wins, null clears, shown on the message in
// the sessions API, refused for anything but an assistant entry of the same thread, and kept across eviction.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { WireEntry } from "../../src/shared/protocol";
import { messageResponse } from "../../src/shared/sessions-api";
import { reconcileProjection } from "../../src/storage/projection/projection-reconcile";
import { threadExportSchema } from "../../src/storage/thread/thread-export";
import { bindingOf, drainThread, launchFor, threadStub } from "../helpers/projection";
import { api, expectError, json } from "../helpers/tenants";
import { clientMessageId, connect, type FrameReader, type LiveAgent, liveAgent } from "../helpers/threads";

const messageList = z.object({ items: z.array(messageResponse), nextCursor: z.string().optional() });
const feedbackReply = z.object({
  entryId: z.string(),
  feedback: z
    .object({ rating: z.enum(["up", "down"]), comment: z.string().optional(), at: z.string() })
    .nullable(),
});

/** A private thread with one finished turn: its user and assistant entries, and a socket on it. */
async function ratedThread(agent: LiveAgent) {
  const session = await launchFor(agent, "user-1");
  const ws = await connect(session);
  ws.send({ type: "send", clientMessageId: clientMessageId(), text: "what is the weather?" });
  const user = await ws.next("entry", (f) => f.entry.role === "user");
  const assistant = await ws.next("entry", (f) => f.entry.role === "assistant");
  await ws.next("run", (f) => f.status === "succeeded");
  return { session, ws, user: user.entry, assistant: assistant.entry };
}

async function sessionMessages(agent: LiveAgent, threadId: string) {
  return json(await api(`/v1/sessions/${threadId}/messages`, { key: agent.apiKey }), 200, messageList);
}

async function feedbackOf(agent: LiveAgent, threadId: string, entryId: string) {
  const stub = await threadStub(agent, threadId);
  await drainThread(stub);
  const messages = await sessionMessages(agent, threadId);
  return messages.items.find((m) => m.id === entryId)?.feedback;
}

function rate(ws: FrameReader, entry: WireEntry, rating: "up" | "down" | null, comment?: string) {
  ws.send({ type: "feedback", entryId: entry.id, rating, ...(comment !== undefined ? { comment } : {}) });
  return ws.next("feedback", (f) => f.entryId === entry.id && (f.feedback?.rating ?? null) === rating);
}

const feedbackRows = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_i, state) => ({
    rows: state.storage.sql.exec("SELECT entry_id, rating, comment, revision FROM feedback").toArray(),
    events: state.storage.sql
      .exec("SELECT type, data_json FROM thread_events WHERE type = 'message.feedback' ORDER BY seq")
      .toArray(),
  }));

describe("feedback over WebSocket", () => {
  it("is stored latest-wins, announced to every socket, shown on the message, and null clears it", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const { session, ws, assistant } = await ratedThread(agent);
    const other = await connect(session);

    const up = await rate(ws, assistant, "up");
    expect(up.feedback).toMatchObject({ rating: "up" });
    expect(up.feedback).not.toHaveProperty("comment");
    expect((await other.next("feedback")).feedback).toEqual(up.feedback);
    expect(await feedbackOf(agent, session.threadId, assistant.id)).toMatchObject({
      rating: "up",
      comment: null,
    });

    const down = await rate(ws, assistant, "down", "It ignored my city.");
    expect(down.feedback).toMatchObject({ rating: "down", comment: "It ignored my city." });
    const shown = await feedbackOf(agent, session.threadId, assistant.id);
    expect(shown).toEqual({ rating: "down", comment: "It ignored my city.", at: down.feedback?.at });

    // Other messages carry no feedback.
    const messages = await sessionMessages(agent, session.threadId);
    expect(messages.items.filter((m) => m.id !== assistant.id).map((m) => m.feedback)).toEqual([null]);

    const cleared = await rate(ws, assistant, null);
    expect(cleared.feedback).toBeNull();
    expect(await feedbackOf(agent, session.threadId, assistant.id)).toBeNull();

    // Each change is one `message.feedback` event, naming the thread, the agent version and the entry.
    const stub = await threadStub(agent, session.threadId);
    const { rows, events } = await feedbackRows(stub);
    expect(rows).toEqual([{ entry_id: assistant.id, rating: null, comment: null, revision: 3 }]);
    expect(events.map((e) => e.type)).toEqual(["message.feedback", "message.feedback", "message.feedback"]);
    expect(JSON.parse(String(events[1]?.data_json))).toMatchObject({
      threadId: session.threadId,
      agentId: agent.agentId,
      version: 1,
      entryId: assistant.id,
      runId: assistant.runId,
      rating: "down",
      comment: "It ignored my city.",
    });
  });

  it("refuses anything but an assistant entry of this thread, a comment over 2,000 characters, and stores nothing", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const { session, ws, user, assistant } = await ratedThread(agent);
    const elsewhere = await ratedThread(agent);

    ws.send({ type: "feedback", entryId: user.id, rating: "up" });
    expect(await ws.next("error")).toMatchObject({ code: "bad_request" });
    ws.send({ type: "feedback", entryId: elsewhere.assistant.id, rating: "up" });
    expect(await ws.next("error", () => ws.all("error").length === 2)).toMatchObject({ code: "not_found" });
    ws.send({ type: "feedback", entryId: assistant.id, rating: "up", comment: "x".repeat(2001) });
    expect(await ws.next("error", () => ws.all("error").length === 3)).toMatchObject({ code: "bad_request" });
    ws.send({ type: "feedback", entryId: assistant.id, rating: null, comment: "no rating" });
    expect(await ws.next("error", () => ws.all("error").length === 4)).toMatchObject({ code: "bad_request" });
    ws.send({ type: "feedback", entryId: assistant.id, rating: "great" });
    expect(await ws.next("error", () => ws.all("error").length === 5)).toMatchObject({ code: "bad_request" });

    expect(ws.all("feedback")).toEqual([]);
    const stub = await threadStub(agent, session.threadId);
    expect(await feedbackRows(stub)).toEqual({ rows: [], events: [] });
    // A comment of exactly 2,000 characters is fine.
    const full = await rate(ws, assistant, "up", "y".repeat(2000));
    expect(full.feedback?.comment).toHaveLength(2000);
  });

  it("survives an eviction: history carries it, and D1 shows it", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const { session, ws, assistant } = await ratedThread(agent);
    await rate(ws, assistant, "down", "too short");
    ws.ws.close();
    const stub = await threadStub(agent, session.threadId);
    await evictDurableObject(stub);

    const again = await connect(session);
    again.send({ type: "history" });
    const history = await again.next("history");
    const rated = history.items.find((e) => e.id === assistant.id);
    expect(rated?.feedback).toMatchObject({ rating: "down", comment: "too short" });
    expect(history.items.find((e) => e.role === "user")).not.toHaveProperty("feedback");
    expect(await feedbackOf(agent, session.threadId, assistant.id)).toMatchObject({
      rating: "down",
      comment: "too short",
    });
    // Latest wins after the eviction too.
    await rate(again, assistant, "up");
    expect(await feedbackOf(agent, session.threadId, assistant.id)).toMatchObject({
      rating: "up",
      comment: null,
    });
  });

  it("counts against the thread's rate: past it the socket closes 4429", async () => {
    const agent = await liveAgent({
      agent: { visibility: "private" },
      artifact: { limits: { maxSendsPerMinute: 2 } },
    });
    const { ws, assistant } = await ratedThread(agent);
    await rate(ws, assistant, "up");
    await rate(ws, assistant, "down");
    ws.send({ type: "feedback", entryId: assistant.id, rating: "up" });
    expect((await ws.waitClosed()).code).toBe(4429);
  });
});

describe("feedback and the D1 copy", () => {
  it("is projected again when D1 lost the thread (a restore), reconciled like its messages", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const { session, ws, assistant } = await ratedThread(agent);
    await rate(ws, assistant, "down", "wrong answer");
    expect(await feedbackOf(agent, session.threadId, assistant.id)).toMatchObject({ rating: "down" });
    await env.DB.batch(
      ["agent_messages", "agent_message_feedback", "agent_runs", "agent_usage", "agent_sessions"].map(
        (table) =>
          env.DB.prepare(
            `DELETE FROM ${table} WHERE tenant_id = ? AND ${table === "agent_sessions" ? "id" : "session_id"} = ?`,
          ).bind(agent.tenantId, session.threadId),
      ),
    );
    const stub = await threadStub(agent, session.threadId);
    await runInDurableObject(stub, async (_i, state) =>
      reconcileProjection({
        storage: state.storage,
        db: env.DB,
        binding: await bindingOf(state.storage),
        now: Date.now,
      }),
    );
    expect(await feedbackOf(agent, session.threadId, assistant.id)).toMatchObject({
      rating: "down",
      comment: "wrong answer",
    });
  });
});

describe("feedback in the export", () => {
  it("is part of the thread's export", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const { session, ws, assistant } = await ratedThread(agent);
    await rate(ws, assistant, "up", "exported");
    const exported = await json(
      await api(`/v1/sessions/${session.threadId}/export`, { key: agent.apiKey }),
      200,
      threadExportSchema,
    );
    expect(exported.feedback).toEqual([
      expect.objectContaining({
        entryId: assistant.id,
        rating: "up",
        comment: "exported",
        subject: "user-1",
      }),
    ]);
  });
});

describe("feedback and erasure", () => {
  it("goes with the thread when the tenant erases it", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const { session, ws, assistant } = await ratedThread(agent);
    await rate(ws, assistant, "up", "kept until erased");
    expect(await feedbackOf(agent, session.threadId, assistant.id)).toMatchObject({ rating: "up" });
    ws.ws.close();
    const erased = await api(`/v1/sessions/${session.threadId}`, { method: "DELETE", key: agent.apiKey });
    expect(erased.status).toBe(204);
    const left = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM agent_message_feedback WHERE tenant_id = ? AND session_id = ?",
    )
      .bind(agent.tenantId, session.threadId)
      .first();
    expect(left).toEqual({ n: 0 });
  });
});

describe("POST /v1/threads/:threadId/entries/:entryId/feedback", () => {
  function post(session: { threadId: string; token: string }, entryId: string, body: unknown) {
    return api(`/v1/threads/${session.threadId}/entries/${entryId}/feedback`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}` },
      body,
    });
  }

  it("sets the same feedback with the thread token, announced to the thread's sockets", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const { session, ws, user, assistant } = await ratedThread(agent);
    const given = await json(
      await post(session, assistant.id, { rating: "up", comment: "spot on" }),
      200,
      feedbackReply,
    );
    expect(given).toMatchObject({ entryId: assistant.id, feedback: { rating: "up", comment: "spot on" } });
    expect((await ws.next("feedback")).feedback).toEqual(given.feedback);
    expect(await feedbackOf(agent, session.threadId, assistant.id)).toMatchObject({
      rating: "up",
      comment: "spot on",
    });

    const cleared = await json(await post(session, assistant.id, { rating: null }), 200, feedbackReply);
    expect(cleared.feedback).toBeNull();

    // Refusals: another thread's entry, a user entry, bad bodies, no token.
    const elsewhere = await ratedThread(agent);
    await expectError(await post(session, elsewhere.assistant.id, { rating: "up" }), 404, "not_found");
    await expectError(await post(session, "no-such-entry", { rating: "up" }), 404, "not_found");
    await expectError(await post(session, user.id, { rating: "up" }), 400, "bad_request");
    for (const body of [{}, { rating: "up", extra: 1 }, { rating: "up", comment: "z".repeat(2001) }]) {
      await expectError(await post(session, assistant.id, body), 400, "bad_request");
    }
    const anonymous = await api(`/v1/threads/${session.threadId}/entries/${assistant.id}/feedback`, {
      method: "POST",
      body: { rating: "up" },
    });
    expect(anonymous.status).toBe(401);
    // A token for another thread cannot rate this one.
    await expectError(
      await post({ threadId: session.threadId, token: elsewhere.session.token }, assistant.id, {
        rating: "up",
      }),
      404,
      "not_found",
    );
    expect(await feedbackOf(agent, session.threadId, assistant.id)).toBeNull();
  });
});
