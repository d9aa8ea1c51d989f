// B3: the entry store inside a Durable Object of the bench Worker: append rate into one thread (against plain
// INSERTs), and the newest leaf's branch in a 10,000-entry thread with 50 forks (against listing every entry and
// walking parents in memory), both timed inside the same object.
import { summarize } from "../lib/stats.mjs";

async function post(baseUrl, path, body) {
  const res = await fetch(`${baseUrl}${path}`, { method: "POST", body: JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

export const TREE = { trunk: 200, forks: 50, forkLength: 196, seed: 20261129 };

/** Reads per sample: workerd's timers tick in whole milliseconds, so each sample is the mean of `reps` reads. */
export async function benchEntryStore({ echo, iterations = 100, walkEvery = 5, reps = 10 }) {
  const name = `entries-${process.pid}-${Date.now()}`;
  const built = await post(echo.baseUrl, `/entry-bench/${name}/build`, TREE);
  const read = await post(echo.baseUrl, `/entry-bench/${name}/read`, { iterations, walkEvery, reps });
  const perSecond = (ms) => Math.round(1000 / ms);
  const appendMs = summarize(built.appendMs);
  const samplesNote = `latencies are means of ${reps} consecutive reads (appends: of 100), one sample each`;
  const rawMs = summarize(built.rawInsertMs);
  return {
    samplesNote,
    tree: {
      ...TREE,
      entries: built.entries,
      newestLeafDepth: built.newestLeafDepth,
      branchDepth: read.branchDepth,
    },
    append: {
      latencyMs: appendMs,
      perSecond: Math.round((built.entries / built.appendTotalMs) * 1000),
      perSecondAtP50: perSecond(appendMs.p50),
    },
    rawInsert: {
      latencyMs: rawMs,
      perSecond: Math.round((built.entries / built.rawInsertTotalMs) * 1000),
    },
    branchFullMs: summarize(read.branchFullMs),
    branchFirstPageMs: summarize(read.branchPageMs),
    branchSqlOnlyMs: summarize(read.branchSqlOnlyMs),
    listAndWalkMs: summarize(read.listWalkMs),
  };
}
