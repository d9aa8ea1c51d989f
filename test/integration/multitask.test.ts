// Double-texting (docs/protocol.md): what a send does while a reply streams, under each strategy, over WebSocket and HTTP.
import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tenantQuota } from "../../src/auth/tenant-quota";
import { LIMITS, type ServerFrame } from "../../src/shared/protocol";
import { threadObjectName } from "../../src/thread/contract";
import { api, expectError, json, operatorHeaders } from "../helpers/tenants";
import { inTestQuota } from "../helpers/test-tenant-quota";
import {
  clientMessageId,
  connect,
  type FrameReader,
  type Launch,
  type LiveAgent,
  launch,
  liveAgent,
  ORIGIN,
} from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

type Strategy = "reject" | "enqueue" | "interrupt" | "rollback";

/** An echo model that takes a while: `chunks` deltas `delayMs` apart (an echo reply has at most its length). */
function agentWith(multitask: Strategy | undefined, chunks = 30, delayMs = 40): Promise<LiveAgent> {
  return liveAgent({
    artifact: {
      model: { provider: "local", model: "echo", local: { chunks, chunkDelayMs: delayMs } },
      ...(multitask !== undefined ? { conversation: { multitask } } : {}),
    },
  });
}

const headersOf = (session: Launch) => ({ Authorization: `Bearer ${session.token}`, Origin: ORIGIN });

const entrySchema = z.object({
  id: z.string(),
  parentId: z.string().nullable(),
  role: z.string().nullable(),
  text: z.string(),
  status: z.string().optional(),
  runId: z.string().nullable(),
});
type Entry = z.infer<typeof entrySchema>;

async function branch(session: Launch, leafId?: string): Promise<Entry[]> {
  const res = await api(`/v1/threads/${session.threadId}/entries${leafId ? `?leafId=${leafId}` : ""}`, {
    headers: headersOf(session),
  });
  return (await json(res, 200, z.object({ items: z.array(entrySchema) }))).items;
}

const replySchema = z.object({
  run: z.object({ id: z.string(), status: z.string(), reason: z.string().optional() }),
  entries: z.array(entrySchema),
});

function postMessage(session: Launch, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return api(`/v1/threads/${session.threadId}/messages`, {
    method: "POST",
    headers: { ...headersOf(session), ...headers },
    body: { clientMessageId: clientMessageId(), ...body },
  });
}

const TERMINAL = ["succeeded", "failed", "aborted"];

/** A long reply under way on `ws`: its run id once a few of its deltas have streamed. */
async function streaming(ws: FrameReader, text: string): Promise<string> {
  ws.send({ type: "send", clientMessageId: clientMessageId(), text });
  const over = (runId: string) => ws.all("run").some((f) => f.runId === runId && TERMINAL.includes(f.status));
  return (await ws.next("delta", (f) => f.seq === 3 && !over(f.runId))).runId;
}

const queued = (ws: FrameReader, position: number) =>
  ws.next("run", (f) => f.status === "queued" && f.position === position);

const ended = (ws: FrameReader, runId: string) =>
  ws.next("run", (f) => f.runId === runId && TERMINAL.includes(f.status));

const texts = (entries: Entry[]) => entries.map((e) => e.text);

async function threadStub(agent: LiveAgent, threadId: string) {
  const name = await threadObjectName(env.DO_NAME_KEY, {
    tenantId: agent.tenantId,
    environment: "development",
    agentId: agent.agentId,
    threadId,
  });
  return env.THREAD.get(env.THREAD.idFromName(name));
}

