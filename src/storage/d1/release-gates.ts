// The `agent_release_gates` and `release_gate_overrides` tables on D1 (docs/evals.md#the-release-gate).
import { z } from "zod";
import { type GateOverride, type ReleaseGate, releaseGateSchema } from "../../shared/evals-api";
import { jsonText } from "./deployment-rows";

const gateRow = z.object({
  suite_ids: jsonText(releaseGateSchema.shape.suiteIds),
  min_pass_rate: z.number(),
});

export async function getReleaseGate(
  db: D1Database,
  tenantId: string,
  agentId: string,
): Promise<ReleaseGate | null> {
  const row = await db
    .prepare("SELECT suite_ids, min_pass_rate FROM agent_release_gates WHERE tenant_id = ? AND agent_id = ?")
    .bind(tenantId, agentId)
    .first();
  if (row === null) return null;
  const r = gateRow.parse(row);
  return { suiteIds: r.suite_ids, minPassRate: r.min_pass_rate };
}

/** Sets the agent's gate, or clears it (null). */
export async function setReleaseGate(
  db: D1Database,
  tenantId: string,
  agentId: string,
  gate: ReleaseGate | null,
  now: string,
): Promise<void> {
  if (gate === null) {
    await db
      .prepare("DELETE FROM agent_release_gates WHERE tenant_id = ? AND agent_id = ?")
      .bind(tenantId, agentId)
      .run();
    return;
  }
  await db
    .prepare(
      `INSERT INTO agent_release_gates (tenant_id, agent_id, suite_ids, min_pass_rate, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5)
       ON CONFLICT (tenant_id, agent_id) DO UPDATE SET suite_ids = ?3, min_pass_rate = ?4, updated_at = ?5`,
    )
    .bind(tenantId, agentId, JSON.stringify(gate.suiteIds), gate.minPassRate, now)
    .run();
}

export async function recordGateOverride(
  db: D1Database,
  tenantId: string,
  releaseId: string,
  override: GateOverride,
): Promise<void> {
  await db
    .prepare(
      `INSERT INTO release_gate_overrides (tenant_id, release_id, action, api_key_id, reason, failing, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      tenantId,
      releaseId,
      override.action,
      override.by,
      override.reason,
      JSON.stringify(override.failing),
      override.at,
    )
    .run();
}

const overrideRow = z.object({
  release_id: z.string(),
  action: z.enum(["create", "activate"]),
  api_key_id: z.string(),
  reason: z.string(),
  failing: jsonText(z.json()),
  created_at: z.string(),
});

/** The overrides of the given releases, oldest first, by release id. */
export async function gateOverrides(
  db: D1Database,
  tenantId: string,
  releaseIds: readonly string[],
): Promise<Map<string, GateOverride[]>> {
  const out = new Map<string, GateOverride[]>();
  if (releaseIds.length === 0) return out;
  const rows = await db
    .prepare(
      `SELECT release_id, action, api_key_id, reason, failing, created_at FROM release_gate_overrides
       WHERE tenant_id = ? AND release_id IN (SELECT value FROM json_each(?)) ORDER BY created_at`,
    )
    .bind(tenantId, JSON.stringify(releaseIds))
    .all();
  for (const raw of rows.results) {
    const r = overrideRow.parse(raw);
    const list = out.get(r.release_id) ?? [];
    list.push({ action: r.action, by: r.api_key_id, at: r.created_at, reason: r.reason, failing: r.failing });
    out.set(r.release_id, list);
  }
  return out;
}
