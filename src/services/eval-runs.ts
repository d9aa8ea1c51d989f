// Eval runs (docs/evals.md#runs): what a run is pinned to, the spec its object keeps, and closing a run.
import { z } from "zod";
import { artifactSchema } from "../control/artifact";
import { ENVIRONMENTS } from "../control/deployment-store";
import { eventBody, tenantEvents } from "../events/tenant-events";
import { evalCaseSchema, evalTargetSchema } from "../shared/evals-api";
import { completeRun, type EvalRun } from "../storage/d1/eval-runs";

/** What the run's object keeps: the pin (the artifact itself, so a later draft change alters nothing) and the cases. */
export const runSpecSchema = z.object({
  tenantId: z.string(),
  agentId: z.string(),
  environment: z.enum(ENVIRONMENTS),
  suiteId: z.string(),
  pin: z.object({
    versionId: z.string(),
    version: z.number().int(),
    digest: z.string(),
    artifact: artifactSchema,
    target: evalTargetSchema,
  }),
  cases: z.array(evalCaseSchema),
  repeats: z.number().int().min(1),
});
export type RunSpec = z.infer<typeof runSpecSchema>;

/** Closes the run from its stored results and announces it (`eval.completed`, once per run by its event id). */
export async function closeRun(
  env: Env,
  tenantId: string,
  runId: string,
  status: "completed" | "failed",
  now: number,
): Promise<EvalRun | null> {
  const run = await completeRun(env.DB, tenantId, runId, status, new Date(now).toISOString());
  if (run === null) return null;
  const body = eventBody({
    id: `evt_eval_${runId}`,
    type: "eval.completed",
    createdAt: now,
    tenantId,
    data: {
      runId,
      agentId: run.agentId,
      suiteId: run.suiteId,
      suiteRevision: run.suiteRevision,
      target: run.target,
      artifactDigest: run.digest,
      status: run.status,
      total: run.total,
      passed: run.passed,
      failed: run.failed,
      passRate: run.total === 0 ? 1 : run.passed / run.total,
      tokens: { input: run.inputTokens, output: run.outputTokens },
    },
  });
  const accepted = await tenantEvents(env, tenantId).accept(tenantId, [body]);
  if (!accepted.ok)
    console.warn(JSON.stringify({ level: "warn", message: "eval.completed not accepted", runId }));
  return run;
}
