// The `thread_pins` table on D1: the version a thread was assigned on its first turn, written once and never moved.
import { selectAllocation } from "../../control/allocation";
import type { Environment, ThreadPin } from "../../control/deployment-store";
import { assignmentSchema, matchPin, noActiveRelease, parseInput } from "../../control/store-rules";
import type { Result } from "../../errors";
import { PIN_COLUMNS, toPin } from "./deployment-rows";
import { ALLOCATION_SELECT, activeReleaseId, parseAllocations } from "./releases";
import { getVersionById } from "./versions";

export async function assignThread(
  db: D1Database,
  stamp: () => string,
  tenantId: string,
  input: { agentId: string; environment: Environment; threadId: string },
): Promise<Result<ThreadPin>> {
  const parsed = parseInput(assignmentSchema, input, "Thread assignment");
  if (!parsed.ok) return parsed;
  const { agentId, environment, threadId } = parsed.value;
  const existing = await getPin(db, tenantId, threadId);
  if (existing !== null) return matchPin(existing, parsed.value);

  const releaseId = await activeReleaseId(db, tenantId, agentId, environment);
  if (releaseId === null) return noActiveRelease();
  const { results } = await db
    .prepare(`${ALLOCATION_SELECT} WHERE ra.tenant_id = ? AND ra.release_id = ? ORDER BY ra.position`)
    .bind(tenantId, releaseId)
    .all();
  const chosen = await selectAllocation(
    { tenantId, environment, agentId, releaseId, threadId },
    parseAllocations(results),
  );
  // The pinned version is verified before it is pinned: a tampered artifact must never be bound.
  const version = await getVersionById(db, tenantId, chosen.version_id);
  if (!version.ok) return version;

  // Concurrent first turns all try to insert; the first wins and every caller reads that one pin.
  const [, pinned] = await db.batch([
    db
      .prepare(
        `INSERT INTO thread_pins (${PIN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (tenant_id, thread_id) DO NOTHING`,
      )
      .bind(
        tenantId,
        threadId,
        agentId,
        environment,
        releaseId,
        version.value.id,
        version.value.version,
        version.value.digest,
        stamp(),
      ),
    db
      .prepare(`SELECT ${PIN_COLUMNS} FROM thread_pins WHERE tenant_id = ? AND thread_id = ?`)
      .bind(tenantId, threadId),
  ]);
  const row = pinned?.results[0];
  if (row === undefined) throw new Error("Thread pin vanished after being written.");
  return matchPin(toPin(row), parsed.value);
}

export async function getPin(db: D1Database, tenantId: string, threadId: string): Promise<ThreadPin | null> {
  const row = await db
    .prepare(`SELECT ${PIN_COLUMNS} FROM thread_pins WHERE tenant_id = ? AND thread_id = ?`)
    .bind(tenantId, threadId)
    .first();
  return row === null ? null : toPin(row);
}
