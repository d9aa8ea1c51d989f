// The release gate (docs/evals.md#the-release-gate): a release that raises a version's weight above its active weight
// needs, for that version's digest, a completed run of each gate suite's current revision meeting the gate's pass
// rate; otherwise 409 `eval_gate` naming what fails, unless forced with a reason, which is recorded.
import type { AgentEntity, DeploymentStore, Environment } from "../control/deployment-store";
import { AppError, errors, fromDatabase } from "../errors";
import type { GateOverride, ReleaseGate } from "../shared/evals-api";
import { bestCompletedRun, caseResults } from "../storage/d1/eval-runs";
import { getSuite } from "../storage/d1/eval-suites";
import { getReleaseGate, setReleaseGate } from "../storage/d1/release-gates";

export interface GateFailure {
  version: number;
  digest: string;
  suiteId: string;
  suiteRevision: number | null;
  reason: "suite_missing" | "no_completed_run" | "below_pass_rate";
  passRate?: number;
  minPassRate: number;
  runId?: string;
  failingCases?: string[];
}

/** The gate's failures for moving (agent, environment) to `allocations`; empty when it passes or there is no gate. */
export async function gateFailures(
  env: Env,
  store: DeploymentStore,
  agent: AgentEntity,
  environment: Environment,
  allocations: readonly { version: number; weight: number }[],
): Promise<GateFailure[]> {
  const gate = await getReleaseGate(env.DB, agent.tenantId, agent.id);
  if (gate === null) return [];
  const active = await store.getActiveRelease(agent.tenantId, agent.id, environment);
  const activeWeight = new Map((active?.allocations ?? []).map((a) => [a.version, a.weight]));
  const raised = allocations.filter((a) => a.weight > (activeWeight.get(a.version) ?? 0));
  const failures: GateFailure[] = [];
  for (const allocation of raised) {
    const found = await store.getVersion(agent.tenantId, agent.id, allocation.version);
    // A version that does not exist fails the release itself later, with its own 404.
    if (!found.ok) continue;
    const digest = found.value.digest;
    for (const suiteId of gate.suiteIds) {
      const base = { version: allocation.version, digest, suiteId, minPassRate: gate.minPassRate };
      const suite = await getSuite(env.DB, agent.tenantId, agent.id, suiteId);
      if (suite === null) {
        failures.push({ ...base, suiteRevision: null, reason: "suite_missing" });
        continue;
      }
      const run = await bestCompletedRun(env.DB, agent.tenantId, agent.id, suite, digest);
      if (run === null) {
        failures.push({ ...base, suiteRevision: suite.revision, reason: "no_completed_run" });
        continue;
      }
      const passRate = run.total === 0 ? 1 : run.passed / run.total;
      if (passRate + 1e-9 < gate.minPassRate) {
        const failing = (await caseResults(env.DB, agent.tenantId, run.id)).filter((r) => !r.passed);
        failures.push({
          ...base,
          suiteRevision: suite.revision,
          reason: "below_pass_rate",
          passRate,
          runId: run.id,
          failingCases: [...new Set(failing.map((r) => r.caseId))],
        });
      }
    }
  }
  return failures;
}

/**
 * Throws 409 `eval_gate` when the gate fails and the caller did not force it; answers the override to record (who,
 * when, why, what failed) when it forced a failing gate, or null when the gate passed.
 */
export async function enforceGate(
  env: Env,
  store: DeploymentStore,
  agent: AgentEntity,
  move: {
    action: GateOverride["action"];
    environment: Environment;
    allocations: readonly { version: number; weight: number }[];
    force?: true;
    reason?: string;
    apiKeyId: string;
  },
): Promise<GateOverride | null> {
  const failures = await gateFailures(env, store, agent, move.environment, move.allocations);
  if (failures.length === 0) return null;
  if (move.force !== true || move.reason === undefined) {
    throw new AppError(
      "conflict",
      "The release gate's eval suites have not passed on every version this release raises; run them, or force with a reason.",
      { reason: "eval_gate", details: { failing: failures } },
    );
  }
  return {
    action: move.action,
    by: move.apiKeyId,
    at: new Date().toISOString(),
    reason: move.reason,
    failing: failures as unknown as GateOverride["failing"],
  };
}

/** Sets (or clears, null) the agent's gate; every suite it names must be one of the agent's. */
export async function changeReleaseGate(
  env: Env,
  agent: AgentEntity,
  gate: ReleaseGate | null,
): Promise<void> {
  if (gate !== null) {
    const missing: { path: string; message: string }[] = [];
    for (const [i, suiteId] of gate.suiteIds.entries()) {
      const suite = await fromDatabase(getSuite(env.DB, agent.tenantId, agent.id, suiteId));
      if (suite === null)
        missing.push({ path: `releaseGate.suiteIds.${i}`, message: "is not a suite of this agent" });
    }
    if (missing.length > 0) throw errors.badRequest("The release gate names unknown suites.", missing);
  }
  await fromDatabase(setReleaseGate(env.DB, agent.tenantId, agent.id, gate, new Date().toISOString()));
}
