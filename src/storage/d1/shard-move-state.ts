// A tenant's move between D1 shards as rows of the shard map (`tenant_shards`): start, lease, progress, each step.
//
// One runner at a time works on a move (a lease with a random token and an expiry); every progress and step write
// names that token, so a runner whose lease ran out changes nothing.
import { z } from "zod";
import { readTenantShard, type ShardName, type TenantShard } from "./shards";

export const MOVE_SQL = {
  start: `UPDATE tenant_shards SET state = 'moving', moving_to = ?, cursor = NULL, step_at = ?
    WHERE tenant_id = ? AND state = 'active' AND shard = ?`,
  /** The move job walks the unfinished moves (few, through a partial index), not tenant data. */
  unfinished:
    "SELECT tenant_id FROM tenant_shards WHERE state <> 'active' ORDER BY step_at, tenant_id LIMIT ?",
  claim: `UPDATE tenant_shards SET lease = ?, lease_until = ?
    WHERE tenant_id = ? AND state <> 'active' AND (lease_until IS NULL OR lease_until < ?)`,
  release: "UPDATE tenant_shards SET lease = NULL, lease_until = NULL WHERE tenant_id = ? AND lease = ?",
  progress: "UPDATE tenant_shards SET cursor = ? WHERE tenant_id = ? AND lease = ?",
  freeze: `UPDATE tenant_shards SET state = 'frozen', cursor = NULL, step_at = ?
    WHERE tenant_id = ? AND lease = ? AND state = 'moving'`,
  /** The switch: reads and writes go to the new shard from here on (once caches are older than the step). */
  switchOver: `UPDATE tenant_shards SET state = 'draining', shard = moving_to, moving_from = shard, moving_to = NULL,
      cursor = NULL, step_at = ?
    WHERE tenant_id = ? AND lease = ? AND state = 'frozen'`,
  finish: `UPDATE tenant_shards SET state = 'active', moving_from = NULL, cursor = NULL, step_at = ?, moved_at = ?
    WHERE tenant_id = ? AND lease = ? AND state = 'draining'`,
} as const;

export type StartMove =
  | { ok: true; placement: TenantShard; started: boolean }
  | { ok: false; reason: "unknown_tenant" | "other_move"; placement?: TenantShard };

/**
 * Starts moving a tenant's projection to `target`: nothing to do when it is there already, the same answer when a
 * move there is under way, a refusal while a move elsewhere is.
 */
export async function startMove(
  control: D1Database,
  placement: TenantShard,
  target: ShardName,
  at: string,
): Promise<StartMove> {
  if (placement.state === "active" && placement.shard === target)
    return { ok: true, placement, started: false };
  if (placement.state !== "active") {
    const same =
      (placement.state === "draining" && placement.shard === target) ||
      ((placement.state === "moving" || placement.state === "frozen") && placement.movingTo === target);
    return same ? { ok: true, placement, started: false } : { ok: false, reason: "other_move", placement };
  }
  const result = await control
    .prepare(MOVE_SQL.start)
    .bind(target, at, placement.tenantId, placement.shard)
    .run();
  const after = await readTenantShard(control, placement.tenantId);
  if (after === null) return { ok: false, reason: "unknown_tenant" };
  if ((result.meta.changes ?? 0) === 0) return startMove(control, after, target, at);
  return { ok: true, placement: after, started: true };
}

export async function unfinishedMoves(control: D1Database, limit: number): Promise<string[]> {
  const { results } = await control.prepare(MOVE_SQL.unfinished).bind(limit).all();
  return results.map((r) => z.object({ tenant_id: z.string() }).parse(r).tenant_id);
}

/** A lease on the tenant's move until `until`, or null when another runner holds one. */
export async function claimMove(
  control: D1Database,
  tenantId: string,
  now: string,
  until: string,
): Promise<string | null> {
  const token = crypto.randomUUID();
  const result = await control.prepare(MOVE_SQL.claim).bind(token, until, tenantId, now).run();
  return (result.meta.changes ?? 0) === 1 ? token : null;
}

export async function releaseMove(control: D1Database, tenantId: string, lease: string): Promise<void> {
  await control.prepare(MOVE_SQL.release).bind(tenantId, lease).run();
}

/** Records progress within the step; false when the lease was lost. */
export async function saveProgress(
  control: D1Database,
  tenantId: string,
  lease: string,
  cursor: unknown,
): Promise<boolean> {
  const result = await control
    .prepare(MOVE_SQL.progress)
    .bind(cursor === null ? null : JSON.stringify(cursor), tenantId, lease)
    .run();
  return (result.meta.changes ?? 0) === 1;
}

/** The next step of the move; false when the lease was lost or the row was not in the expected state. */
export async function takeStep(
  control: D1Database,
  step: "freeze" | "switchOver" | "finish",
  tenantId: string,
  lease: string,
  at: string,
): Promise<boolean> {
  const statement = control.prepare(MOVE_SQL[step]);
  const bound =
    step === "finish" ? statement.bind(at, at, tenantId, lease) : statement.bind(at, tenantId, lease);
  const result = await bound.run();
  return (result.meta.changes ?? 0) === 1;
}
