// The `eval_runs` and `eval_case_results` tables on D1 (docs/evals.md#runs): a run's summary and each case's result.
import { z } from "zod";
import {
  type CaseResult,
  caseResultSchema,
  EVAL_RUN_STATUSES,
  type EvalRunStatus,
  type EvalTarget,
  evalTargetSchema,
} from "../../shared/evals-api";
import { jsonText } from "./deployment-rows";

export interface EvalRun {
  tenantId: string;
  id: string;
  agentId: string;
  suiteId: string;
  suiteRevision: number;
  target: EvalTarget;
  digest: string;
  repeats: number;
  status: EvalRunStatus;
  total: number;
  passed: number;
  failed: number;
  inputTokens: number;
  outputTokens: number;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
}

const runRow = z.object({
  tenant_id: z.string(),
  id: z.string(),
  agent_id: z.string(),
  suite_id: z.string(),
  suite_revision: z.number().int(),
  target: jsonText(evalTargetSchema),
  digest: z.string(),
  repeats: z.number().int(),
  status: z.enum(EVAL_RUN_STATUSES),
  total: z.number().int(),
  passed: z.number().int(),
  failed: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  completed_at: z.string().nullable(),
});

const COLUMNS =
  "tenant_id, id, agent_id, suite_id, suite_revision, target, digest, repeats, status, total, passed, failed, input_tokens, output_tokens, created_at, started_at, completed_at";

function toRun(raw: unknown): EvalRun {
  const r = runRow.parse(raw);
  return {
    tenantId: r.tenant_id,
    id: r.id,
    agentId: r.agent_id,
    suiteId: r.suite_id,
    suiteRevision: r.suite_revision,
    target: r.target,
    digest: r.digest,
    repeats: r.repeats,
    status: r.status,
    total: r.total,
    passed: r.passed,
    failed: r.failed,
    inputTokens: r.input_tokens,
    outputTokens: r.output_tokens,
    createdAt: r.created_at,
    startedAt: r.started_at,
    completedAt: r.completed_at,
  };
}

export async function insertRun(
  db: D1Database,
  run: Pick<
    EvalRun,
    "tenantId" | "id" | "agentId" | "suiteId" | "suiteRevision" | "target" | "digest" | "repeats" | "total"
  > & { now: string },
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO eval_runs (tenant_id, id, agent_id, suite_id, suite_revision, target, digest, repeats, status,
         total, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?, ?)`,
    )
    .bind(
      run.tenantId,
      run.id,
      run.agentId,
      run.suiteId,
      run.suiteRevision,
      JSON.stringify(run.target),
      run.digest,
      run.repeats,
      run.total,
      run.now,
    )
    .run();
}

export async function getRun(
  db: D1Database,
  tenantId: string,
  agentId: string,
  runId: string,
): Promise<EvalRun | null> {
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM eval_runs WHERE tenant_id = ? AND agent_id = ? AND id = ?`)
    .bind(tenantId, agentId, runId)
    .first();
  return row === null ? null : toRun(row);
}

/** A suite's runs, newest first. */
export async function listRuns(
  db: D1Database,
  tenantId: string,
  agentId: string,
  suiteId: string,
  limit: number,
): Promise<EvalRun[]> {
  const rows = await db
    .prepare(
      `SELECT ${COLUMNS} FROM eval_runs WHERE tenant_id = ? AND agent_id = ? AND suite_id = ?
       ORDER BY created_at DESC, id DESC LIMIT ?`,
    )
    .bind(tenantId, agentId, suiteId, limit)
    .all();
  return rows.results.map(toRun);
}

/** The best completed run of a suite revision on a digest (the release gate's one lookup), or null. */
export async function bestCompletedRun(
  db: D1Database,
  tenantId: string,
  agentId: string,
  suite: { id: string; revision: number },
  digest: string,
): Promise<EvalRun | null> {
  const row = await db
    .prepare(
      `SELECT ${COLUMNS} FROM eval_runs
       WHERE tenant_id = ? AND agent_id = ? AND suite_id = ? AND digest = ? AND suite_revision = ?
         AND status = 'completed'
       ORDER BY CAST(passed AS REAL) / MAX(total, 1) DESC, completed_at DESC LIMIT 1`,
    )
    .bind(tenantId, agentId, suite.id, digest, suite.revision)
    .first();
  return row === null ? null : toRun(row);
}

export async function markRunStarted(db: D1Database, tenantId: string, runId: string, now: string) {
  await db
    .prepare(
      `UPDATE eval_runs SET status = 'running', started_at = COALESCE(started_at, ?3)
       WHERE tenant_id = ?1 AND id = ?2 AND status = 'queued'`,
    )
    .bind(tenantId, runId, now)
    .run();
}

/** A case result, written once per (case, repeat): a retried write after a restart changes nothing. */
export async function saveCaseResult(db: D1Database, tenantId: string, runId: string, result: CaseResult) {
  await db
    .prepare(
      `INSERT INTO eval_case_results (tenant_id, run_id, case_id, repeat, passed, result)
       VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
    )
    .bind(tenantId, runId, result.caseId, result.repeat, result.passed ? 1 : 0, JSON.stringify(result))
    .run();
}

export async function caseResults(db: D1Database, tenantId: string, runId: string): Promise<CaseResult[]> {
  const rows = await db
    .prepare(`SELECT result FROM eval_case_results WHERE tenant_id = ? AND run_id = ? ORDER BY rowid`)
    .bind(tenantId, runId)
    .all();
  return rows.results.map((row) => z.object({ result: jsonText(caseResultSchema) }).parse(row).result);
}

/** Closes a run from its stored case results: counts and tokens summed in SQL, so a retry settles the same. */
export async function completeRun(
  db: D1Database,
  tenantId: string,
  runId: string,
  status: "completed" | "failed",
  now: string,
): Promise<EvalRun | null> {
  const row = await db
    .prepare(
      `UPDATE eval_runs SET status = ?3, completed_at = COALESCE(completed_at, ?4),
         passed = (SELECT COUNT(*) FROM eval_case_results r WHERE r.tenant_id = ?1 AND r.run_id = ?2 AND r.passed = 1),
         failed = (SELECT COUNT(*) FROM eval_case_results r WHERE r.tenant_id = ?1 AND r.run_id = ?2 AND r.passed = 0),
         input_tokens = (SELECT COALESCE(SUM(json_extract(r.result, '$.tokens.input')), 0)
                         FROM eval_case_results r WHERE r.tenant_id = ?1 AND r.run_id = ?2),
         output_tokens = (SELECT COALESCE(SUM(json_extract(r.result, '$.tokens.output')), 0)
                          FROM eval_case_results r WHERE r.tenant_id = ?1 AND r.run_id = ?2)
       WHERE tenant_id = ?1 AND id = ?2 AND status IN ('queued', 'running')
       RETURNING ${COLUMNS}`,
    )
    .bind(tenantId, runId, status, now)
    .first();
  return row === null ? null : toRun(row);
}