describe("double-texting over WebSocket", () => {
  it("reject (the default): a send during a reply is a conflict and nothing is stored", async () => {
    const agent = await agentWith(undefined, 12, 30);
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const first = await streaming(ws, "first");
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "second" });
    expect((await ws.next("error")).code).toBe("conflict");
    expect((await ended(ws, first)).status).toBe("succeeded");
    expect(texts(await branch(session))).toEqual(["first", "Echo: first"]);
    expect(ws.all("run").some((f) => f.status === "queued" && f.position !== undefined)).toBe(false);
  });

  it("enqueue: later sends wait in order, each below the reply before it, and two tabs see the same frames", async () => {
    const agent = await agentWith("enqueue", 12, 30);
    const session = await launch(agent.publicKey);
    const tab1 = await connect(session);
    const tab2 = await connect(session);
    const first = await streaming(tab1, "one");
    const secondId = clientMessageId();
    tab1.send({ type: "send", clientMessageId: secondId, text: "two" });
    const second = await queued(tab1, 1);
    tab2.send({ type: "send", clientMessageId: clientMessageId(), text: "three" });
    const third = await queued(tab2, 2);
    expect((await queued(tab2, 1)).runId).toBe(second.runId);
    expect((await queued(tab1, 2)).runId).toBe(third.runId);
    // A retried queued send starts nothing: its sender is told where it waits.
    tab1.send({ type: "send", clientMessageId: secondId, text: "two" });
    expect((await queued(tab1, 1)).runId).toBe(second.runId);

    for (const runId of [first, second.runId, third.runId]) {
      expect((await ended(tab1, runId)).status).toBe("succeeded");
    }
    await ended(tab2, third.runId);
    // Ran one after another: each run started only after the one before it ended.
    const order = tab1
      .all("run")
      .filter((f) => f.status === "running" || f.status === "succeeded")
      .map((f) => `${f.runId}:${f.status}`);
    expect(order).toEqual([
      `${first}:running`,
      `${first}:succeeded`,
      `${second.runId}:running`,
      `${second.runId}:succeeded`,
      `${third.runId}:running`,
      `${third.runId}:succeeded`,
    ]);
    const thread = await branch(session);
    expect(texts(thread)).toEqual(["one", "Echo: one", "two", "Echo: two", "three", "Echo: three"]);
    expect(thread.slice(1).map((e) => e.parentId)).toEqual(thread.slice(0, -1).map((e) => e.id));
    // Both tabs heard the same conversation, frame for frame (the retry's answer went to its sender only).
    const shared = (ws: FrameReader) =>
      ws.frames.filter((f): f is Exclude<ServerFrame, { type: "ready" | "error" }> =>
        ["entry", "run", "delta"].includes(f.type),
      );
    const retryAnswer = (f: ServerFrame) => f.type === "run" && f.runId === second.runId && f.position === 1;
    const tab1Frames = shared(tab1).filter(
      (f, i, all) => !(retryAnswer(f) && all.findIndex(retryAnswer) !== i),
    );
    expect(tab1Frames).toEqual(shared(tab2));
  });

  it(`holds at most ${LIMITS.maxQueuedSends} queued turns; a cancelled one leaves the queue and never enters the tree`, async () => {
    const agent = await agentWith("enqueue", 40, 50);
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const live = await streaming(ws, "the long one");
    const waiting: string[] = [];
    for (let i = 1; i <= LIMITS.maxQueuedSends; i++) {
      ws.send({ type: "send", clientMessageId: clientMessageId(), text: `queued ${i}` });
      waiting.push((await queued(ws, i)).runId);
    }
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "one too many" });
    expect((await ws.next("error")).code).toBe("conflict");

    ws.send({ type: "cancel", runId: waiting[1] });
    const cancelled = await ended(ws, waiting[1]!);
    expect(cancelled).toMatchObject({ status: "aborted", reason: "cancelled" });
    // The ones behind it move up.
    expect((await queued(ws, 2)).runId).toBe(waiting[2]);
    expect((await queued(ws, 4)).runId).toBe(waiting[4]);
    for (const runId of waiting.slice(2)) ws.send({ type: "cancel", runId });
    for (const runId of waiting.slice(2)) await ended(ws, runId);
    ws.send({ type: "cancel", runId: live });
    expect((await ended(ws, live)).status).toBe("aborted");
    expect((await ended(ws, waiting[0]!)).status).toBe("succeeded");

    const thread = await branch(session);
    expect(thread.map((e) => e.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(thread[1]!.status).toBe("interrupted");
    expect(texts(thread).slice(2)).toEqual(["queued 1", "Echo: queued 1"]);
    const stored = await runInDurableObject(await threadStub(agent, session.threadId), (_i, state) => ({
      runs: Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM runs").one().n),
      queued: Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM queued_turns").one().n),
      users: Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM entries WHERE role = 'user'").one().n),
    }));
    // The refused send made no run; the cancelled ones are runs without messages.
    expect(stored).toEqual({ runs: 1 + LIMITS.maxQueuedSends, queued: 0, users: 2 });
  });

  it("interrupt: the live run ends aborted (interrupted), its partial reply is sealed and the new message goes below it", async () => {
    const agent = await agentWith("interrupt");
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const first = await streaming(ws, "tell me everything you know");
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "actually, stop" });
    expect(await ended(ws, first)).toMatchObject({ status: "aborted", reason: "interrupted" });
    const partial = await ws.next("entry", (f) => f.entry.runId === first);
    expect(partial.entry.status).toBe("interrupted");
    const user = await ws.next("entry", (f) => f.entry.text === "actually, stop");
    expect(user.entry.parentId).toBe(partial.entry.id);
    const next = await ws.next("run", (f) => f.runId !== first && f.status === "succeeded");
    const thread = await branch(session);
    expect(thread.map((e) => e.id).slice(0, 3)).toEqual([thread[0]!.id, partial.entry.id, user.entry.id]);
    expect(thread.at(-1)).toMatchObject({ text: "Echo: actually, stop", runId: next.runId });
  });

  it("rollback: the new message is a sibling of the interrupted one, whose exchange stays readable as a branch", async () => {
    const agent = await agentWith("rollback", 12, 30);
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "hi" });
    await ws.next("run", (f) => f.status === "succeeded");
    const [, greeting] = await branch(session);

    const first = await streaming(ws, "a question I regret");
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "a better question" });
    expect(await ended(ws, first)).toMatchObject({ status: "aborted", reason: "interrupted" });
    const partial = await ws.next("entry", (f) => f.entry.runId === first);
    const better = await ws.next("entry", (f) => f.entry.text === "a better question");
    expect(better.entry.parentId).toBe(greeting!.id);
    await ws.next("run", (f) => f.runId !== first && f.status === "succeeded");

    expect(texts(await branch(session))).toEqual([
      "hi",
      "Echo: hi",
      "a better question",
      "Echo: a better question",
    ]);
    const interrupted = await branch(session, partial.entry.id);
    expect(texts(interrupted).slice(0, 3)).toEqual(["hi", "Echo: hi", "a question I regret"]);
    expect(interrupted.at(-1)).toMatchObject({ id: partial.entry.id, status: "interrupted" });
  });

  it("a send's own multitask overrides the agent's, both ways", async () => {
    const rejecting = await agentWith("reject", 12, 30);
    const session = await launch(rejecting.publicKey);
    const ws = await connect(session);
    const first = await streaming(ws, "first");
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "queue me", multitask: "enqueue" });
    const waiting = await queued(ws, 1);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "refuse me" });
    expect((await ws.next("error")).code).toBe("conflict");
    await ended(ws, first);
    expect((await ended(ws, waiting.runId)).status).toBe("succeeded");
    expect(texts(await branch(session))).toEqual(["first", "Echo: first", "queue me", "Echo: queue me"]);

    const queueing = await agentWith("enqueue", 12, 30);
    const other = await launch(queueing.publicKey);
    const ws2 = await connect(other);
    const live = await streaming(ws2, "first");
    ws2.send({ type: "send", clientMessageId: clientMessageId(), text: "refuse me", multitask: "reject" });
    expect((await ws2.next("error")).code).toBe("conflict");
    await ended(ws2, live);
    expect(texts(await branch(other))).toEqual(["first", "Echo: first"]);
  });

  it("refuses an unknown multitask value as a malformed frame", async () => {
    const agent = await agentWith("enqueue", 4, 0);
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "x", multitask: "shout" });
    expect((await ws.next("error")).code).toBe("bad_request");
    expect(await branch(session)).toEqual([]);
  });

  it("a queued turn holds no run slot of its tenant until it starts", async () => {
    const agent = await agentWith("enqueue", 20, 40);
    // A quota makes every run take a lease in the tenant's quota object (an unlimited tenant's runs take none).
    const patched = await api(`/v1/operator/tenants/${agent.tenantId}`, {
      method: "PATCH",
      headers: operatorHeaders(),
      body: { quotas: { concurrentThreads: 1 } },
    });
    expect(patched.status).toBe(200);
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const leases = () =>
      inTestQuota(tenantQuota(env, agent.tenantId), (_i, state) =>
        Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM run_leases").one().n),
      );
    const first = await streaming(ws, "first");
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "second" });
    const second = await queued(ws, 1);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "third" });
    await queued(ws, 2);
    expect(await leases()).toBe(1);
    await ended(ws, first);
    expect((await ended(ws, second.runId)).status).toBe("succeeded");
    await ws.next("run", (f) => f.status === "succeeded" && f.runId !== first && f.runId !== second.runId);
    await waitFor(leases, (n) => n === 0, { what: "every slot given back" });
  });

  it("a queued turn survives the object's death: the cut-off run is sealed, then the queued one runs", async () => {
    const agent = await agentWith("enqueue", 40, 50);
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "a long answer please, thank you" });
    const d = await ws.next("delta", (f) => f.seq === 12);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "and then this" });
    const waiting = await queued(ws, 1);
    // The object dies mid-stream, as on a deploy or a crash: memory is gone, storage is not.
    await abortAllDurableObjects();

    const back = await connect(session, { resume: { runId: waiting.runId, afterSeq: 0 } });
    const thread = await waitFor(
      () => branch(session),
      (items) => items.at(-1)?.text === "Echo: and then this",
      { what: "the queued turn's reply", timeoutMs: 8_000 },
    );
    expect(thread.map((e) => [e.role, e.status ?? null])).toEqual([
      ["user", null],
      ["assistant", "interrupted"],
      ["user", null],
      ["assistant", "complete"],
    ]);
    expect(thread[1]!.runId).toBe(d.runId);
    expect(thread[3]!.runId).toBe(waiting.runId);
    // Whole chunks persisted before the death are kept in the sealed reply.
    expect(thread[1]!.text.length).toBeGreaterThan(0);
    await back.next("run", (f) => f.runId === waiting.runId && f.status === "succeeded");
  });
});

