// The `releases`, `release_allocations` and `active_releases` tables on D1: a release's versions and weights, and
// which release serves each environment. Multi-row writes and paired reads go in one batch (one transaction).
import { z } from "zod";
import type { Allocation, Environment, Page, PageRequest, Release } from "../../control/deployment-store";
import { newId } from "../../control/ids";
import { decodeCursor, encodeCursor, pageLimit, timeIdCursor } from "../../control/page-cursor";
import {
  agentNotFound,
  missingVersion,
  pageOf,
  parseInput,
  releaseInputSchema,
  unknownRuntime,
  unsupportedVersion,
} from "../../control/store-rules";
import { fail, ok, type Result } from "../../errors";
import { agentExists } from "./agents";
import { type AllocationRow, allocationRow, RELEASE_COLUMNS, toRelease } from "./deployment-rows";
import { supportedSchemaVersions } from "./runtime-revisions";

/** A release's allocations with the id of each allocated version; callers add the tenant-bound WHERE. */
export const ALLOCATION_SELECT = `SELECT ra.release_id, ra.version, ra.weight, v.id AS version_id
  FROM release_allocations ra
  JOIN agent_versions v ON v.tenant_id = ra.tenant_id AND v.agent_id = ra.agent_id AND v.version = ra.version`;

export function parseAllocations(rows: readonly unknown[]): AllocationRow[] {
  return rows.map((row) => allocationRow.parse(row));
}

export async function createRelease(
  db: D1Database,
  stamp: () => string,
  tenantId: string,
  agentId: string,
  input: { environment: Environment; allocations: Allocation[]; runtimeRevision: string },
): Promise<Result<Release>> {
  const parsed = parseInput(releaseInputSchema, input, "Release");
  if (!parsed.ok) return parsed;
  const { environment, allocations, runtimeRevision } = parsed.value;
  if (!(await agentExists(db, tenantId, agentId))) return agentNotFound();

  const supported = await supportedSchemaVersions(db, runtimeRevision);
  if (supported === null) return unknownRuntime(runtimeRevision);

  const numbers = allocations.map((a) => a.version);
  const { results } = await db
    .prepare(
      `SELECT id, version, schema_version FROM agent_versions
       WHERE tenant_id = ? AND agent_id = ? AND version IN (${numbers.map(() => "?").join(", ")})`,
    )
    .bind(tenantId, agentId, ...numbers)
    .all();
  const found = new Map(
    results
      .map((row) => z.object({ id: z.string(), version: z.number(), schema_version: z.number() }).parse(row))
      .map((v) => [v.version, v]),
  );
  const resolved: (Allocation & { versionId: string })[] = [];
  for (const [index, allocation] of allocations.entries()) {
    const version = found.get(allocation.version);
    if (version === undefined) return missingVersion(index, allocation.version);
    if (!supported.includes(version.schema_version)) {
      return unsupportedVersion(index, version.schema_version, runtimeRevision);
    }
    resolved.push({ version: allocation.version, weight: allocation.weight, versionId: version.id });
  }

  const release: Release = {
    tenantId,
    id: newId("rel"),
    agentId,
    environment,
    runtimeRevision,
    allocations: resolved,
    createdAt: stamp(),
    activatedAt: null,
    active: false,
  };
  await db.batch([
    db
      .prepare(
        `INSERT INTO releases (tenant_id, id, agent_id, environment, runtime_revision, created_at, activated_at)
         VALUES (?, ?, ?, ?, ?, ?, NULL)`,
      )
      .bind(tenantId, release.id, agentId, environment, runtimeRevision, release.createdAt),
    ...resolved.map((a, position) =>
      db
        .prepare(
          `INSERT INTO release_allocations (tenant_id, release_id, position, agent_id, version, weight)
           VALUES (?, ?, ?, ?, ?, ?)`,
        )
        .bind(tenantId, release.id, position, agentId, a.version, a.weight),
    ),
  ]);
  return ok(release);
}

