// The agent.v1 protocol end to end: streaming, resume, forks, cancel, limits and pinning across eviction.
import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ThreadAgent } from "../../src/objects/thread-agent";
import { LIMITS } from "../../src/shared/protocol";
import { threadObjectName } from "../../src/thread/contract";
import { api, createRelease, publish, saveDraft, validArtifact } from "../helpers/tenants";
import { inTestThread } from "../helpers/test-thread-agent";
import {
  clientMessageId,
  connect,
  FrameReader,
  type Launch,
  launch,
  liveAgent,
  ORIGIN,
  upgradeRequest,
} from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const local = (options: Record<string, unknown>) => ({
  model: { provider: "local", model: "echo", local: options },
});

function threadGet(session: Launch, path = "") {
  return api(`/v1/threads/${session.threadId}${path}`, {
    headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
  });
}

async function branch(
  session: Launch,
  leafId?: string,
): Promise<{ id: string; role: string; text: string; status?: string }[]> {
  const res = await threadGet(session, `/entries${leafId ? `?leafId=${leafId}` : ""}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: { id: string; role: string; text: string; status?: string }[] })
    .items;
}

/** One message sent over SSE, as often as called with the same clientMessageId (extra headers such as Last-Event-ID). */
function ssePost(session: Launch, text: string) {
  const cmid = clientMessageId();
  return (headers: Record<string, string>) =>
    api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${session.token}`,
        Origin: ORIGIN,
        Accept: "text/event-stream",
        ...headers,
      },
      body: { clientMessageId: cmid, text },
    });
}

function address(agent: { tenantId: string; agentId: string }, threadId: string) {
  return {
    tenantId: agent.tenantId,
    environment: "development",
    agentId: agent.agentId,
    threadId,
  } as const;
}

async function stub(agent: { tenantId: string; agentId: string }, threadId: string) {
  const name = await threadObjectName(env.DO_NAME_KEY, address(agent, threadId));
  return env.THREAD.get(env.THREAD.idFromName(name));
}

