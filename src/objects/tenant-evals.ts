// One Durable Object per tenant that runs its eval runs (docs/evals.md#runs): each run's jobs are stored here, an
// alarm works through them a few at a time (the tenant's eval concurrency), each result goes to D1 as it is judged,
// and a restart picks up the jobs still pending: a run survives the object's eviction.
import { DurableObject } from "cloudflare:workers";
import { fail, ok, type RpcResult, refusal } from "../errors";
import { runCase } from "../services/eval-case";
import { closeRun, type RunSpec, runSpecSchema } from "../services/eval-runs";
import type { CaseResult } from "../shared/evals-api";
import { markRunStarted, saveCaseResult } from "../storage/d1/eval-runs";
import {
  anyPending,
  countAttempt,
  createEvalWork,
  type EvalJob,
  enqueueRun,
  finishJob,
  forgetRun,
  pendingJobs,
  readSpec,
  remainingJobs,
} from "../storage/evals/eval-work";

/** Cases run at once per tenant. */
export const EVAL_CONCURRENCY = 4;
/** A job whose thread failed this many times is recorded as a failed case. */
const MAX_ATTEMPTS = 3;
/** An alarm hands over to the next one after this long, so no single invocation runs for minutes. */
const ALARM_BUDGET_MS = 25_000;
/** Set when an alarm starts: if the object dies mid-alarm, this one resumes the work. */
const SAFETY_ALARM_MS = 60_000;

export class TenantEvals extends DurableObject<Env> {
  readonly #specs = new Map<string, RunSpec>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    createEvalWork(ctx.storage.sql);
  }

  /** RPC: stores a run's jobs (a retried start changes nothing) and wakes the object to run them. */
  async start(tenantId: string, runId: string, spec: unknown): Promise<RpcResult<null>> {
    const parsed = runSpecSchema.safeParse(spec);
    if (!parsed.success || parsed.data.tenantId !== tenantId) {
      return refusal(fail("bad_request", "The eval run is invalid."));
    }
    enqueueRun(this.ctx.storage.sql, {
      runId,
      tenantId,
      spec: parsed.data,
      cases: parsed.data.cases.length,
      repeats: parsed.data.repeats,
      now: Date.now(),
    });
    if (parsed.data.cases.length === 0) {
      forgetRun(this.ctx.storage.sql, runId);
      await closeRun(this.env, tenantId, runId, "completed", Date.now());
      return ok(null);
    }
    const due = await this.ctx.storage.getAlarm();
    if (due === null || due > Date.now()) await this.ctx.storage.setAlarm(Date.now());
    return ok(null);
  }

  override async alarm(): Promise<void> {
    const sql = this.ctx.storage.sql;
    const started = Date.now();
    await this.ctx.storage.setAlarm(started + SAFETY_ALARM_MS);
    while (Date.now() - started < ALARM_BUDGET_MS) {
      const jobs = pendingJobs(sql, EVAL_CONCURRENCY, new Set());
      if (jobs.length === 0) break;
      await Promise.all(jobs.map((job) => this.#runJob(job)));
    }
    if (anyPending(sql)) await this.ctx.storage.setAlarm(Date.now());
    else await this.ctx.storage.deleteAlarm();
  }

  async #runJob(job: EvalJob): Promise<void> {
    const sql = this.ctx.storage.sql;
    const spec = this.#spec(job.runId);
    if (spec === null) {
      finishJob(sql, job);
      return;
    }
    const evalCase = spec.cases[job.caseIndex];
    if (evalCase === undefined) {
      finishJob(sql, job);
      return;
    }
    countAttempt(sql, job);
    let result: CaseResult | null = null;
    let problem = "";
    try {
      await markRunStarted(this.env.DB, spec.tenantId, job.runId, new Date().toISOString());
      const ran = await runCase(this.env, {
        tenantId: spec.tenantId,
        agentId: spec.agentId,
        environment: spec.environment,
        runId: job.runId,
        pin: spec.pin,
        evalCase,
        repeat: job.repeat,
      });
      if (ran.ok) result = ran.value;
      else if (ran.code === "bad_request") result = failedCase(evalCase.id, job.repeat, ran.message);
      else problem = ran.message;
    } catch (error) {
      problem = error instanceof Error ? error.message : String(error);
    }
    if (result === null) {
      // Tried again on a later round, up to MAX_ATTEMPTS in all; then the case fails with why.
      if (job.attempts + 1 < MAX_ATTEMPTS) return;
      result = failedCase(evalCase.id, job.repeat, `The case could not run: ${problem}`);
    }
    await saveCaseResult(this.env.DB, spec.tenantId, job.runId, result);
    finishJob(sql, job);
    if (remainingJobs(sql, job.runId) === 0) {
      await closeRun(this.env, spec.tenantId, job.runId, "completed", Date.now());
      forgetRun(sql, job.runId);
      this.#specs.delete(job.runId);
    }
  }

  #spec(runId: string): RunSpec | null {
    const cached = this.#specs.get(runId);
    if (cached !== undefined) return cached;
    const stored = readSpec(this.ctx.storage.sql, runId);
    if (stored === null) return null;
    const spec = runSpecSchema.parse(stored.spec);
    this.#specs.set(runId, spec);
    return spec;
  }
}

function failedCase(caseId: string, repeat: number, message: string): CaseResult {
  return {
    caseId,
    repeat,
    passed: false,
    failures: [{ index: -1, type: "run", message }],
    judge: [],
    transcript: { messages: [], toolCalls: [] },
    transcriptSha256: "",
    tokens: { input: 0, output: 0 },
    durationMs: 0,
  };
}
