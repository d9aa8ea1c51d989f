// The TenantEvals object's tables (docs/evals.md#runs): each run's spec and its jobs, one per (case, repeat), so a
// run goes on where it stopped after the object restarts.
import { z } from "zod";
import { parseJsonColumn } from "../json-column";

export function createEvalWork(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS eval_specs (
    run_id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    created_at INTEGER NOT NULL
  )`);
  sql.exec(`CREATE TABLE IF NOT EXISTS eval_jobs (
    run_id TEXT NOT NULL,
    case_index INTEGER NOT NULL,
    repeat INTEGER NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('pending', 'done')),
    attempts INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, case_index, repeat)
  )`);
}

export interface EvalJob {
  runId: string;
  caseIndex: number;
  repeat: number;
  attempts: number;
}

const jobRow = z.object({
  run_id: z.string(),
  case_index: z.number().int(),
  repeat: z.number().int(),
  attempts: z.number().int(),
});

/** Stores a run and its jobs; a run already stored changes nothing (a retried start). */
export function enqueueRun(
  sql: SqlStorage,
  run: { runId: string; tenantId: string; spec: unknown; cases: number; repeats: number; now: number },
): boolean {
  const known = sql.exec("SELECT 1 FROM eval_specs WHERE run_id = ?", run.runId).toArray().length > 0;
  if (known) return false;
  sql.exec(
    "INSERT INTO eval_specs (run_id, tenant_id, spec_json, created_at) VALUES (?, ?, ?, ?)",
    run.runId,
    run.tenantId,
    JSON.stringify(run.spec),
    run.now,
  );
  for (let index = 0; index < run.cases; index++) {
    for (let repeat = 0; repeat < run.repeats; repeat++) {
      sql.exec(
        "INSERT INTO eval_jobs (run_id, case_index, repeat, state) VALUES (?, ?, ?, 'pending')",
        run.runId,
        index,
        repeat,
      );
    }
  }
  return true;
}

/** Up to `limit` pending jobs, oldest run first, skipping the ones `busy` names. */
export function pendingJobs(sql: SqlStorage, limit: number, busy: ReadonlySet<string>): EvalJob[] {
  const rows = sql
    .exec(
      `SELECT j.run_id, j.case_index, j.repeat, j.attempts FROM eval_jobs j JOIN eval_specs s ON s.run_id = j.run_id
       WHERE j.state = 'pending' ORDER BY s.created_at, j.run_id, j.case_index, j.repeat LIMIT ?`,
      limit + busy.size,
    )
    .toArray();
  return rows
    .map((row) => {
      const r = jobRow.parse(row);
      return { runId: r.run_id, caseIndex: r.case_index, repeat: r.repeat, attempts: r.attempts };
    })
    .filter((job) => !busy.has(jobKey(job)))
    .slice(0, limit);
}

export const jobKey = (job: Pick<EvalJob, "runId" | "caseIndex" | "repeat">) =>
  `${job.runId}:${job.caseIndex}:${job.repeat}`;

export function countAttempt(sql: SqlStorage, job: EvalJob): void {
  sql.exec(
    "UPDATE eval_jobs SET attempts = attempts + 1 WHERE run_id = ? AND case_index = ? AND repeat = ?",
    job.runId,
    job.caseIndex,
    job.repeat,
  );
}

export function finishJob(sql: SqlStorage, job: EvalJob): void {
  sql.exec(
    "UPDATE eval_jobs SET state = 'done' WHERE run_id = ? AND case_index = ? AND repeat = ?",
    job.runId,
    job.caseIndex,
    job.repeat,
  );
}

export function remainingJobs(sql: SqlStorage, runId: string): number {
  const row = sql
    .exec("SELECT COUNT(*) AS n FROM eval_jobs WHERE run_id = ? AND state = 'pending'", runId)
    .one();
  return z.object({ n: z.number().int() }).parse(row).n;
}

export function readSpec(sql: SqlStorage, runId: string): { tenantId: string; spec: unknown } | null {
  const row = sql.exec("SELECT tenant_id, spec_json FROM eval_specs WHERE run_id = ?", runId).toArray()[0];
  if (row === undefined) return null;
  const r = z.object({ tenant_id: z.string(), spec_json: z.string() }).parse(row);
  return { tenantId: r.tenant_id, spec: parseJsonColumn(r.spec_json) };
}

/** A finished run's rows go (its results live in D1). */
export function forgetRun(sql: SqlStorage, runId: string): void {
  sql.exec("DELETE FROM eval_jobs WHERE run_id = ?", runId);
  sql.exec("DELETE FROM eval_specs WHERE run_id = ?", runId);
}

export function anyPending(sql: SqlStorage): boolean {
  return sql.exec("SELECT 1 FROM eval_jobs WHERE state = 'pending' LIMIT 1").toArray().length > 0;
}
