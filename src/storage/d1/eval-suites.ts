// The `eval_suites` table on D1 (docs/evals.md): an agent's suites, each saved only at the revision its editor saw.
import { z } from "zod";
import { fail, ok, type Result } from "../../errors";
import { type EvalCase, evalCaseSchema } from "../../shared/evals-api";
import { jsonText } from "./deployment-rows";

export interface EvalSuite {
  tenantId: string;
  id: string;
  agentId: string;
  name: string;
  revision: number;
  cases: EvalCase[];
  createdAt: string;
  updatedAt: string;
}

const suiteRow = z.object({
  tenant_id: z.string(),
  id: z.string(),
  agent_id: z.string(),
  name: z.string(),
  revision: z.number().int(),
  cases: jsonText(z.array(evalCaseSchema)),
  created_at: z.string(),
  updated_at: z.string(),
});

const COLUMNS = "tenant_id, id, agent_id, name, revision, cases, created_at, updated_at";

function toSuite(raw: unknown): EvalSuite {
  const r = suiteRow.parse(raw);
  return {
    tenantId: r.tenant_id,
    id: r.id,
    agentId: r.agent_id,
    name: r.name,
    revision: r.revision,
    cases: r.cases,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export const staleSuite = (): Result<never> =>
  fail("precondition_failed", "Suite revision does not match the current suite.");

export async function insertSuite(
  db: D1Database,
  suite: { tenantId: string; id: string; agentId: string; name: string; cases: EvalCase[]; now: string },
): Promise<EvalSuite> {
  await db
    .prepare(`INSERT INTO eval_suites (${COLUMNS}) VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, ?6)`)
    .bind(suite.tenantId, suite.id, suite.agentId, suite.name, JSON.stringify(suite.cases), suite.now)
    .run();
  return {
    tenantId: suite.tenantId,
    id: suite.id,
    agentId: suite.agentId,
    name: suite.name,
    revision: 1,
    cases: suite.cases,
    createdAt: suite.now,
    updatedAt: suite.now,
  };
}

export async function getSuite(
  db: D1Database,
  tenantId: string,
  agentId: string,
  suiteId: string,
): Promise<EvalSuite | null> {
  const row = await db
    .prepare(`SELECT ${COLUMNS} FROM eval_suites WHERE tenant_id = ? AND agent_id = ? AND id = ?`)
    .bind(tenantId, agentId, suiteId)
    .first();
  return row === null ? null : toSuite(row);
}

/** The agent's suites by id, a page after `after`. */
export async function listSuites(
  db: D1Database,
  tenantId: string,
  agentId: string,
  page: { after?: string; limit: number },
): Promise<EvalSuite[]> {
  const rows = await db
    .prepare(
      `SELECT ${COLUMNS} FROM eval_suites WHERE tenant_id = ? AND agent_id = ? AND id > ? ORDER BY id LIMIT ?`,
    )
    .bind(tenantId, agentId, page.after ?? "", page.limit)
    .all();
  return rows.results.map(toSuite);
}

/** Saves a new name and cases at `expectedRevision` only (compare-and-swap): the new revision, or a 412. */
export async function updateSuite(
  db: D1Database,
  suite: { tenantId: string; agentId: string; id: string; name: string; cases: EvalCase[]; now: string },
  expectedRevision: number,
): Promise<Result<EvalSuite>> {
  const row = await db
    .prepare(
      `UPDATE eval_suites SET name = ?4, cases = ?5, revision = revision + 1, updated_at = ?6
       WHERE tenant_id = ?1 AND agent_id = ?2 AND id = ?3 AND revision = ?7
       RETURNING ${COLUMNS}`,
    )
    .bind(
      suite.tenantId,
      suite.agentId,
      suite.id,
      suite.name,
      JSON.stringify(suite.cases),
      suite.now,
      expectedRevision,
    )
    .first();
  return row === null ? staleSuite() : ok(toSuite(row));
}

export async function deleteSuite(
  db: D1Database,
  tenantId: string,
  agentId: string,
  suiteId: string,
  expectedRevision: number | null,
): Promise<boolean> {
  const result = await db
    .prepare(
      `DELETE FROM eval_suites WHERE tenant_id = ? AND agent_id = ? AND id = ? AND (?4 IS NULL OR revision = ?4)`,
    )
    .bind(tenantId, agentId, suiteId, expectedRevision)
    .run();
  return result.meta.changes === 1;
}
