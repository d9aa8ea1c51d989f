// B2: 50 concurrent threads × 20 turns on the `local` model against a bare hibernating echo Agent (same runtime, 20
// delta frames per message). Also samples the D1 projection lag (B4) while the load runs.
import { FrameSocket } from "../lib/frame-socket.mjs";
import { connect, launch, mapLimit, sendFrame } from "../lib/product-client.mjs";
import { BENCH_CHUNKS } from "../lib/seed.mjs";
import { summarize } from "../lib/stats.mjs";

async function drive(sockets, turns, makeFrame, onRun = () => {}) {
  const runs = [];
  let errors = 0;
  let firstError = null;
  await Promise.all(
    sockets.map(async (socket, t) => {
      for (let i = 0; i < turns; i += 1) {
        try {
          const run = await socket.turn(makeFrame(t, i), BENCH_CHUNKS);
          runs.push(run);
          onRun(run);
        } catch (error) {
          errors += 1;
          firstError ??= error instanceof Error ? error.message : String(error);
        }
      }
    }),
  );
  return { runs, errors, firstError };
}

function report({ runs, errors, firstError }, seconds) {
  const ok = runs.filter((r) => r.status === "succeeded");
  return {
    turns: runs.length,
    succeeded: ok.length,
    errors,
    ...(firstError !== null ? { firstError } : {}),
    firstDeltaMs: summarize(ok.map((r) => r.firstDeltaMs)),
    runEndMs: summarize(ok.map((r) => r.endMs)),
    lostDeltas: runs.reduce((n, r) => n + r.lost, 0),
    duplicatedDeltas: runs.reduce((n, r) => n + r.duplicated, 0),
    turnsPerSecond: Math.round((runs.length / seconds) * 10) / 10,
  };
}

async function echoRound({ echo, threads, turns, round }) {
  const url = `${echo.baseUrl.replace(/^http/, "ws")}/echo`;
  const sockets = await mapLimit(
    Array.from({ length: threads }, (_, t) => t),
    10,
    (t) => FrameSocket.open(`${url}/r${round}-t${t}-${process.pid}`),
  );
  const start = performance.now();
  const result = await drive(sockets, turns, (t, i) => ({ type: "send", text: `thread ${t} turn ${i}` }));
  const seconds = (performance.now() - start) / 1000;
  for (const s of sockets) s.close();
  return { result, seconds };
}

/** One thread, one turn at a time: the turn's own latency, without queueing behind other threads. */
async function unloaded({ product, echo, agent, turns }) {
  const echoSocket = await FrameSocket.open(
    `${echo.baseUrl.replace(/^http/, "ws")}/echo/solo-${process.pid}`,
  );
  const { socket } = await connect(await launch(product.baseUrl, agent), agent);
  const productRuns = [];
  const echoRuns = [];
  for (let i = 0; i < turns; i += 1) {
    echoRuns.push(await echoSocket.turn({ type: "send", text: `solo turn ${i}` }, BENCH_CHUNKS));
    productRuns.push(await socket.turn(sendFrame(`Solo turn ${i}`), BENCH_CHUNKS));
  }
  echoSocket.close();
  socket.close();
  const pick = (runs) => ({
    firstDeltaMs: summarize(runs.map((r) => r.firstDeltaMs)),
    runEndMs: summarize(runs.map((r) => r.endMs)),
  });
  return { turns, product: pick(productRuns), echo: pick(echoRuns) };
}

export async function benchTurns({ product, echo, agent, threads = 50, turns = 20, projection, log }) {
  const solo = await unloaded({ product, echo, agent, turns });
  log?.(`  one thread alone: ${turns} turns each`);
  // Baseline before and after the product run, merged, so drift on the machine affects both sides alike.
  const echoA = await echoRound({ echo, threads, turns, round: "a" });
  log?.(`  echo baseline (1/2): ${echoA.result.runs.length} turns`);

  const sessions = await mapLimit(
    Array.from({ length: threads }, (_, t) => t),
    5,
    () => launch(product.baseUrl, agent),
  );
  const connected = await mapLimit(sessions, 5, (session) => connect(session, agent));
  const sockets = connected.map((c) => c.socket);
  projection?.start();
  const start = performance.now();
  const result = await drive(
    sockets,
    turns,
    (t, i) => sendFrame(`Thread ${t}, turn ${i}: hello there`),
    (run) => {
      if (run.replyEntryId !== null) projection?.expect(run.replyEntryId, run.endAt);
    },
  );
  const seconds = (performance.now() - start) / 1000;
  log?.(`  product: ${result.runs.length} turns in ${seconds.toFixed(1)} s`);
  for (const s of sockets) s.close();

  const echoB = await echoRound({ echo, threads, turns, round: "b" });
  log?.(`  echo baseline (2/2): ${echoB.result.runs.length} turns`);
  const echoMerged = {
    runs: [...echoA.result.runs, ...echoB.result.runs],
    errors: echoA.result.errors + echoB.result.errors,
    firstError: echoA.result.firstError ?? echoB.result.firstError,
  };
  return {
    threads,
    turnsPerThread: turns,
    deltasPerTurn: BENCH_CHUNKS,
    product: report(result, seconds),
    echo: report(echoMerged, echoA.seconds + echoB.seconds),
    oneThread: solo,
    sessions,
  };
}