export async function activateRelease(
  db: D1Database,
  stamp: () => string,
  tenantId: string,
  agentId: string,
  releaseId: string,
): Promise<Result<Release>> {
  const now = stamp();
  const [marked] = await db.batch([
    db
      .prepare("UPDATE releases SET activated_at = ?1 WHERE tenant_id = ?2 AND agent_id = ?3 AND id = ?4")
      .bind(now, tenantId, agentId, releaseId),
    // The WHERE clause also keeps SQLite from reading ON CONFLICT as a join constraint.
    db
      .prepare(
        `INSERT INTO active_releases (tenant_id, agent_id, environment, release_id, activated_at)
         SELECT tenant_id, agent_id, environment, id, ?1 FROM releases
         WHERE tenant_id = ?2 AND agent_id = ?3 AND id = ?4
         ON CONFLICT (tenant_id, agent_id, environment)
         DO UPDATE SET release_id = excluded.release_id, activated_at = excluded.activated_at`,
      )
      .bind(now, tenantId, agentId, releaseId),
  ]);
  if (marked === undefined || marked.meta.changes === 0) return fail("not_found", "Release not found.");
  const release = await getRelease(db, tenantId, agentId, releaseId);
  return release === null ? fail("not_found", "Release not found.") : ok(release);
}

export async function getRelease(
  db: D1Database,
  tenantId: string,
  agentId: string,
  releaseId: string,
): Promise<Release | null> {
  const [releases, allocations] = await db.batch([
    db
      .prepare(
        `SELECT ${RELEASE_COLUMNS} FROM releases r WHERE r.tenant_id = ? AND r.agent_id = ? AND r.id = ?`,
      )
      .bind(tenantId, agentId, releaseId),
    db
      .prepare(`${ALLOCATION_SELECT} WHERE ra.tenant_id = ? AND ra.release_id = ? ORDER BY ra.position`)
      .bind(tenantId, releaseId),
  ]);
  const row = releases?.results[0];
  return row === undefined ? null : toRelease(row, parseAllocations(allocations?.results ?? []));
}

export async function listReleases(
  db: D1Database,
  tenantId: string,
  agentId: string,
  page: PageRequest,
): Promise<Page<Release>> {
  const limit = pageLimit(page.limit);
  const [createdAt, id] = page.after === undefined ? ["", ""] : decodeCursor(page.after, timeIdCursor);
  const pageWhere = `tenant_id = ?1 AND agent_id = ?2 AND (created_at > ?3 OR (created_at = ?3 AND id > ?4))
    ORDER BY created_at, id LIMIT ?5`;
  const binds = [tenantId, agentId, createdAt, id, limit + 1];
  // One batch is one transaction, so the releases and their allocations are read from the same state.
  const [releases, allocations] = await db.batch([
    db.prepare(`SELECT ${RELEASE_COLUMNS} FROM releases r WHERE ${pageWhere}`).bind(...binds),
    db
      .prepare(
        `${ALLOCATION_SELECT} WHERE ra.tenant_id = ?1
         AND ra.release_id IN (SELECT id FROM releases WHERE ${pageWhere}) ORDER BY ra.position`,
      )
      .bind(...binds),
  ]);
  const allocationRows = parseAllocations(allocations?.results ?? []);
  const items = (releases?.results ?? []).map((row) => toRelease(row, allocationRows));
  return pageOf(items, limit, (r) => encodeCursor([r.createdAt, r.id]));
}

export async function getActiveRelease(
  db: D1Database,
  tenantId: string,
  agentId: string,
  environment: Environment,
): Promise<Release | null> {
  const row = await activeReleaseId(db, tenantId, agentId, environment);
  return row === null ? null : getRelease(db, tenantId, agentId, row);
}

export async function activeReleaseId(
  db: D1Database,
  tenantId: string,
  agentId: string,
  environment: string,
): Promise<string | null> {
  return db
    .prepare(
      "SELECT release_id FROM active_releases WHERE tenant_id = ? AND agent_id = ? AND environment = ?",
    )
    .bind(tenantId, agentId, environment)
    .first<string>("release_id");
}
