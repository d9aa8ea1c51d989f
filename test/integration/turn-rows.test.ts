// What one steady-state turn writes to the thread object's SQLite, counted as SQLite (and billing) counts it: every
// statement's cursor `rowsWritten`, rows plus index entries, from the user's send to the reply's projection into D1.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TOKEN_COUNT_WINDOW_MS } from "../../src/auth/run-quota";
import { projectionBacklog } from "../../src/storage/projection/outbox";
import {
  forwardedEventSeq,
  markEventsForwarded,
  recordThreadEvent,
  threadEventsAfter,
  unforwardedEventCount,
} from "../../src/storage/thread/thread-events";
import { migrateThreadSchema } from "../../src/storage/thread/thread-schema";
import { threadStub } from "../helpers/projection";
import { inTestThread } from "../helpers/test-thread-agent";
import { clientMessageId, connect, launch, liveAgent } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const WRITE =
  /^\s*(?:WITH\b[\s\S]*?\)\s*)?(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+["`]?(\w+)/i;

/** The thread's own target for a turn drained to D1 at once (README "Performance", B4). */
const MAX_ROWS_PER_TURN = 12;
/**
 * SQL statements a steady turn runs on the thread's SQLite, its drain included: 19 (21 before a hand-over that knows
 * nothing is waiting stopped reading for events; 83 before the newest leaf was read in one statement and an
 * unupgraded thread stopped looking up entries for its binding; 62 before the drain read its
 * meta keys at once, a screen became one read, an append one write, the seal stopped reading what it had just written
 * (docs/decisions.md "Statements per turn") and a run event no endpoint subscribes to stopped being recorded and
 * handed over): every one costs the object CPU, so a change that adds reads to the turn's path shows here, with the
 * turn's statements by query text. Counted without the test's own polls and the resume log's writes, whose number
 * follows the machine's load, so the count is the same on every run.
 */
const MAX_STATEMENTS_PER_TURN = 19;
/** The resume log of a live run: rows that go when it ends, reported apart (as B4 does). */
const CHUNK_TABLE = "run_chunks";
/** The run event's removal once the tenant's events object stored it (B4 runs no hand-over). */
const HANDOVER = "thread_events (acknowledged)";

interface Recorder {
  cursors: { table: string; query: string; cursor: SqlStorageCursor<Record<string, SqlStorageValue>> }[];
  /** True while the test itself reads the object (its polls), so only the turn's own statements are counted. */
  paused: boolean;
  restore: () => void;
}

// The recorder lives in the test isolate, which is also the thread object's: installed by one call into the object,
// read by a later one.
let recorder: Recorder | null = null;

function record(storage: DurableObjectStorage): void {
  const sql = storage.sql as { exec: SqlStorage["exec"] };
  const exec = sql.exec;
  const cursors: Recorder["cursors"] = [];
  sql.exec = ((query: string, ...bindings: unknown[]) => {
    const cursor = exec.call(storage.sql, query, ...bindings);
    if (recorder?.paused) return cursor;
    const table = WRITE.exec(query)?.[1]?.toLowerCase() ?? "(other)";
    // The event hand-over's delete of an acknowledged event is reported apart from the turn and its drain.
    cursors.push({
      table: table === "thread_events" && /^\s*DELETE/i.test(query) ? HANDOVER : table,
      query,
      cursor,
    });
    return cursor;
  }) as SqlStorage["exec"];
  recorder = {
    cursors,
    paused: false,
    restore: () => {
      sql.exec = exec;
    },
  };
}

/** The test's own reads, left out of the count: how often it polls depends on the machine's load. */
function unrecorded<T>(read: () => T): T {
  if (recorder) recorder.paused = true;
  try {
    return read();
  } finally {
    if (recorder) recorder.paused = false;
  }
}

function tally(): {
  byTable: Record<string, number>;
  statements: number;
  breakdown: string;
  messageScans: number;
} {
  const byTable: Record<string, number> = {};
  const cursors = recorder?.cursors ?? [];
  for (const { table, cursor } of cursors) {
    if (cursor.rowsWritten > 0) byTable[table] = (byTable[table] ?? 0) + cursor.rowsWritten;
  }
  recorder?.restore();
  recorder = null;
  // The resume log is written as the stream's timing packs it, so its statements are reported apart, as its rows are.
  const counted = cursors.filter(({ table }) => table !== CHUNK_TABLE);
  // Each statement's text (its first 100 characters) and how often the turn ran it, in the order first run.
  const byQuery = new Map<string, number>();
  for (const { query } of counted) {
    const text = query.replace(/\s+/g, " ").trim().slice(0, 100);
    byQuery.set(text, (byQuery.get(text) ?? 0) + 1);
  }
  const breakdown = [...byQuery].map(([text, n]) => `${n}× ${text}`).join("\n");
  // The drain's session row counts the thread's messages by advancing the last drain's count, not by a scan.
  const messageScans = counted.filter(({ query }) =>
    /COUNT\(\*\) FROM entries WHERE kind = 'message'/.test(query),
  ).length;
  return { byTable, statements: counted.length, breakdown, messageScans };
}

describe("rows written per turn", () => {
  it(`a steady-state turn, drained to D1, writes at most ${MAX_ROWS_PER_TURN} rows to the thread's SQLite`, async () => {
    const agent = await liveAgent({
      artifact: { model: { provider: "local", model: "echo", local: { chunks: 20 } } },
    });
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);
    const ws = await connect(session);
    const turn = async (text: string) => {
      ws.send({ type: "send", clientMessageId: clientMessageId(), text });
      const user = await ws.next("entry", (f) => f.entry.role === "user" && f.entry.text === text);
      const done = await ws.next("run", (f) => f.status === "succeeded" && f.runId !== undefined);
      // The turn is over once its projection drained and its run event was handed over: nothing is left to do.
      await waitFor(
        () =>
          runInDurableObject(stub, (_i, state) =>
            unrecorded(() => projectionBacklog(state.storage) + unforwardedEventCount(state.storage)),
          ),
        (left) => left === 0,
        { what: "the turn's projection and event hand-over" },
      );
      return { user, done };
    };

    // The first turn binds the thread and creates its session row; every later turn costs what this one does.
    await turn("first");
    // A turn a window after the last: its tokens are counted to the quota at once, nothing held back. (A thread taking
    // several turns within TOKEN_COUNT_WINDOW_MS holds their tokens back instead, one meta row per window.)
    await inTestThread(stub, (instance) => instance.clock.advance(TOKEN_COUNT_WINDOW_MS));
    await runInDurableObject(stub, (_i, state) => record(state.storage));
    const second = await turn("second");
    const { byTable, statements, breakdown, messageScans } = await runInDurableObject(stub, () => tally());
    ws.ws.close();

    expect(second.done.runId).toBeDefined();
    const sum = (skip: readonly string[]) =>
      Object.entries(byTable)
        .filter(([table]) => !skip.includes(table))
        .reduce((n, [, count]) => n + count, 0);
    const detail = JSON.stringify(byTable);
    // Two entries (row and id index each), the run (created running, its audit, its end), its usage, and the drain's
    // bookkeeping (the run's outbox row in and out, the entry watermark). No run event: the tenant has no endpoint, and
    // the thread learned that from its first hand-over (docs/decisions.md, "Events handed over only when someone
    // listens").
    expect(byTable, detail).toMatchObject({
      entries: 4,
      runs: 3,
      usage: 1,
      outbox: 2,
      meta: 1,
    });
    expect(byTable.thread_events ?? 0, detail).toBe(0);
    expect(sum([CHUNK_TABLE, HANDOVER]), detail).toBeLessThanOrEqual(MAX_ROWS_PER_TURN);
    // With the event's hand-over: its row goes once acknowledged, and the watermark is not rewritten for it.
    expect(byTable[HANDOVER] ?? 0, detail).toBeLessThanOrEqual(1);
    expect(sum([CHUNK_TABLE]), detail).toBeLessThanOrEqual(MAX_ROWS_PER_TURN + 1);
    expect(statements, `statements of the turn:\n${breakdown}`).toBeLessThanOrEqual(MAX_STATEMENTS_PER_TURN);
    expect(messageScans, breakdown).toBe(0);
  });

  it("forgets an acknowledged run event without a watermark write, and never loses the next one", async () => {
    const stub = env.THREAD.get(env.THREAD.idFromName(`turn-rows-events-${crypto.randomUUID()}`));
    const result = await runInDurableObject(stub, (_i, state) => {
      const storage = state.storage;
      migrateThreadSchema(storage);
      const at = 1_000;
      const feedback = recordThreadEvent(storage, { type: "message.feedback", data: {} }, at);
      markEventsForwarded(storage, feedback.seq, at);
      const run = recordThreadEvent(storage, { type: "run.succeeded", data: {} }, at);
      markEventsForwarded(storage, run.seq, at);
      const afterRun = { watermark: forwardedEventSeq(storage), left: unforwardedEventCount(storage) };
      // Past the rate window the kept feedback event goes too: the table is empty, the watermark above its seqs.
      markEventsForwarded(storage, run.seq, at + 10 * 60_000);
      const next = recordThreadEvent(storage, { type: "run.failed", data: {} }, at + 10 * 60_000);
      return {
        afterRun,
        next: next.seq,
        pending: threadEventsAfter(storage, forwardedEventSeq(storage)).map((e) => e.type),
        rows: Number(storage.sql.exec("SELECT COUNT(*) AS n FROM thread_events").one().n),
      };
    });
    // The run event went at once; the watermark stayed on the feedback event, which stays for the rate check.
    expect(result.afterRun).toEqual({ watermark: 1, left: 0 });
    // A new event lands above the watermark even though every row below it is gone, so it is forwarded.
    expect(result.next).toBeGreaterThan(1);
    expect(result.pending).toEqual(["run.failed"]);
    expect(result.rows).toBe(1);
  });
});
