// A run's tables on a real thread object: run lifecycle, resumable chunks, tool calls and usage.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EntryStore } from "../../src/storage/thread/entry-store";
import { RunChunkStore } from "../../src/storage/thread/run-chunk-store";
import { RunStore } from "../../src/storage/thread/run-store";
import { migrateThreadSchema } from "../../src/storage/thread/thread-schema";
import { ToolCallStore } from "../../src/storage/thread/tool-call-store";
import { UsageStore } from "../../src/storage/thread/usage-store";

let tick = Date.UTC(2026, 0, 1);
const now = () => tick++;
const SECRET = "provider-key-value-42";

const newThread = () => env.THREAD.get(env.THREAD.idFromName(`run-store-${crypto.randomUUID()}`));

function open(storage: DurableObjectStorage) {
  migrateThreadSchema(storage);
  return {
    runs: new RunStore(storage, { now, secrets: [SECRET] }),
    chunks: new RunChunkStore(storage, { now, secrets: [SECRET] }),
    toolCalls: new ToolCallStore(storage, { now, secrets: [SECRET] }),
    usage: new UsageStore(storage, { now, secrets: [SECRET] }),
    entries: new EntryStore(storage, { now, secrets: [SECRET] }),
    outbox: () =>
      storage.sql
        .exec("SELECT kind, ref_id, version FROM outbox ORDER BY seq")
        .toArray()
        .map((r) => `${r.kind}:${r.ref_id}:${r.version}`),
  };
}

describe("RunStore runs", () => {
  it("creates a queued run once per idempotency key, also after a restart", async () => {
    const stub = newThread();
    const first = await runInDurableObject(stub, (_i, state) => {
      const { runs, outbox } = open(state.storage);
      const created = runs.create({ id: "run-1", idempotencyKey: "client-msg-1", versionId: "ver-1" });
      const again = runs.create({ id: "run-2", idempotencyKey: "client-msg-1" });
      const dupId = runs.create({ id: "run-1" });
      return { created, again, dupId, outbox: outbox(), run2: runs.get("run-2") };
    });
    expect(first.created).toMatchObject({
      ok: true,
      value: { created: true, run: { id: "run-1", status: "queued", versionId: "ver-1", revision: 1 } },
    });
    expect(first.again).toMatchObject({ ok: true, value: { created: false, run: { id: "run-1" } } });
    expect(first.dupId).toMatchObject({ ok: false, code: "conflict" });
    expect(first.run2).toBeNull();
    expect(first.outbox).toEqual(["run:run-1:1"]);

    await evictDurableObject(stub);
    const afterRestart = await runInDurableObject(stub, (_i, state) => {
      const { runs, outbox } = open(state.storage);
      return { again: runs.create({ idempotencyKey: "client-msg-1" }), outbox: outbox() };
    });
    expect(afterRestart.again).toMatchObject({ ok: true, value: { created: false, run: { id: "run-1" } } });
    expect(afterRestart.outbox).toEqual(["run:run-1:1"]);
  });

  it("moves through allowed statuses only, stamping times and versions", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      const { runs, outbox } = open(state.storage);
      runs.create({ id: "ok-run" });
      const early = runs.transition("ok-run", "succeeded");
      const running = runs.transition("ok-run", "running");
      const back = runs.transition("ok-run", "queued");
      const done = runs.transition("ok-run", "succeeded", { assistantEntryId: "a-1" });
      const revive = runs.transition("ok-run", "running");
      runs.create({ id: "cancel-run" });
      const cancelled = runs.transition("cancel-run", "aborted", { abortReason: "cancelled" });
      runs.create({ id: "fail-run" });
      runs.transition("fail-run", "running");
      const failed = runs.transition("fail-run", "failed", {
        error: { code: "upstream_unavailable", message: `provider said: bad key ${SECRET}` },
      });
      const missing = runs.transition("nope", "running");
      return {
        codes: [early, back, revive, missing].map((r) => (r.ok ? "ok" : r.code)),
        running,
        done,
        cancelled,
        failed,
        outbox: outbox(),
        active: runs.active().map((r) => r.id),
      };
    });
    expect(result.codes).toEqual(["conflict", "conflict", "conflict", "not_found"]);
    expect(result.running).toMatchObject({
      ok: true,
      value: { status: "running", endedAt: null, revision: 2 },
    });
    if (!result.done.ok || !result.running.ok) throw new Error("transitions failed");
    expect(result.done.value).toMatchObject({ status: "succeeded", assistantEntryId: "a-1", revision: 3 });
    expect(result.done.value.startedAt).toBe(result.running.value.startedAt);
    expect(result.done.value.endedAt).toBeGreaterThan(result.done.value.startedAt ?? 0);
    expect(result.cancelled).toMatchObject({
      ok: true,
      value: { status: "aborted", abortReason: "cancelled", startedAt: null },
    });
    expect(result.failed).toMatchObject({
      ok: true,
      value: {
        status: "failed",
        error: { code: "upstream_unavailable", message: "provider said: bad key [REDACTED]" },
      },
    });
    // One waiting row per run, as it was queued: later changes (and refused transitions) write nothing to the outbox,
    // since the drain reads each run as it is when it drains (projection.test.ts).
    expect(result.outbox).toEqual(["run:ok-run:1", "run:cancel-run:1", "run:fail-run:1"]);
    expect(result.active).toEqual([]);
  });

  it("ends a run even when the provider's error text is huge, keeping a bounded prefix", async () => {
    const ended = await runInDurableObject(newThread(), (_i, state) => {
      const { runs } = open(state.storage);
      runs.create({ id: "verbose" });
      runs.transition("verbose", "running");
      return runs.transition("verbose", "failed", {
        error: { code: "internal", message: "x".repeat(20_000) },
      });
    });
    expect(ended).toMatchObject({ ok: true, value: { status: "failed" } });
    expect(ended.ok && ended.value.error?.message.length).toBe(4000);
  });

  it("lists queued and running runs as active", async () => {
    const active = await runInDurableObject(newThread(), (_i, state) => {
      const { runs } = open(state.storage);
      runs.create({ id: "r1" });
      runs.create({ id: "r2" });
      runs.create({ id: "r3" });
      runs.transition("r1", "running");
      runs.transition("r2", "aborted");
      return runs.active().map((r) => [r.id, r.status]);
    });
    expect(active).toEqual([
      ["r1", "running"],
      ["r3", "queued"],
    ]);
  });
});

