// `npm run bench`: measures the runtime against baselines taken in the same run (machines here are shared and
// noisy, so every figure is read as a ratio), prints a table and writes bench/results/latest.json.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { CliError, runMain } from "../scripts/lib/cli.mjs";
import { root } from "../scripts/lib/paths.mjs";
import { watchProjection } from "./lib/projection-watch.mjs";
import { seedBenchAgent } from "./lib/seed.mjs";
import {
  startDelayedProductWorker,
  startEchoWorker,
  startPeerWorker,
  startProductWorker,
  stopAll,
} from "./lib/servers.mjs";
import { buildRows, printTable } from "./lib/table.mjs";
import { benchLaunch } from "./scenarios/b1-launch.mjs";
import { benchTurns } from "./scenarios/b2-turns.mjs";
import { benchEntryStore } from "./scenarios/b3-entry-store.mjs";
import { benchTurnCost } from "./scenarios/b4-turn-cost.mjs";
import { benchWidget, consoleSizes, widgetSizes } from "./scenarios/b5-widget.mjs";
import { benchColdStart, bundleSize } from "./scenarios/b6-bundle.mjs";
import { B7_DELAY_MS, benchConnectPath } from "./scenarios/b7-connect.mjs";
import { benchInsights } from "./scenarios/b8-insights.mjs";
import { benchApprovals } from "./scenarios/b9-approvals.mjs";
import { benchControlPlane } from "./scenarios/b10-control-plane.mjs";
import { attachModuleSize, benchAttachments } from "./scenarios/b11-attachments.mjs";
import { benchEvals } from "./scenarios/b12-evals.mjs";
import { benchIdleCost } from "./scenarios/b13-idle-cost.mjs";

const SCENARIOS = ["b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9", "b10", "b11", "b12", "b13"];
const HELP = `Usage: npm run bench [-- --only b1,b3 --quick --out <file>]

Starts the product Worker and the bench-only echo and peer Workers (bench/echo-worker, bench/peer-worker) with
\`wrangler dev\` on loopback ports with throwaway state, runs the scenarios, stops them, prints a table and writes
bench/results/latest.json.

  B1 launch       POST /v1/agent-sessions vs GET /v1/health
  B2 turns        50 threads × 20 turns (local model, 20 chunks) vs a bare hibernating echo Agent and vs the peer
                  (the same turn on the agents SDK's chat protocol with AI SDK streamText), alternating rounds
  B3 entry store  append rate; newest-leaf branch of a 10,000-entry, 50-fork thread vs list-and-walk
  B4 turn cost    DO rows and D1 batches/statements per turn; projection lag under B2's load
  B5 widget       loader/widget and console first-screen/on-demand gzip sizes; Chromium: script → launcher visible, open → ready
  B6 bundle       Worker bundle gzip size (wrangler deploy --dry-run); new thread's ready vs a warm thread's
  B7 connect path connect (upgrade → ready) and launch-resume with every D1 call delayed ${B7_DELAY_MS} ms vs none
  B8 insights     a synthetic tenant of 1M messages in local D1: 30-day analytics by version and search, p50 ≤ 50 ms
  B9 approvals    one thread: decision → first delta of the continuation vs send → first delta (≤ 2×); 100 runs
                  parked on approvals, the product restarted on its state, 100 decisions → 100 continuations
  B10 control plane
                  launch p50 with CONTROL_PLANE=http (the service over a local PostgreSQL) vs D1, alternating; and
                  connect → ready of an already bound thread in both (pins live in the object)
  B11 attachments a 10 MiB upload (POST /v1/threads/:threadId/attachments) vs a bare Worker's PUT of the same bytes
                  into local R2, alternating; the widget's attachments module, gzip
  B12 evals       a 100-case eval suite on the local model (12 chunks × 40 ms) through the real routes: run
                  created → completed, target ≤ 60 s
  B13 idle cost   DO requests (alarms) and rows written per open idle socket-hour (a simulated hour on the real
                  thread object, test/integration/socket-hour-cost.test.ts) and TenantQuota calls per 100 turns

  --only <list>   comma-separated scenarios to run (default: all)
  --quick         smaller loads (a smoke run; figures are noisier; B8 seeds 100,000 messages and says so)
  --out <file>    where to write the JSON (default bench/results/latest.json)
  --projection-window <ms>
                  the product's PROJECTION_WINDOW_MS for this run (default: wrangler.toml's, 250)`;