describe("agent.v1 over WebSocket", () => {
  it("sends ready with the pinned agent name and version", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    expect(ws.all("ready")[0]).toEqual({
      type: "ready",
      protocol: 1,
      threadId: session.threadId,
      leafId: null,
      agent: { name: "Support", version: 1 },
      presentation: {},
      mode: "agent",
    });
  });

  it("answers a close without a code at once, so the client's close completes cleanly", async () => {
    const agent = await liveAgent();
    const ws = await connect(await launch(agent.publicKey));
    // A close frame without a status code arrives as 1005; the object still owes the closing handshake.
    ws.ws.close();
    const closed = await ws.waitClosed(2_000);
    expect(closed.code).not.toBe(1006);
  });

  it("delivers the same stream to every socket of the thread", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 6 }) });
    const session = await launch(agent.publicKey);
    const [a, b] = [await connect(session), await connect(session)];
    a.send({ type: "send", clientMessageId: clientMessageId(), text: "both of you" });
    const doneA = await a.next("run", (f) => f.status === "succeeded");
    await b.next("run", (f) => f.status === "succeeded");
    const text = (r: typeof a) =>
      r
        .all("delta")
        .filter((d) => d.runId === doneA.runId)
        .map((d) => `${d.seq}:${d.text}`);
    expect(text(b)).toEqual(text(a));
    expect(text(a)).toHaveLength(6);
  });

  it("starts no second run for a repeated clientMessageId", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const cmid = clientMessageId();
    ws.send({ type: "send", clientMessageId: cmid, text: "once" });
    await ws.next("run", (f) => f.status === "succeeded");
    ws.send({ type: "send", clientMessageId: cmid, text: "once" });
    await ws.next("run", (f) => f.status === "succeeded");
    expect(new Set(ws.all("run").map((r) => r.runId)).size).toBe(1);
    expect((await branch(session)).map((e) => e.role)).toEqual(["user", "assistant"]);
  });

  it("starts no second run for a repeated edit, and adds no second edited message", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "question" });
    const user = await ws.next("entry", (f) => f.entry.role === "user");
    await ws.next("run", (f) => f.status === "succeeded");
    const edit = { type: "edit", entryId: user.entry.id, text: "better", clientMessageId: clientMessageId() };
    ws.send(edit);
    await ws.next("run", (f) => f.status === "succeeded");
    const runsBefore = new Set(ws.all("run").map((r) => r.runId)).size;
    ws.send(edit);
    // The retry is answered with the edited message where it already is, and its finished run.
    await ws.next("run", (f) => f.status === "succeeded");
    expect(new Set(ws.all("run").map((r) => r.runId)).size).toBe(runsBefore);
    const edited = ws.all("entry").filter((f) => f.entry.role === "user" && f.entry.text === "better");
    expect(new Set(edited.map((f) => f.entry.id)).size).toBe(1);
    expect((await branch(session)).map((e) => e.text).slice(0, 1)).toEqual(["better"]);
  });

  it("resumes a dropped socket with exactly the missing deltas", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 20, chunkDelayMs: 40 }) });
    const session = await launch(agent.publicKey);
    const first = await connect(session);
    first.send({ type: "send", clientMessageId: clientMessageId(), text: "tell me a long story" });
    const fourth = await first.next("delta", (d) => d.seq === 4);
    const seen = first.all("delta").filter((d) => d.runId === fourth.runId);
    const afterSeq = seen[seen.length - 1]!.seq;
    first.ws.close(1000, "dropped");

    const second = await connect(session, { resume: { runId: fourth.runId, afterSeq } });
    const done = await second.next("run", (f) => f.runId === fourth.runId && f.status === "succeeded");
    const resumed = second.all("delta").filter((d) => d.runId === done.runId);
    expect(resumed[0]!.seq).toBe(afterSeq + 1);
    const all = [...seen, ...resumed].map((d) => d.seq);
    expect(all).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const assistant = await second.next("entry", (f) => f.entry.role === "assistant");
    expect(assistant.entry.text).toBe([...seen, ...resumed].map((d) => d.text).join(""));
  });

  it("gives a late joiner the whole live run without a resume request", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 12, chunkDelayMs: 30 }) });
    const session = await launch(agent.publicKey);
    const first = await connect(session);
    first.send({ type: "send", clientMessageId: clientMessageId(), text: "late joiner" });
    const d = await first.next("delta", (f) => f.seq === 5);
    const late = await connect(session);
    await late.next("run", (f) => f.runId === d.runId && f.status === "succeeded");
    expect(late.all("delta").map((f) => f.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });

  it("edits and regenerates as forks without destroying history", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "first question" });
    const firstUser = await ws.next("entry", (f) => f.entry.role === "user");
    const firstReply = await ws.next("entry", (f) => f.entry.role === "assistant");
    await ws.next("run", (f) => f.status === "succeeded");

    ws.send({
      type: "edit",
      entryId: firstUser.entry.id,
      text: "better question",
      clientMessageId: clientMessageId(),
    });
    const edited = await ws.next(
      "entry",
      (f) => f.entry.role === "user" && f.entry.text === "better question",
    );
    expect(edited.entry.parentId).toBe(firstUser.entry.parentId);
    const editedReply = await ws.next(
      "entry",
      (f) => f.entry.role === "assistant" && f.entry.parentId === edited.entry.id,
    );
    await ws.next("run", (f) => f.status === "succeeded" && f.runId === editedReply.entry.runId);

    ws.send({ type: "regenerate", entryId: editedReply.entry.id });
    const regenerated = await ws.next(
      "entry",
      (f) =>
        f.entry.role === "assistant" &&
        f.entry.parentId === edited.entry.id &&
        f.entry.id !== editedReply.entry.id,
    );
    await ws.next("run", (f) => f.status === "succeeded" && f.runId === regenerated.entry.runId);

    // Both branches read back correctly; the original one is intact.
    expect((await branch(session, firstReply.entry.id)).map((e) => e.text)).toEqual([
      "first question",
      firstReply.entry.text,
    ]);
    expect((await branch(session, regenerated.entry.id)).map((e) => e.id)).toEqual([
      edited.entry.id,
      regenerated.entry.id,
    ]);
    expect((await branch(session)).at(-1)!.id).toBe(regenerated.entry.id);
  });

  it("prompts from the branch alike whether remembered or read back, and forgets what retention deleted", async () => {
    const agent = await liveAgent({
      artifact: { ...local({ chunks: 3 }), limits: { retention: { maxMessagesPerThread: 2 } } },
    });
    const session = await launch(agent.publicKey);
    const thread = await stub(agent, session.threadId);
    const ws = await connect(session);
    const turn = async (frame: Record<string, unknown>) => {
      ws.send(frame);
      const run = await ws.next("run", (f) => f.status === "succeeded");
      const reply = await ws.next(
        "entry",
        (f) => f.entry.role === "assistant" && f.entry.runId === run.runId,
      );
      return { runId: run.runId, replyId: reply.entry.id };
    };
    const send = (text: string) => turn({ type: "send", clientMessageId: clientMessageId(), text });
    // The local model bills every prompt character: equal input tokens mean an equal prompt.
    const promptTokens = (runId: string) =>
      runInDurableObject(thread, (_i, state) =>
        Number(
          state.storage.sql.exec("SELECT SUM(input_tokens) AS n FROM usage WHERE run_id = ?", runId).one().n,
        ),
      );

    await send("first question");
    await send("second question");
    const third = await send("third question");
    // A regenerate reads its branch back from storage; the third turn's prompt was the remembered history.
    const again = await turn({ type: "regenerate", entryId: third.replyId });
    expect(await promptTokens(again.runId)).toBe(await promptTokens(third.runId));
    expect(await promptTokens(third.runId)).toBeGreaterThan(0);

    const retention = await thread.applyRetention(address(agent, session.threadId));
    expect(retention.ok && retention.value.deletedEntries).toBeGreaterThan(0);
    const fourth = await send("fourth question");
    const fourthAgain = await turn({ type: "regenerate", entryId: fourth.replyId });
    expect(await promptTokens(fourth.runId)).toBe(await promptTokens(fourthAgain.runId));
    expect(await promptTokens(fourth.runId)).toBeLessThan(await promptTokens(third.runId));
  });

  it("cancels a running reply and seals what was written as interrupted", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 50, chunkDelayMs: 50 }) });
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "go on and on" });
    const d = await ws.next("delta", (f) => f.seq === 3);
    ws.send({ type: "cancel", runId: d.runId });
    const ended = await ws.next("run", (f) => f.runId === d.runId && f.status === "aborted");
    expect(ended.status).toBe("aborted");
    const reply = await ws.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.status).toBe("interrupted");
    expect(reply.entry.text.length).toBeGreaterThan(0);
  });

  it("refuses a send while a reply is streaming, storing nothing", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 20, chunkDelayMs: 40 }) });
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "first" });
    await ws.next("delta");
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "second" });
    const error = await ws.next("error");
    expect(error.code).toBe("conflict");
    await ws.next("run", (f) => f.status === "succeeded");
    expect((await branch(session)).map((e) => e.text)).not.toContain("second");
  });

  it("reports a model failure mid-stream as a failed run with the partial reply sealed", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 10, failAfterChunks: 3 }) });
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "break please" });
    const failed = await ws.next("run", (f) => f.status === "failed");
    expect(failed.error?.code).toBeDefined();
    const reply = await ws.next("entry", (f) => f.entry.role === "assistant");
    expect(reply.entry.status).toBe("failed");
    expect(ws.all("delta").filter((f) => f.runId === failed.runId)).toHaveLength(3);
  });

  it("pages history along the current branch", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    for (const text of ["one", "two"]) {
      ws.send({ type: "send", clientMessageId: clientMessageId(), text });
      await ws.next("run", (f) => f.status === "succeeded");
    }
    ws.send({ type: "history", limit: 3 });
    const page1 = await ws.next("history");
    expect(page1.items.map((e) => e.role)).toEqual(["user", "assistant", "user"]);
    expect(page1.nextCursor).toBeDefined();
    ws.send({ type: "history", limit: 3, cursor: page1.nextCursor });
    const page2 = await ws.next("history");
    expect(page2.items.map((e) => e.role)).toEqual(["assistant"]);
    expect(page2.nextCursor).toBeUndefined();
  });

  it("answers ping with pong", async () => {
    const agent = await liveAgent();
    const ws = await connect(await launch(agent.publicKey));
    ws.send({ type: "ping" });
    await ws.next("pong");
  });
});

