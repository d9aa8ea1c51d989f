// `npm run bench:profile`: a CPU profile of the product Worker under B2's kind of load (threads sending turns back
// to back on the local model), taken through `wrangler dev`'s inspector, summarised by function.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { parseArgs } from "node:util";
import { CliError, runMain } from "../scripts/lib/cli.mjs";
import { root } from "../scripts/lib/paths.mjs";
import { connect, launch, mapLimit, sendFrame } from "./lib/product-client.mjs";
import { BENCH_CHUNKS, seedBenchAgent } from "./lib/seed.mjs";
import { startProductWorker, stopAll } from "./lib/servers.mjs";

const HELP = `Usage: npm run bench:profile [-- --threads 20 --turns 10 --top 30 --out <file>]

Starts the product Worker unminified, drives <threads> sockets × <turns> turns while the DevTools protocol's
Profiler samples the Worker's isolate, writes the .cpuprofile (open it in Chrome DevTools) and prints the functions
with the most samples, by self time and including callees.`;

/** The inspector's one target: the Worker's isolate (Durable Objects of this script run in it too). */
async function openInspector(port) {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json`)).json();
  const target = targets[0];
  if (!target) throw new CliError("wrangler dev exposes no inspector target.");
  // The inspector proxy accepts local origins only.
  const ws = new WebSocket(target.webSocketDebuggerUrl, { headers: { Origin: "http://localhost" } });
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new CliError("could not open the inspector")), { once: true });
  });
  let nextId = 0;
  const waiting = new Map();
  ws.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data));
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  const call = (method, params = {}) =>
    new Promise((resolve) => {
      nextId += 1;
      waiting.set(nextId, resolve);
      ws.send(JSON.stringify({ id: nextId, method, params }));
    });
  return { call, close: () => ws.close() };
}

function label(node) {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || "(anonymous)"} ${url.split("/").pop() ?? ""}:${lineNumber + 1}`;
}

/** Share of samples per function, by self time and including callees (a function counted once per stack). */
function summarize(profile, top) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const hits = new Map();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  const self = new Map();
  const inclusive = new Map();
  for (const [id, count] of hits) {
    const name = label(byId.get(id));
    self.set(name, (self.get(name) ?? 0) + count);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const frame = label(byId.get(at));
      if (seen.has(frame)) continue;
      seen.add(frame);
      inclusive.set(frame, (inclusive.get(frame) ?? 0) + count);
    }
  }
  const total = profile.samples.length;
  const rank = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, count]) => `${((100 * count) / total).toFixed(1).padStart(5)}%  ${name}`);
  return { samples: total, self: rank(self), inclusive: rank(inclusive) };
}

async function main() {
  const { values } = parseArgs({
    options: {
      threads: { type: "string", default: "20" },
      turns: { type: "string", default: "10" },
      top: { type: "string", default: "30" },
      out: { type: "string", default: join(root, "bench", "results", "profile.cpuprofile") },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const [threads, turns, top] = [values.threads, values.turns, values.top].map((v) => Number.parseInt(v, 10));
  if (![threads, turns, top].every((n) => Number.isInteger(n) && n > 0)) {
    throw new CliError("--threads, --turns and --top take positive whole numbers.");
  }
  const log = (line) => console.error(line);
  try {
    const product = await startProductWorker({ log, minify: false });
    const agent = await seedBenchAgent(product.baseUrl, product.operatorToken);
    const sessions = await mapLimit(Array.from({ length: threads }), 5, () => launch(product.baseUrl, agent));
    const sockets = (await mapLimit(sessions, 5, (s) => connect(s, agent))).map((c) => c.socket);
    // One turn each first: the profile covers steady turns, not first binds.
    await Promise.all(sockets.map((s) => s.turn(sendFrame("warm up"), BENCH_CHUNKS)));

    const inspector = await openInspector(product.inspectorPort);
    await inspector.call("Profiler.enable");
    await inspector.call("Profiler.setSamplingInterval", { interval: 250 });
    await inspector.call("Profiler.start");
    const started = performance.now();
    await Promise.all(
      sockets.map(async (socket, t) => {
        for (let i = 0; i < turns; i += 1)
          await socket.turn(sendFrame(`Thread ${t}, turn ${i}`), BENCH_CHUNKS);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const { result } = await inspector.call("Profiler.stop");
    inspector.close();
    for (const s of sockets) s.close();

    mkdirSync(dirname(values.out), { recursive: true });
    writeFileSync(values.out, JSON.stringify(result.profile));
    const summary = summarize(result.profile, top);
    console.log(
      `${threads * turns} turns in ${seconds.toFixed(1)} s (${((threads * turns) / seconds).toFixed(1)} turns/s, profiler on); ${summary.samples} samples`,
    );
    console.log(`\nself\n${summary.self.join("\n")}\n\nincluding callees\n${summary.inclusive.join("\n")}`);
    console.log(`\nwrote ${relative(process.cwd(), values.out)}`);
  } finally {
    await stopAll();
  }
  return 0;
}

await runMain(main);
