// Eval suites and runs in tests (docs/evals.md): create a suite, start a run and wait until it completes.
import { z } from "zod";
import { runResponse, suiteResponse } from "../../src/shared/evals-api";
import { api, json } from "./tenants";
import { waitFor } from "./wait-for";

export interface EvalAgent {
  apiKey: string;
  agentId: string;
}

export async function createSuite(agent: EvalAgent, cases: unknown[], name = "Regression") {
  const res = await api(`/v1/agents/${agent.agentId}/eval-suites`, {
    method: "POST",
    key: agent.apiKey,
    body: { name, cases },
  });
  return json(res, 201, suiteResponse);
}

export async function startRun(agent: EvalAgent, suiteId: string, target: unknown, repeats?: number) {
  const res = await api(`/v1/agents/${agent.agentId}/eval-suites/${suiteId}/runs`, {
    method: "POST",
    key: agent.apiKey,
    body: { target, ...(repeats !== undefined ? { repeats } : {}) },
  });
  return (await json(res, 202, z.object({ runId: z.string(), status: z.literal("queued") }))).runId;
}

export async function readRun(agent: EvalAgent, suiteId: string, runId: string) {
  const res = await api(`/v1/agents/${agent.agentId}/eval-suites/${suiteId}/runs/${runId}`, {
    key: agent.apiKey,
  });
  return json(res, 200, runResponse);
}

/** Starts a run and waits for it to complete (its object works through it on its own alarm). */
export async function completedRun(agent: EvalAgent, suiteId: string, target: unknown, repeats?: number) {
  const runId = await startRun(agent, suiteId, target, repeats);
  return waitFor(
    () => readRun(agent, suiteId, runId),
    (run) => run.status === "completed",
    { what: `eval run ${runId} completed`, timeoutMs: 15_000, intervalMs: 50 },
  );
}