describe("limits and bad frames", () => {
  it("refuses an over-long message with an error frame and stores nothing", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "x".repeat(8001) });
    expect((await ws.next("error")).code).toBe("bad_request");
    expect(await branch(session)).toEqual([]);
  });

  it("closes 1009 on a frame over 64 KiB and stores nothing", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "x".repeat(70_000) });
    expect((await ws.waitClosed()).code).toBe(1009);
    expect(await branch(session)).toEqual([]);
  });

  it("answers malformed frames with errors, then closes 4400 after repeated abuse", async () => {
    const agent = await liveAgent();
    const ws = await connect(await launch(agent.publicKey));
    ws.send("not json");
    expect((await ws.next("error")).code).toBe("bad_request");
    ws.send({ type: "teleport" });
    expect((await ws.next("error")).code).toBe("bad_request");
    ws.send(new Uint8Array([1, 2, 3]));
    expect((await ws.next("error")).code).toBe("bad_request");
    ws.send({ type: "ping" });
    await ws.next("pong");
    for (let i = 0; i < 3; i++) ws.send("{");
    expect((await ws.waitClosed()).code).toBe(4400);
  });

  it("never lets a client write history, state or assistant turns", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "hi", role: "assistant" });
    expect((await ws.next("error")).code).toBe("bad_request");
    ws.send({ type: "entry", entry: { role: "assistant", text: "I am the model now" } });
    expect((await ws.next("error")).code).toBe("bad_request");
    ws.send({ type: "cf_agent_state", state: { pwned: true } });
    expect((await ws.next("error")).code).toBe("bad_request");
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "only this" });
    await ws.next("run", (f) => f.status === "succeeded");
    expect((await branch(session)).map((e) => [e.role, e.text])).toEqual([
      ["user", "only this"],
      ["assistant", "Echo: only this"],
    ]);
  });

  it("closes 4429 past the per-thread send rate and stores none of the excess", async () => {
    const agent = await liveAgent({ artifact: { limits: { maxSendsPerMinute: 3 } } });
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    for (let i = 0; i < 3; i++) {
      ws.send({ type: "send", clientMessageId: clientMessageId(), text: `m${i}` });
      await ws.next("run", (f) => f.status === "succeeded");
    }
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "one too many" });
    expect((await ws.waitClosed()).code).toBe(4429);
    expect((await branch(session)).filter((e) => e.role === "user")).toHaveLength(3);
  });
});

