// B7: per-version analytics and search on a synthetic tenant of 1M messages in local D1 (the bench Worker seeds it
// with INSERT … SELECT over recursive CTEs, so the product's triggers build the rollup and the FTS5 index as they
// would from projections), next to a second tenant sharing the vocabulary. Queries are timed from here, per request.
import { summarize } from "../lib/stats.mjs";

const MESSAGES_PER_THREAD = 20;
const CHUNK_THREADS = 2_500;
const KINDS = [
  "analytics-version",
  "analytics-day",
  "search",
  "search-page-2",
  "search-two-words",
  "search-common",
  "search-small-tenant",
];

async function post(echo, path, payload) {
  const res = await fetch(`${echo.baseUrl}${path}`, { method: "POST", body: JSON.stringify(payload) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

async function seed(echo, tenant, threads, log) {
  const t0 = performance.now();
  let statementsMs = 0;
  for (let from = 0; from < threads; from += CHUNK_THREADS) {
    const to = Math.min(threads, from + CHUNK_THREADS);
    const chunk = await post(echo, "/insights/seed", { tenant, fromThread: from, toThread: to });
    statementsMs += chunk.ms;
    if ((to / CHUNK_THREADS) % 4 === 0 || to === threads) {
      log(`  ${tenant}: ${(to * MESSAGES_PER_THREAD).toLocaleString("en")} messages seeded`);
    }
  }
  return { seconds: Math.round((performance.now() - t0) / 100) / 10, statementsMs };
}

export async function benchInsights({
  echo,
  messages = 1_000_000,
  noiseMessages = 100_000,
  samples = 40,
  log,
}) {
  const threads = Math.ceil(messages / MESSAGES_PER_THREAD);
  const noiseThreads = Math.ceil(noiseMessages / MESSAGES_PER_THREAD);
  log(`  seeding ${(threads * MESSAGES_PER_THREAD).toLocaleString("en")} messages (${threads} threads)…`);
  const main = await seed(echo, "main", threads, log);
  const noise = await seed(echo, "noise", noiseThreads, log);
  const words = {};
  for (const word of ["warranty", "refund", "damaged", "order"]) {
    words[word] = (await post(echo, "/insights/count", { word })).messages;
  }
  const queries = await measure(echo, KINDS, samples);
  // FTS5 keeps several segments per level as rows arrive; 'optimize' merges them into one, as a maintenance job
  // would. Searches again after it, to show how much of a search's time is the segment count.
  const optimized = await post(echo, "/insights/optimize", {});
  const afterOptimize = await measure(
    echo,
    KINDS.filter((k) => k.startsWith("search")),
    samples,
  );
  return {
    messages: threads * MESSAGES_PER_THREAD,
    threads,
    runs: threads * 10,
    noiseTenantMessages: noiseThreads * MESSAGES_PER_THREAD,
    seedSeconds: main.seconds,
    noiseSeedSeconds: noise.seconds,
    matchingMessages: words,
    queries,
    ftsOptimizeSeconds: Math.round(optimized.ms / 100) / 10,
    afterOptimize,
  };
}

async function measure(echo, kinds, samples) {
  const queries = {};
  for (const kind of kinds) {
    for (let i = 0; i < 3; i++) await post(echo, "/insights/query", { kind });
    const roundTrip = [];
    const inWorker = [];
    let items = 0;
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      const answer = await post(echo, "/insights/query", { kind });
      roundTrip.push(performance.now() - t0);
      inWorker.push(answer.ms);
      items = answer.items;
    }
    queries[kind] = { items, latencyMs: summarize(roundTrip), inWorkerMs: summarize(inWorker) };
  }
  return queries;
}
