// B2: 50 concurrent threads × 20 turns on the `local` model against a bare hibernating echo Agent (same runtime, 20
// delta frames per message) and against the peer (bench/peer-worker: the same turn on `AIChatAgent` from
// `@cloudflare/ai-chat` with AI SDK `streamText`), in alternating rounds. Also samples the D1 projection lag (B4) meanwhile.
import { FrameSocket } from "../lib/frame-socket.mjs";
import { PeerSocket } from "../lib/peer-client.mjs";
import { connect, launch, mapLimit, sendFrame } from "../lib/product-client.mjs";
import { BENCH_CHUNKS } from "../lib/seed.mjs";
import { summarize } from "../lib/stats.mjs";

/** Every socket runs `turns` turns back to back (`turn(socket, t, i)`), all sockets at once. */
async function drive(sockets, turns, turn, onRun = () => {}) {
  const runs = [];
  let errors = 0;
  let firstError = null;
  await Promise.all(
    sockets.map(async (socket, t) => {
      for (let i = 0; i < turns; i += 1) {
        try {
          const run = await turn(socket, t, i);
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

/** Drives one side's round and times it. */
async function timedRound(sockets, turns, turn, onRun) {
  const start = performance.now();
  const result = await drive(sockets, turns, turn, onRun);
  return { result, seconds: (performance.now() - start) / 1000 };
}

function merge(rounds) {
  return {
    result: {
      runs: rounds.flatMap((r) => r.result.runs),
      errors: rounds.reduce((n, r) => n + r.result.errors, 0),
      firstError: rounds.find((r) => r.result.firstError !== null)?.result.firstError ?? null,
    },
    seconds: rounds.reduce((n, r) => n + r.seconds, 0),
  };
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

const echoUrl = (echo) => `${echo.baseUrl.replace(/^http/, "ws")}/echo`;
const peerUrl = (peer) => `${peer.baseUrl.replace(/^http/, "ws")}/agents/peer-chat`;

async function echoRound({ echo, threads, turns, round }) {
  const sockets = await mapLimit(
    Array.from({ length: threads }, (_, t) => t),
    10,
    (t) => FrameSocket.open(`${echoUrl(echo)}/r${round}-t${t}-${process.pid}`),
  );
  const timed = await timedRound(sockets, turns, (socket, t, i) =>
    socket.turn({ type: "send", text: `thread ${t} turn ${i}` }, BENCH_CHUNKS),
  );
  for (const s of sockets) s.close();
  return timed;
}

/** One thread, one turn at a time: the turn's own latency, without queueing behind other threads. */
async function unloaded({ product, echo, peer, agent, turns }) {
  const echoSocket = await FrameSocket.open(`${echoUrl(echo)}/solo-${process.pid}`);
  const peerSocket = peer ? await PeerSocket.open(`${peerUrl(peer)}/solo-${process.pid}`) : null;
  const { socket } = await connect(await launch(product.baseUrl, agent), agent);
  const productRuns = [];
  const peerRuns = [];
  const echoRuns = [];
  for (let i = 0; i < turns; i += 1) {
    echoRuns.push(await echoSocket.turn({ type: "send", text: `solo turn ${i}` }, BENCH_CHUNKS));
    productRuns.push(await socket.turn(sendFrame(`Solo turn ${i}`), BENCH_CHUNKS));
    if (peerSocket) peerRuns.push(await peerSocket.turn(`Solo turn ${i}`, BENCH_CHUNKS));
  }
  echoSocket.close();
  peerSocket?.close();
  socket.close();
  const pick = (runs) => ({
    firstDeltaMs: summarize(runs.map((r) => r.firstDeltaMs)),
    runEndMs: summarize(runs.map((r) => r.endMs)),
  });
  return {
    turns,
    product: pick(productRuns),
    echo: pick(echoRuns),
    ...(peerSocket ? { peer: pick(peerRuns) } : {}),
  };
}

/**
 * `threads` threads × `turns` turns on each side. The turns are split into `rounds` rounds, and every round runs the
 * product, then the peer, then the echo, so drift on the machine falls on all three alike. Product and peer threads
 * keep their sockets (and conversations) across rounds; the echo opens new ones.
 */
export async function benchTurns({
  product,
  echo,
  peer,
  agent,
  threads = 50,
  turns = 20,
  rounds = 2,
  projection,
  log,
}) {
  const solo = await unloaded({ product, echo, peer, agent, turns });
  log?.(`  one thread alone: ${turns} turns each`);

  const sessions = await mapLimit(
    Array.from({ length: threads }, (_, t) => t),
    5,
    () => launch(product.baseUrl, agent),
  );
  const connected = await mapLimit(sessions, 5, (session) => connect(session, agent));
  const productSockets = connected.map((c) => c.socket);
  const peerSockets = peer
    ? await mapLimit(
        Array.from({ length: threads }, (_, t) => t),
        10,
        (t) => PeerSocket.open(`${peerUrl(peer)}/t${t}-${process.pid}`),
      )
    : [];
  projection?.start();
  const sides = { product: [], peer: [], echo: [] };
  let done = 0;
  for (let r = 0; r < rounds; r += 1) {
    const n = Math.floor((turns * (r + 1)) / rounds) - Math.floor((turns * r) / rounds);
    const offset = done;
    done += n;
    sides.product.push(
      await timedRound(
        productSockets,
        n,
        (socket, t, i) =>
          socket.turn(sendFrame(`Thread ${t}, turn ${offset + i}: hello there`), BENCH_CHUNKS),
        (run) => {
          if (run.replyEntryId !== null) projection?.expect(run.replyEntryId, run.endAt);
        },
      ),
    );
    if (peer) {
      sides.peer.push(
        await timedRound(peerSockets, n, (socket, t, i) =>
          socket.turn(`Thread ${t}, turn ${offset + i}: hello there`, BENCH_CHUNKS),
        ),
      );
    }
    sides.echo.push(await echoRound({ echo, threads, turns: n, round: r }));
    log?.(`  round ${r + 1}/${rounds}: ${n} turns per thread on each side`);
  }
  for (const s of productSockets) s.close();
  for (const s of peerSockets) s.close();

  const productAll = merge(sides.product);
  const echoAll = merge(sides.echo);
  const peerAll = peer ? merge(sides.peer) : null;
  return {
    threads,
    turnsPerThread: turns,
    rounds,
    deltasPerTurn: BENCH_CHUNKS,
    product: report(productAll.result, productAll.seconds),
    echo: report(echoAll.result, echoAll.seconds),
    ...(peerAll ? { peer: report(peerAll.result, peerAll.seconds) } : {}),
    oneThread: solo,
    sessions,
  };
}