describe("the per-socket frame budget", () => {
  /** Sends until the socket is closed (a send on a closing socket throws); returns how many went out. */
  function flood(ws: FrameReader, frames: readonly unknown[]): number {
    let sent = 0;
    for (const frame of frames) {
      if (ws.closed) break;
      try {
        ws.send(frame);
      } catch {
        break;
      }
      sent += 1;
    }
    return sent;
  }

  it("closes 4429 when pings, history and hello arrive faster than the budget, answering those within it", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const kinds = [{ type: "ping" }, { type: "history", limit: 1 }, { type: "hello", protocol: 1 }];
    flood(
      ws,
      Array.from({ length: 2000 }, (_, i) => kinds[i % kinds.length]),
    );
    expect(await ws.waitClosed()).toEqual({ code: 4429, reason: "rate_limited" });
    const answered = ws.all("pong").length + ws.all("history").length + ws.all("ready").length - 1;
    // The whole burst was answered (the connecting hello spent one frame of it); the flood was not.
    expect(answered).toBeGreaterThanOrEqual(LIMITS.frameBurst - 1);
    expect(answered).toBeLessThan(2000);
  });

  it("counts malformed frames against the budget too", async () => {
    const agent = await liveAgent();
    const ws = await connect(await launch(agent.publicKey));
    // Four malformed frames (the fifth would close 4400), then pings past the budget.
    flood(ws, [..."abcd", ...Array.from({ length: 500 }, () => ({ type: "ping" }))]);
    expect((await ws.waitClosed()).code).toBe(4429);
    expect(ws.all("error")).toHaveLength(4);
  });

  it("refills the budget on the thread's clock", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const pings = (n: number) => Array.from({ length: n }, () => ({ type: "ping" }));
    // The connecting hello spent one frame: the rest of the burst is answered.
    flood(ws, pings(LIMITS.frameBurst - 1));
    await ws.next("pong", () => ws.all("pong").length === LIMITS.frameBurst - 1);
    // Half a minute later on the object's clock, half a minute of frames is available again.
    await inTestThread(await stub(agent, session.threadId), (instance) => instance.clock.advance(30_000));
    flood(ws, pings(30 * LIMITS.framesPerSecond));
    await ws.next(
      "pong",
      () => ws.all("pong").length === LIMITS.frameBurst - 1 + 30 * LIMITS.framesPerSecond,
    );
    expect(ws.closed).toBeNull();
  });
});

