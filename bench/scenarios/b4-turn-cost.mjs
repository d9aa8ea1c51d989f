// B4: rows and statements one turn costs, from the bench Worker's metered ThreadRuntime + projection drain.
import { BENCH_CHUNKS } from "../lib/seed.mjs";

const CHUNK_TABLE = "run_chunks";

function mean(xs) {
  return xs.length === 0 ? null : Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 100) / 100;
}

async function turnCost(echo, name, body) {
  const res = await fetch(`${echo.baseUrl}/turn-cost/${name}-${process.pid}-${Date.now()}`, {
    method: "POST",
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`turn-cost answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

/** The product's default projection window (PROJECTION_WINDOW_MS in wrangler.toml). */
const WINDOW_MS = 250;

export async function benchTurnCost({ echo, turns = 20 }) {
  const { turns: samples } = await turnCost(echo, "cost", { turns, chunks: BENCH_CHUNKS });
  // The same turns back to back with the drains coalesced by the window: the cheapest a busy thread gets.
  const { coalesced } = await turnCost(echo, "window", { turns, chunks: BENCH_CHUNKS, windowMs: WINDOW_MS });
  // The first turn also creates the session row in D1; steady state is what every later turn costs.
  const steady = samples.slice(1);
  const chunkRows = (t) => t.turn.byTable[CHUNK_TABLE] ?? 0;
  const byTable = {};
  for (const t of steady) {
    for (const [table, rows] of Object.entries(t.turn.byTable)) byTable[table] = (byTable[table] ?? 0) + rows;
    for (const [table, rows] of Object.entries(t.drainDo.byTable)) {
      byTable[`${table} (drain)`] = (byTable[`${table} (drain)`] ?? 0) + rows;
    }
  }
  for (const key of Object.keys(byTable))
    byTable[key] = Math.round((byTable[key] / steady.length) * 100) / 100;
  return {
    turnsMeasured: steady.length,
    deltasPerTurn: BENCH_CHUNKS,
    doRowsWrittenPerTurn: mean(steady.map((t) => t.turn.rowsWritten - chunkRows(t) + t.drainDo.rowsWritten)),
    doRowsWrittenPerTurnWithoutDrain: mean(steady.map((t) => t.turn.rowsWritten - chunkRows(t))),
    doChunkRowsWrittenPerTurn: mean(steady.map(chunkRows)),
    doStatementsPerTurn: mean(steady.map((t) => t.turn.statements + t.drainDo.statements)),
    doRowsWrittenByTable: byTable,
    d1BatchesPerTurn: mean(steady.map((t) => t.d1.batches)),
    d1SingleStatementsPerTurn: mean(steady.map((t) => t.d1.singles)),
    d1StatementsPerTurn: mean(steady.map((t) => t.d1.statements)),
    d1RowsWrittenPerTurn: mean(steady.map((t) => t.d1.rowsWritten)),
    outboxRowsDrainedPerTurn: mean(steady.map((t) => t.drained)),
    // Sockets aside, what one turn occupies the object for: the CPU floor of B2's throughput.
    firstDeltaMsMean: mean(steady.map((t) => t.firstDeltaMs)),
    turnMsMean: mean(steady.map((t) => t.turnMs)),
    drainMsMean: mean(steady.map((t) => t.drainMs)),
    coalesced: {
      windowMs: coalesced.windowMs,
      turns: coalesced.turns,
      drains: coalesced.drains,
      doRowsWrittenPerTurn:
        Math.round(((coalesced.turn.rowsWritten - chunkRows(coalesced)) / coalesced.turns) * 100) / 100,
      d1BatchesPerTurn: Math.round((coalesced.d1.batches / coalesced.turns) * 100) / 100,
    },
    firstTurn: samples[0],
    // A steady turn's statements by query text: what to look at when statements per turn should drop.
    lastTurn: samples.at(-1),
  };
}
