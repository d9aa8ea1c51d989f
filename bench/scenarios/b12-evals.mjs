// B12: a 100-case eval suite on the `local` model through the real routes (POST …/eval-suites, POST …/runs, GET
// …/runs/:runId polled) under `wrangler dev`: from the run's creation to its `completed` status, target ≤ 60 s on
// this machine (docs/evals.md#runs). Each case is one user message and three expectations; the agent replies in 12
// chunks 40 ms apart (about half a second per case, as a short real reply streams).
import { AdminClient } from "agent-threads/client";

export const B12_CASES = 100;
export const B12_TARGET_MS = 60_000;

async function seedEvalAgent(admin) {
  const agent = await admin.agents.create({
    slug: `evals-${Date.now().toString(36)}`,
    name: "Bench evals",
    visibility: "public",
    allowedOrigins: ["http://127.0.0.1"],
  });
  const draft = await admin.drafts.put(
    agent.id,
    {
      schemaVersion: 1,
      name: "Bench evals",
      instructions: "Echo the visitor.",
      model: { provider: "local", model: "echo", local: { chunks: 12, chunkDelayMs: 40 } },
    },
    0,
  );
  const version = await admin.versions.publish(agent.id, draft.revision);
  return { agentId: agent.id, version: version.version };
}

const cases = (n) =>
  Array.from({ length: n }, (_, i) => ({
    id: `case-${i}`,
    messages: [{ role: "user", text: `Where is order ${1000 + i}?` }],
    expect: [
      { type: "contains", text: `order ${1000 + i}` },
      { type: "not_contains", text: "refund" },
      { type: "regex", pattern: "^Echo: Where is order \\d+\\?$" },
    ],
  }));

export async function benchEvals({ product, agent, cases: n = B12_CASES, log = () => {} }) {
  const admin = new AdminClient({ baseUrl: product.baseUrl, apiKey: agent.apiKey });
  const { agentId, version } = await seedEvalAgent(admin);
  const suite = await admin.evals.create(agentId, { name: `Bench ${n} cases`, cases: cases(n) });
  const t0 = performance.now();
  const { runId } = await admin.evals.startRun(agentId, suite.id, { target: { version } });
  let run;
  let polls = 0;
  const deadline = t0 + 5 * B12_TARGET_MS;
  for (;;) {
    run = await admin.evals.run(agentId, suite.id, runId);
    polls += 1;
    if (run.status === "completed" || run.status === "failed") break;
    if (performance.now() > deadline) break;
    if (polls % 20 === 0) log(`  b12: ${run.status} after ${Math.round((performance.now() - t0) / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const wallMs = Math.round(performance.now() - t0);
  const durations = run.cases.map((c) => c.durationMs).sort((a, b) => a - b);
  return {
    cases: n,
    status: run.status,
    passed: run.passed,
    failedCases: run.failed,
    wallMs,
    runDurationMs: run.durationMs,
    caseMsP50: durations[Math.floor(durations.length / 2)] ?? null,
    tokens: run.tokens,
  };
}