describe("the frame budget per (thread, visitor)", () => {
  /** Opens a socket with `token` without a hello, so every frame it sends is the test's. */
  async function rawSocket(session: Launch): Promise<FrameReader> {
    const res = await upgradeRequest(session.threadId, { token: session.token });
    if (res.status !== 101) expect.fail(`upgrade answered ${res.status}: ${await res.text()}`);
    const ws = res.webSocket!;
    ws.accept();
    return new FrameReader(ws);
  }

  /** Pings until the socket closes; how many pongs came back. */
  async function pingUntilClosed(ws: FrameReader, count: number): Promise<number> {
    for (let i = 0; i < count && ws.closed === null; i += 1) {
      try {
        ws.send({ type: "ping" });
      } catch {
        break;
      }
    }
    expect(await ws.waitClosed()).toEqual({ code: 4429, reason: "rate_limited" });
    return ws.all("pong").length;
  }

  it("gives a reconnect with the same token no fresh burst: its frames are refused with 4429", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const first = await rawSocket(session);
    expect(await pingUntilClosed(first, LIMITS.frameBurst * 3)).toBeGreaterThanOrEqual(LIMITS.frameBurst);

    // The same token again: the budget it spent is the visitor's, not the closed socket's. Only what the real
    // clock refilled in between (a second or two) is answered.
    const second = await rawSocket(session);
    expect(await pingUntilClosed(second, LIMITS.frameBurst)).toBeLessThan(5);

    // Also after the object was evicted: the budget is read back from the thread's storage.
    await evictDurableObject(await stub(agent, session.threadId));
    const third = await rawSocket(session);
    expect(await pingUntilClosed(third, LIMITS.frameBurst)).toBeLessThan(5);
  });

  it("shares one budget between two open sockets of the visitor", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const a = await rawSocket(session);
    const b = await rawSocket(session);
    const half = LIMITS.frameBurst / 2;
    for (let i = 0; i < half; i += 1) a.send({ type: "ping" });
    await a.next("pong", () => a.all("pong").length === half);
    const fromB = await pingUntilClosed(b, LIMITS.frameBurst);
    expect(fromB).toBeGreaterThanOrEqual(half);
    expect(fromB).toBeLessThan(half + 5);
    a.ws.close();
  });
});

