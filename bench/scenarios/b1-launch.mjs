// B1: POST /v1/agent-sessions against GET /v1/health (a constant-JSON route of the same Worker). Latency is read
// with one request in flight, launch and health strictly alternating, so each pair sees the same moment of machine
// noise; requests/s with `concurrency` in flight, in alternating rounds.
import { AgentThreadsError } from "agent-threads/client";
import { closedLoop } from "../lib/load.mjs";
import { launch as launchSession } from "../lib/product-client.mjs";
import { summarize } from "../lib/stats.mjs";

export async function benchLaunch({ product, agent, rounds = 3, perRound = 200, concurrency = 4, log }) {
  const health = async () => {
    const res = await fetch(`${product.baseUrl}/v1/health`);
    await res.arrayBuffer();
    return res.status === 200 || `HTTP ${res.status}`;
  };
  const launch = async () => {
    try {
      await launchSession(product.baseUrl, agent);
      return true;
    } catch (error) {
      return error instanceof AgentThreadsError ? `HTTP ${error.status}` : String(error);
    }
  };
  // Warm-up: JIT, connection pool, the agent's first D1 reads.
  await closedLoop({ total: 40, concurrency, send: health });
  await closedLoop({ total: 40, concurrency, send: launch });

  const samples = { health: [], launch: [] };
  const loaded = { health: [], launch: [] };
  const rps = { health: [], launch: [] };
  let failures = 0;
  let firstFailure = null;
  const record = (result) => {
    failures += result.failures;
    firstFailure ??= result.firstFailure;
    return result;
  };
  const timed = async (name, send) => {
    const t0 = performance.now();
    try {
      const result = await send();
      if (result === true) samples[name].push(performance.now() - t0);
      else record({ failures: 1, firstFailure: String(result) });
    } catch (error) {
      record({ failures: 1, firstFailure: error instanceof Error ? error.message : String(error) });
    }
  };
  for (let round = 0; round < rounds; round += 1) {
    for (let i = 0; i < perRound; i += 1) {
      await timed("health", health);
      await timed("launch", launch);
    }
    for (const [name, send] of [
      ["health", health],
      ["launch", launch],
    ]) {
      const result = record(await closedLoop({ total: perRound, concurrency, send }));
      loaded[name].push(...result.latencies);
      rps[name].push(result.rps);
    }
    log?.(`  round ${round + 1}/${rounds}`);
  }
  const mean = (xs) => Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10) / 10;
  const route = (name) => ({
    latencyMs: summarize(samples[name]),
    loadedLatencyMs: summarize(loaded[name]),
    requestsPerSecond: mean(rps[name]),
  });
  return {
    concurrency,
    requestsPerRoute: rounds * perRound * 2,
    health: route("health"),
    launch: route("launch"),
    failures,
    ...(firstFailure !== null ? { firstFailure } : {}),
  };
}