describe("RunChunkStore", () => {
  it("gives a resuming client exactly the deltas after its seq, across a restart", async () => {
    const stub = newThread();
    const written = await runInDurableObject(stub, (_i, state) => {
      const { runs, chunks } = open(state.storage);
      runs.create({ id: "stream" });
      runs.transition("stream", "running");
      const texts = Array.from({ length: 25 }, (_, i) => `d${i + 1} `);
      return [
        chunks.write("stream", 1, texts.slice(0, 10)),
        chunks.write("stream", 11, texts.slice(10, 20)),
        // The open row grows a delta at a time: each write stores it again with one more.
        chunks.write("stream", 21, texts.slice(20, 21)),
        chunks.write("stream", 21, texts.slice(20, 23)),
        chunks.write("stream", 21, texts.slice(20)),
        // A gap or an overlap would lose or duplicate deltas; an earlier row or a shorter one would drop some.
        chunks.write("stream", 27, ["gap"]),
        chunks.write("stream", 20, ["overlap"]),
        chunks.write("stream", 11, texts.slice(10, 20)),
        chunks.write("stream", 21, texts.slice(20, 22)),
        chunks.write("stream", 26, []),
      ].map((r) => (r.ok ? r.value.lastSeq : r.code));
    });
    expect(written).toEqual([
      10,
      20,
      21,
      23,
      25,
      "conflict",
      "conflict",
      "conflict",
      "conflict",
      "bad_request",
    ]);

    await evictDurableObject(stub);
    const resumed = await runInDurableObject(stub, (_i, state) => {
      const { chunks } = open(state.storage);
      return {
        after7: chunks.after("stream", 7),
        after20: chunks.after("stream", 20),
        after25: chunks.after("stream", 25),
        all: chunks.after("stream", 0).length,
      };
    });
    expect(resumed.after7.map((d) => d.seq)).toEqual(Array.from({ length: 18 }, (_, i) => i + 8));
    expect(resumed.after7[0]).toEqual({ seq: 8, text: "d8 " });
    expect(resumed.after20).toEqual([21, 22, 23, 24, 25].map((seq) => ({ seq, text: `d${seq} ` })));
    expect(resumed.after25).toEqual([]);
    expect(resumed.all).toBe(25);
  });

  it("drops the chunks in the same transaction that commits the final entry and ends the run", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      const { runs, entries, chunks } = open(state.storage);
      entries.append({ id: "u1", parentId: null, kind: "message", role: "user", body: { text: "hi" } });
      runs.create({ id: "final-run", userEntryId: "u1" });
      runs.transition("final-run", "running");
      chunks.write("final-run", 1, ["Hel", "lo"]);

      // A crash between the two writes must leave neither.
      let crashed = false;
      try {
        state.storage.transactionSync(() => {
          entries.append({
            id: "a1",
            parentId: "u1",
            kind: "message",
            role: "assistant",
            runId: "final-run",
            body: { text: "Hello" },
          });
          runs.transition("final-run", "succeeded", { assistantEntryId: "a1" });
          throw new Error("simulated crash");
        });
      } catch {
        crashed = true;
      }
      const afterCrash = {
        entry: entries.get("a1"),
        status: runs.get("final-run")?.status,
        deltas: chunks.after("final-run", 0).length,
      };

      const committed = state.storage.transactionSync(() => {
        const entry = entries.append({
          id: "a1",
          parentId: "u1",
          kind: "message",
          role: "assistant",
          runId: "final-run",
          body: { text: "Hello" },
        });
        const ended = runs.transition("final-run", "succeeded", { assistantEntryId: "a1" });
        return entry.ok && ended.ok;
      });
      return {
        crashed,
        afterCrash,
        committed,
        entry: entries.get("a1")?.body,
        run: runs.get("final-run"),
        deltas: chunks.after("final-run", 0),
        lateChunk: chunks.write("final-run", 3, ["!"]),
      };
    });
    expect(result.crashed).toBe(true);
    expect(result.afterCrash).toEqual({ entry: null, status: "running", deltas: 2 });
    expect(result.committed).toBe(true);
    expect(result.entry).toEqual({ text: "Hello" });
    expect(result.run).toMatchObject({ status: "succeeded", assistantEntryId: "a1", userEntryId: "u1" });
    expect(result.deltas).toEqual([]);
    expect(result.lateChunk).toMatchObject({ ok: false, code: "conflict" });
  });
});