describe("pinning and eviction", () => {
  it("keeps the pinned version after eviction even when a new release is active", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "pin me" });
    await ws.next("run", (f) => f.status === "succeeded");
    ws.ws.close();

    await saveDraft(agent.apiKey, agent.agentId, 1, validArtifact({ name: "Support v2" }));
    await publish(agent.apiKey, agent.agentId, 2);
    const release = await createRelease(agent.apiKey, agent.agentId, [{ version: 2, weight: 10_000 }]);
    await api(`/v1/agents/${agent.agentId}/releases/${release.id}/activate`, {
      method: "POST",
      key: agent.apiKey,
    });

    await evictDurableObject(await stub(agent, session.threadId));
    const info = await threadGet(session);
    expect(await info.json()).toMatchObject({ agent: { version: 1, name: "Support" } });
    const again = await connect(session);
    expect(again.all("ready")[0]).toMatchObject({ agent: { name: "Support", version: 1 } });

    // A new thread follows the new release.
    const fresh = await connect(await launch(agent.publicKey));
    expect(fresh.all("ready")[0]).toMatchObject({ agent: { name: "Support v2", version: 2 } });
  });

  it("arms the keep-alive heartbeat only for a turn that runs long, and releases it when the turn ends", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 10, hangAfterChunks: 5 }) });
    const session = await launch(agent.publicKey);
    const thread = await stub(agent, session.threadId);
    const ws = await connect(session);
    const keepAlives = () => runInDurableObject(thread, (instance: ThreadAgent) => instance._keepAliveRefs);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "a reply that never ends" });
    const d = await ws.next("delta", (f) => f.seq === 5);
    // Streaming, but not yet long: no heartbeat.
    expect(await keepAlives()).toBe(0);
    // The turn's "running long" timer comes due now instead of after 10 s.
    expect(await inTestThread(thread, (instance) => instance.timers.fireAll())).toBe(1);
    expect(await waitFor(keepAlives, (n) => n === 1, { what: "the keep-alive heartbeat" })).toBe(1);
    ws.send({ type: "cancel", runId: d.runId });
    await ws.next("run", (f) => f.runId === d.runId && f.status === "aborted");
    expect(await waitFor(keepAlives, (n) => n === 0, { what: "the heartbeat released" })).toBe(0);
  });

  it("seals a reply cut off by the object's death as interrupted, holding every delta a client received", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 40, hangAfterChunks: 25 }) });
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({
      type: "send",
      clientMessageId: clientMessageId(),
      text: "please hang after a good long while, thanks",
    });
    const d = await ws.next("delta", (f) => f.seq === 25);
    // The object dies mid-stream, as on a deploy or a crash: its in-memory turn is gone, its storage is not.
    await abortAllDurableObjects();

    const back = await connect(session, { resume: { runId: d.runId, afterSeq: 25 } });
    const ended = await back.next("run", (f) => f.runId === d.runId);
    expect(ended.status).toBe("aborted");
    const reply = (await branch(session)).at(-1)!;
    expect(reply.role).toBe("assistant");
    expect(reply.status).toBe("interrupted");
    // Every delta the client received is in the sealed reply, in order, from its first character.
    const received = ws
      .all("delta")
      .filter((f) => f.runId === d.runId)
      .map((f) => f.text)
      .join("");
    expect(ws.all("delta").filter((f) => f.runId === d.runId)).toHaveLength(25);
    expect(reply.text.startsWith(received)).toBe(true);
  });
});

describe("thread HTTP", () => {
  it("returns the final entries as JSON when not streaming", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const res = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      body: { clientMessageId: clientMessageId(), text: "plain http" },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { run: { status: string }; entries: { role: string; text: string }[] };
    expect(body.run.status).toBe("succeeded");
    expect(body.entries.map((e) => [e.role, e.text])).toEqual([
      ["user", "plain http"],
      ["assistant", "Echo: plain http"],
    ]);
  });

  it("keeps every delta an SSE client received when the object dies mid-stream", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 30, hangAfterChunks: 12 }) });
    const session = await launch(agent.publicKey);
    const res = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN, Accept: "text/event-stream" },
      body: { clientMessageId: clientMessageId(), text: "stream me over sse until you hang" },
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    while (!/^id: 12\nevent: delta\ndata: .*\n\n/m.test(seen)) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
    }
    await abortAllDurableObjects();
    await reader.cancel().catch(() => {});
    const deltas = [...seen.matchAll(/^event: delta\ndata: (.*)$/gm)].map(
      (m) => JSON.parse(m[1]!) as { runId: string; seq: number; text: string },
    );
    expect(deltas.map((d) => d.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));

    // The next start seals the run; the sealed reply begins with everything the SSE client was sent.
    const back = await connect(session, { resume: { runId: deltas[0]!.runId, afterSeq: 12 } });
    expect((await back.next("run", (f) => f.runId === deltas[0]!.runId)).status).toBe("aborted");
    const reply = (await branch(session)).at(-1)!;
    expect(reply).toMatchObject({ role: "assistant", status: "interrupted" });
    expect(reply.text.startsWith(deltas.map((d) => d.text).join(""))).toBe(true);
  });

  it("streams SSE and resumes from Last-Event-ID without duplicates", async () => {
    const agent = await liveAgent({ artifact: local({ chunks: 8, chunkDelayMs: 20 }) });
    const session = await launch(agent.publicKey);
    const post = ssePost(session, "sse please");
    const first = await post({});
    expect(first.headers.get("Content-Type")).toContain("text/event-stream");
    const full = await first.text();
    const ids = [...full.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(full).toContain('"status":"succeeded"');

    // The run is over: a resume with Last-Event-ID gets the sealed reply, never the deltas again.
    const resumed = await (await post({ "Last-Event-ID": "5" })).text();
    expect(resumed).not.toMatch(/^id: [1-5]$/m);
    expect(resumed).toContain("Echo: sse please");
    expect((await branch(session)).filter((e) => e.role === "user")).toHaveLength(1);
  });

  it("resumes a running SSE stream from Last-Event-ID with exactly the deltas after it", async () => {
    // 40 chunks 50 ms apart: the run is still streaming when the second request arrives.
    const agent = await liveAgent({ artifact: local({ chunks: 40, chunkDelayMs: 50 }) });
    const session = await launch(agent.publicKey);
    const post = ssePost(session, "resume me while you are still writing");
    const deltasOf = (text: string) =>
      [...text.matchAll(/^id: (\d+)\nevent: delta\ndata: (.*)$/gm)].map((m) => ({
        id: Number(m[1]),
        delta: JSON.parse(m[2]!) as { seq: number; text: string },
      }));

    // The first client reads three deltas and drops the connection.
    const reader = (await post({})).body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    while (deltasOf(seen).length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
    }
    await reader.cancel().catch(() => {});
    const before = deltasOf(seen).slice(0, 3);
    expect(before.map((d) => d.id)).toEqual([1, 2, 3]);

    const resumed = await post({ "Last-Event-ID": "3" });
    const after = deltasOf(await resumed.text());
    // Deltas on the resumed stream prove it joined the run while it ran (an ended run resumes as its sealed reply).
    expect(after.map((d) => d.id)).toEqual(Array.from({ length: 37 }, (_, i) => i + 4));
    expect(after.map((d) => d.delta.seq)).toEqual(after.map((d) => d.id));
    const reply = (await branch(session)).at(-1)!;
    expect(reply).toMatchObject({ role: "assistant", text: "Echo: resume me while you are still writing" });
    expect([...before, ...after].map((d) => d.delta.text).join("")).toBe(reply.text);
  });
});