function machine() {
  const wrangler = JSON.parse(readFileSync(join(root, "node_modules", "wrangler", "package.json"), "utf8"));
  return {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    wrangler: wrangler.version,
    loadAverageAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

async function step(results, key, log, fn) {
  const t0 = performance.now();
  log(`${key}…`);
  try {
    results[key] = await fn();
  } catch (error) {
    results[key] = { failed: error instanceof Error ? error.message : String(error) };
    log(`  ${key} failed: ${results[key].failed}`);
  }
  log(`  ${key} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function main() {
  const { values } = parseArgs({
    options: {
      only: { type: "string" },
      quick: { type: "boolean" },
      out: { type: "string" },
      "projection-window": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const only = new Set((values.only ?? SCENARIOS.join(",")).split(",").map((s) => s.trim().toLowerCase()));
  for (const name of only) if (!SCENARIOS.includes(name)) throw new CliError(`unknown scenario "${name}".`);
  const quick = values.quick === true;
  const windowArg = values["projection-window"];
  if (windowArg !== undefined && !/^\d+$/.test(windowArg))
    throw new CliError(`--projection-window takes whole milliseconds, not "${windowArg}".`);
  const out = values.out ?? join(root, "bench", "results", "latest.json");
  const log = (line) => console.error(line);
  const started = performance.now();
  const results = {};
  const meta = {
    startedAt: new Date().toISOString(),
    quick,
    scenarios: [...only],
    ...(windowArg !== undefined ? { projectionWindowMs: Number(windowArg) } : {}),
    machine: machine(),
  };

  const stopOnSignal = (signal) => {
    void stopAll().then(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", stopOnSignal);
  process.once("SIGTERM", stopOnSignal);

  try {
    // Builds first, while no server competes for the two cores.
    if (only.has("b6")) await step(results, "b6Bundle", log, bundleSize);
    if (only.has("b5")) await step(results, "b5Sizes", log, widgetSizes);
    if (only.has("b5")) await step(results, "b5Console", log, consoleSizes);
    if (only.has("b11")) await step(results, "b11Module", log, attachModuleSize);
    // In workerd under vitest, before any server starts: it needs none.
    if (only.has("b13")) await step(results, "b13", log, () => benchIdleCost({ log }));

    const needProduct = ["b1", "b2", "b5", "b6", "b9", "b10", "b11", "b12"].some((s) => only.has(s));
    const needEcho = ["b2", "b3", "b4", "b8", "b11"].some((s) => only.has(s));
    const [product, echo, delayed, peer] = await Promise.all([
      needProduct ? startProductWorker({ log, projectionWindowMs: windowArg }) : null,
      needEcho ? startEchoWorker({ log }) : null,
      only.has("b7") ? startDelayedProductWorker({ log }) : null,
      // A peer that cannot start leaves B2's peer rows pending; the rest of the run goes on.
      only.has("b2")
        ? startPeerWorker({ log }).catch((error) => {
            log(`  peer worker did not start: ${error instanceof Error ? error.message : error}`);
            return null;
          })
        : null,
    ]);
    const agent = product ? await seedBenchAgent(product.baseUrl, product.operatorToken) : null;

    if (only.has("b1")) {
      await step(results, "b1", log, () =>
        benchLaunch({ product, agent, rounds: 3, perRound: quick ? 40 : 200, concurrency: 4, log }),
      );
    }
    if (only.has("b3")) {
      await step(results, "b3", log, () =>
        benchEntryStore({ echo, iterations: quick ? 20 : 100, walkEvery: quick ? 2 : 5, reps: 10 }),
      );
    }
    if (only.has("b11")) {
      await step(results, "b11", log, () =>
        benchAttachments({ product, echo, rounds: 3, perRound: quick ? 2 : 5, log }),
      );
    }
    if (only.has("b12")) {
      await step(results, "b12", log, () => benchEvals({ product, agent, cases: quick ? 20 : 100, log }));
    }
    if (only.has("b4")) {
      await step(results, "b4Cost", log, () => benchTurnCost({ echo, turns: quick ? 6 : 21 }));
    }
    if (only.has("b8")) {
      await step(results, "b8", log, () =>
        benchInsights({ echo, messages: quick ? 100_000 : 1_000_000, samples: quick ? 15 : 40, log }),
      );
    }
    if (only.has("b2")) {
      await step(results, "b2", log, async () => {
        const projection = await watchProjection(product.state);
        const turns = await benchTurns({
          product,
          echo,
          peer,
          agent,
          threads: quick ? 10 : 50,
          turns: quick ? 5 : 20,
          projection,
          log,
        });
        const { sessions, ...rest } = turns;
        const lag = await projection.finish(
          5_000,
          sessions.map((s) => s.threadId).filter((id) => typeof id === "string"),
        );
        if (lag.drains !== null && rest.product.turns > 0) {
          lag.drainsPerTurn = Math.round((lag.drains / rest.product.turns) * 100) / 100;
        }
        results.b4Lag =
          lag.projected === 0
            ? {
                pending: projection.available
                  ? `no turn reached D1 within 5 s of the load ending (${lag.missing} replies waiting): the thread object does not drain its outbox into D1 yet`
                  : "the local D1 file with agent_messages was not found",
                ...lag,
              }
            : lag;
        return rest;
      });
    }
    if (only.has("b6")) {
      await step(results, "b6ColdStart", log, () =>
        benchColdStart({ product, agent, samples: quick ? 5 : 15 }),
      );
    }
    if (only.has("b5")) {
      await step(results, "b5Browser", log, () => benchWidget({ product, agent, pages: quick ? 2 : 5 }));
    }
    if (only.has("b7")) {
      await step(results, "b7", log, async () =>
        benchConnectPath({
          server: delayed,
          agent: await seedBenchAgent(delayed.baseUrl, delayed.operatorToken),
          samples: quick ? 10 : 30,
          log,
        }),
      );
    }
    if (only.has("b10")) {
      await step(results, "b10", log, () =>
        benchControlPlane({ d1: product, log, samples: quick ? 40 : 200, threads: quick ? 10 : 30 }),
      );
    }
    // Last: it restarts the product Worker (its state kept), which no scenario after it should see.
    if (only.has("b9")) {
      await step(results, "b9", log, () =>
        benchApprovals({ product, samples: quick ? 10 : 30, runs: quick ? 20 : 100, log }),
      );
    }
  } finally {
    await stopAll();
  }

  meta.seconds = Math.round((performance.now() - started) / 100) / 10;
  meta.machine.loadAverageAtEnd = loadavg().map((x) => Math.round(x * 100) / 100);
  const rows = buildRows(results);
  const report = { ...meta, rows, results };
  mkdirSync(join(out, ".."), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  printTable(rows, meta);
  console.log(`\nwrote ${relative(process.cwd(), out)} in ${meta.seconds} s`);
  const failed = Object.entries(results).filter(([, r]) => r && typeof r === "object" && "failed" in r);
  if (failed.length > 0) {
    throw new CliError(
      `scenarios that could not run: ${failed.map(([k, r]) => `${k} (${r.failed})`).join("; ")}`,
    );
  }
  return 0;
}

await runMain(main);