describe("ToolCallStore and UsageStore", () => {
  it("records tool calls from start to end with redacted input and output", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      const { runs, outbox, toolCalls } = open(state.storage);
      runs.create({ id: "tools" });
      const started = toolCalls.record({
        id: "call-1",
        runId: "tools",
        name: "lookup",
        input: { q: "weather", apiKey: SECRET },
      });
      const finished = toolCalls.complete("call-1", {
        status: "finished",
        output: { echo: `key=${SECRET}` },
      });
      const twice = toolCalls.complete("call-1", { status: "error", output: null });
      const dup = toolCalls.record({ id: "call-1", runId: "tools", name: "lookup", input: {} });
      const noRun = toolCalls.record({ id: "call-2", runId: "missing", name: "lookup", input: {} });
      const noCall = toolCalls.complete("missing", { status: "finished" });
      return {
        started,
        finished,
        codes: [twice, dup, noRun, noCall].map((r) => (r.ok ? "ok" : r.code)),
        list: toolCalls.forRun("tools"),
        outbox: outbox(),
      };
    });
    expect(result.started).toMatchObject({
      ok: true,
      value: {
        status: "started",
        input: { q: "weather", apiKey: "[REDACTED]" },
        output: null,
        endedAt: null,
      },
    });
    expect(result.finished).toMatchObject({
      ok: true,
      value: { status: "finished", output: { echo: "key=[REDACTED]" }, revision: 2 },
    });
    expect(result.codes).toEqual(["conflict", "conflict", "not_found", "not_found"]);
    expect(result.list.map((c) => [c.id, c.status])).toEqual([["call-1", "finished"]]);
    // The call's one row, as queued when it started: its end wrote nothing more to the outbox.
    expect(result.outbox).toEqual(["run:tools:1", "tool_call:call-1:1"]);
  });

  it("records usage per provider turn once and totals it per run", async () => {
    const stub = newThread();
    const result = await runInDurableObject(stub, (_i, state) => {
      const { runs, outbox, usage } = open(state.storage);
      runs.create({ id: "u-run" });
      runs.create({ id: "other" });
      const turn = (inputTokens: number, outputTokens: number) => ({
        provider: "local",
        model: "echo",
        inputTokens,
        outputTokens,
      });
      const accepted = [
        usage.record("u-run", 0, turn(100, 20)),
        usage.record("u-run", 1, turn(150, 35)),
        usage.record("other", 0, turn(7, 7)),
      ].map((r) => r.ok);
      const refused = [
        usage.record("u-run", 1, turn(1, 1)),
        usage.record("u-run", 2, turn(-1, 1)),
        usage.record("u-run", -1, turn(1, 1)),
        usage.record("u-run", 1.5, turn(1, 1)),
        usage.record("missing", 0, turn(1, 1)),
      ].map((r) => (r.ok ? "ok" : r.code));
      return { accepted, refused, outbox: outbox(), records: usage.records("u-run") };
    });
    expect(result.accepted).toEqual([true, true, true]);
    expect(result.refused).toEqual(["conflict", "bad_request", "bad_request", "bad_request", "not_found"]);
    // Usage queues nothing of its own: it is projected with its run.
    expect(result.outbox).toEqual(["run:u-run:1", "run:other:1"]);
    expect(result.records.map((u) => [u.turn, u.inputTokens, u.outputTokens])).toEqual([
      [0, 100, 20],
      [1, 150, 35],
    ]);

    await evictDurableObject(stub);
    const totals = await runInDurableObject(stub, (_i, state) => {
      const { usage } = open(state.storage);
      return [usage.totalsForRun("u-run"), usage.totalsForRun("other"), usage.totalsForRun("none")];
    });
    expect(totals).toEqual([
      { turns: 2, inputTokens: 250, outputTokens: 55 },
      { turns: 1, inputTokens: 7, outputTokens: 7 },
      { turns: 0, inputTokens: 0, outputTokens: 0 },
    ]);
  });
});