describe("idle sockets", () => {
  it("closes a socket idle past the limit with 4408 and the thread goes on", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "before idling" });
    await ws.next("run", (f) => f.status === "succeeded");
    const threadStub = await stub(agent, session.threadId);
    // The sweep runs from an alarm every 30 s; here it runs once the object's clock has moved past 300 s.
    await inTestThread(threadStub, (instance) => {
      instance.clock.advance(301_000);
      return instance.sweepIdleConnections();
    });
    expect((await ws.waitClosed()).code).toBe(4408);

    const again = await connect(session);
    again.send({ type: "send", clientMessageId: clientMessageId(), text: "after idling" });
    await again.next("run", (f) => f.status === "succeeded");
    expect((await branch(session)).map((e) => e.text)).toEqual([
      "before idling",
      "Echo: before idling",
      "after idling",
      "Echo: after idling",
    ]);
  });

  it("wakes next when something is due (its standing recheck, its idle deadline), not on a period; 4408 there", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const threadStub = await stub(agent, session.threadId);
    await inTestThread(threadStub, (instance) => instance.clock.advance(60_000));
    ws.send({ type: "ping" });
    await ws.next("pong");
    // Connected at 0 (its standing read then, due again at +300 s), last active at +60 s (idle at +360 s): nothing
    // needs the object before +300 s.
    const nextInSeconds = await inTestThread(threadStub, async (instance) => {
      await instance.sweepIdleConnections();
      const times = instance
        .getSchedules()
        .filter((s) => s.callback === "sweepIdleConnections")
        .map((s) => s.time * 1000 - Date.now());
      return Math.max(...times) / 1000;
    });
    expect(nextInSeconds).toBeGreaterThan(230);
    expect(nextInSeconds).toBeLessThanOrEqual(242);
    expect(ws.closed).toBeNull();
    await inTestThread(threadStub, (instance) => {
      instance.clock.advance(300_001);
      return instance.sweepIdleConnections();
    });
    expect((await ws.waitClosed()).code).toBe(4408);
  });

  it("keeps a socket that was active recently", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    await inTestThread(await stub(agent, session.threadId), (instance) => {
      instance.clock.advance(60_000);
      return instance.sweepIdleConnections();
    });
    ws.send({ type: "ping" });
    await ws.next("pong");
  });
});
