// A live run's deltas on a real thread object: each is stored before it is sent, the first at once, the rest of an
// event-loop turn in one write, packed ten to a chunk row, never sent once the run has ended, and at the run's end
// the rest sent with the seal that stored it in the reply entry.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ServerFrame } from "../../src/shared/protocol";
import { migrateThreadSchema } from "../../src/storage/thread/thread-schema";
import { DELTAS_PER_CHUNK, LiveRun } from "../../src/thread/run/live-run";
import { openRunStores } from "../../src/thread/run/run-stores";

const newThread = () => env.THREAD.get(env.THREAD.idFromName(`live-run-${crypto.randomUUID()}`));

type Delta = Extract<ServerFrame, { type: "delta" }>;

/** A live run whose coalesced writes happen when the test says, recording each delta sent and what was stored then. */
function liveRun(storage: DurableObjectStorage) {
  migrateThreadSchema(storage);
  const stores = openRunStores(storage, { now: Date.now });
  stores.runs.create({ id: "run-1" });
  stores.runs.transition("run-1", "running");
  const sent: { frame: Delta; storedThen: string[] }[] = [];
  const due: (() => void)[] = [];
  const live = new LiveRun({
    runId: "run-1",
    stores,
    subject: null,
    now: Date.now,
    schedule: (flush) => due.push(flush),
    send: (frame) => {
      if (frame.type !== "delta") return;
      sent.push({ frame, storedThen: stores.chunks.after("run-1", 0).map((d) => d.text) });
    },
  });
  const endTurn = () => {
    for (const flush of due.splice(0)) flush();
  };
  const chunkRows = () =>
    storage.sql.exec("SELECT first_seq, last_seq FROM run_chunks ORDER BY first_seq").toArray();
  return { live, stores, sent, endTurn, chunkRows };
}

describe("LiveRun", () => {
  it("sends the run's first delta at once, already stored, and the rest of a turn together after one write", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      const { live, sent, endTurn, chunkRows } = liveRun(state.storage);
      live.push("Hel");
      const afterFirst = sent.map((s) => s.frame.seq);
      live.push("lo");
      live.push(" there");
      const beforeTurnEnds = sent.length;
      endTurn();
      return { afterFirst, beforeTurnEnds, sent, rows: chunkRows() };
    });
    expect(result.afterFirst).toEqual([1]);
    // Deltas 2 and 3 wait for the end of the turn: nothing unstored has left.
    expect(result.beforeTurnEnds).toBe(1);
    expect(result.sent.map((s) => [s.frame.seq, s.frame.text])).toEqual([
      [1, "Hel"],
      [2, "lo"],
      [3, " there"],
    ]);
    // Whenever a delta was sent, it (and everything before it) was already stored.
    for (const { frame, storedThen } of result.sent) {
      expect(storedThen.slice(0, frame.seq).join("")).toBe(
        result.sent
          .slice(0, frame.seq)
          .map((s) => s.frame.text)
          .join(""),
      );
    }
    expect(result.rows).toEqual([{ first_seq: 1, last_seq: 3 }]);
  });

  it("packs a long reply ten deltas to a row, stored before each send, and resumes from any seq", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      const { live, stores, sent, endTurn, chunkRows } = liveRun(state.storage);
      for (let i = 1; i <= 25; i += 1) {
        live.push(`d${i} `);
        // Three deltas per event-loop turn, as a provider's network reads deliver them.
        if (i % 3 === 0) endTurn();
      }
      endTurn();
      return {
        sent,
        rows: chunkRows(),
        catchUp: live.catchUpFrames(18),
        stored: stores.chunks.after("run-1", 0).length,
      };
    });
    expect(result.sent.map((s) => s.frame.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    for (const { frame, storedThen } of result.sent) {
      expect(storedThen.length).toBeGreaterThanOrEqual(frame.seq);
      expect(storedThen[frame.seq - 1]).toBe(frame.text);
    }
    expect(DELTAS_PER_CHUNK).toBe(10);
    expect(result.rows).toEqual([
      { first_seq: 1, last_seq: 10 },
      { first_seq: 11, last_seq: 20 },
      { first_seq: 21, last_seq: 25 },
    ]);
    expect(result.stored).toBe(25);
    expect(result.catchUp.filter((f) => f.type === "delta").map((f) => (f as Delta).seq)).toEqual([
      19, 20, 21, 22, 23, 24, 25,
    ]);
  });

  it("sends nothing it could not store once the run has ended under the model", async () => {
    const result = await runInDurableObject(newThread(), (_i, state) => {
      const { live, stores, sent, endTurn } = liveRun(state.storage);
      live.push("kept");
      live.push("late");
      stores.runs.transition("run-1", "aborted", { abortReason: "interrupted" });
      endTurn();
      live.push("later");
      endTurn();
      return sent.map((s) => s.frame.text);
    });
    expect(result).toEqual(["kept"]);
  });

  it("at the run's end sends the unstored rest once the seal stored the reply, without chunk rows, and drops it otherwise", async () => {
    const sealedWith = (stored: boolean) =>
      runInDurableObject(newThread(), (_i, state) => {
        const { live, sent, endTurn, chunkRows } = liveRun(state.storage);
        live.push("one");
        live.push(" two");
        live.push(" three");
        // The model finished within the turn: the seal takes what was not stored yet.
        live.settle(stored);
        const settled = sent.map((s) => [s.frame.seq, s.frame.text]);
        endTurn();
        live.push(" four");
        endTurn();
        return { settled, sent: sent.length, rows: chunkRows().length };
      });
    const stored = await sealedWith(true);
    expect(stored.settled).toEqual([
      [1, "one"],
      [2, " two"],
      [3, " three"],
    ]);
    // Only the first delta's row was written; the rest rode on the reply entry. Nothing follows the end.
    expect(stored.rows).toBe(1);
    expect(stored.sent).toBe(3);
    const refused = await sealedWith(false);
    expect(refused.settled).toEqual([[1, "one"]]);
    expect(refused.sent).toBe(1);
  });
});
