// B4: rows and statements one turn costs, from the bench Worker's metered ThreadRuntime + projection drain.
import { BENCH_CHUNKS } from "../lib/seed.mjs";

const CHUNK_TABLE = "run_chunks";

function mean(xs) {
  return xs.length === 0 ? null : Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 100) / 100;
}

export async function benchTurnCost({ echo, turns = 20 }) {
  const res = await fetch(`${echo.baseUrl}/turn-cost/cost-${process.pid}-${Date.now()}`, {
    method: "POST",
    body: JSON.stringify({ turns, chunks: BENCH_CHUNKS }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`turn-cost answered ${res.status}: ${text.slice(0, 500)}`);
  const { turns: samples } = JSON.parse(text);
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
    firstTurn: samples[0],
  };
}