describe("double-texting over HTTP", () => {
  it("reject answers 409 conflict", async () => {
    const agent = await agentWith(undefined, 12, 30);
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const first = await streaming(ws, "first");
    await expectError(await postMessage(session, { text: "second" }), 409, "conflict");
    await ended(ws, first);
    expect(texts(await branch(session))).toEqual(["first", "Echo: first"]);
  });

  it("enqueue: the JSON answer waits for its own turn; SSE streams it from queued to its end", async () => {
    const agent = await agentWith(undefined, 12, 30);
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const first = await streaming(ws, "first");
    const jsonReply = postMessage(session, { text: "by json", multitask: "enqueue" });
    await queued(ws, 1);
    const sse = await postMessage(
      session,
      { text: "by sse", multitask: "enqueue" },
      { Accept: "text/event-stream" },
    );
    expect(sse.headers.get("Content-Type")).toContain("text/event-stream");

    const reply = await json(await jsonReply, 201, replySchema);
    expect(reply.run.status).toBe("succeeded");
    expect(texts(reply.entries)).toEqual(["by json", "Echo: by json"]);
    const stream = await sse.text();
    const runEvents = [...stream.matchAll(/^event: run\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
    expect(runEvents.map((f) => [f.status, f.position])).toEqual([
      ["queued", 2],
      ["queued", 1],
      ["running", undefined],
      ["succeeded", undefined],
    ]);
    expect(stream).toContain("Echo: by sse");
    expect((await ended(ws, first)).status).toBe("succeeded");
    expect(texts(await branch(session))).toEqual([
      "first",
      "Echo: first",
      "by json",
      "Echo: by json",
      "by sse",
      "Echo: by sse",
    ]);
  });

  it("cancel of a queued run over HTTP removes it; its waiting JSON answer says so", async () => {
    const agent = await agentWith("enqueue", 20, 40);
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const first = await streaming(ws, "first");
    const pending = postMessage(session, { text: "never mind" });
    const waiting = await queued(ws, 1);
    const cancel = await api(`/v1/threads/${session.threadId}/runs/${waiting.runId}/cancel`, {
      method: "POST",
      headers: headersOf(session),
    });
    expect(cancel.status).toBe(202);
    const reply = await json(await pending, 201, replySchema);
    expect(reply).toEqual({
      run: { id: waiting.runId, status: "aborted", reason: "cancelled" },
      entries: [],
    });
    expect((await ended(ws, first)).status).toBe("succeeded");
    expect(texts(await branch(session))).toEqual(["first", "Echo: first"]);
  });

  it("interrupt and rollback place the message as over WebSocket", async () => {
    const agent = await agentWith(undefined);
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const first = await streaming(ws, "first question");
    const interrupted = await json(
      await postMessage(session, { text: "interrupting", multitask: "interrupt" }),
      201,
      replySchema,
    );
    expect(await ended(ws, first)).toMatchObject({ status: "aborted", reason: "interrupted" });
    const partial = await ws.next("entry", (f) => f.entry.runId === first);
    expect(interrupted.run.status).toBe("succeeded");
    expect(interrupted.entries[0]!.parentId).toBe(partial.entry.id);

    const second = await streaming(ws, "second question");
    const rolledBack = await json(
      await postMessage(session, { text: "rolling back", multitask: "rollback" }),
      201,
      replySchema,
    );
    expect(await ended(ws, second)).toMatchObject({ status: "aborted", reason: "interrupted" });
    const secondUser = (
      await branch(session, (await ws.next("entry", (f) => f.entry.runId === second)).entry.id)
    ).at(-2);
    expect(rolledBack.run.status).toBe("succeeded");
    expect(rolledBack.entries[0]!.parentId).toBe(secondUser!.parentId);
    expect(texts(await branch(session)).slice(-2)).toEqual(["rolling back", "Echo: rolling back"]);
  });

  it("refuses an unknown multitask with 400 and stores nothing", async () => {
    const agent = await agentWith(undefined, 4, 0);
    const session = await launch(agent.publicKey);
    await expectError(await postMessage(session, { text: "x", multitask: "later" }), 400, "bad_request");
    expect(await branch(session)).toEqual([]);
  });
});
