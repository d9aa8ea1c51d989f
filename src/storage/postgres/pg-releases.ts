// Runtime revisions, releases and thread pins on PostgreSQL: a release and its weights written in one transaction,
// activation replacing the environment's active row, and a thread's pin created or read in one transaction.
import { z } from "zod";
import { selectAllocation } from "../../control/allocation";
import type {
  Allocation,
  Environment,
  Page,
  PageRequest,
  Release,
  RuntimeRevision,
  ThreadPin,
} from "../../control/deployment-store";
import { newId } from "../../control/ids";
import { decodeCursor, encodeCursor, pageLimit, timeIdCursor } from "../../control/page-cursor";
import {
  agentNotFound,
  assignmentSchema,
  checkRuntime,
  matchPin,
  missingVersion,
  noActiveRelease,
  pageOf,
  parseInput,
  releaseInputSchema,
  unknownRuntime,
  unsupportedVersion,
} from "../../control/store-rules";
import { fail, ok, type Result } from "../../errors";
import { agentExists } from "./pg-agents";
import { foreignKeyViolation, type PgQueryable } from "./pg-connection";
import {
  allocationSelect,
  firstRow,
  PG_PIN_COLUMNS,
  type PgContext,
  parseAllocations,
  releaseColumns,
  toPin,
  toRelease,
} from "./pg-rows";
import { getVersionById } from "./pg-versions";

export async function registerRuntime(c: PgContext, runtime: RuntimeRevision): Promise<void> {
  const r = checkRuntime(runtime);
  await c.db.query(
    `INSERT INTO ${c.t.runtimes} (id, supported_schema_versions, created_at) VALUES ($1, $2::jsonb, $3)
     ON CONFLICT (id) DO UPDATE SET supported_schema_versions = excluded.supported_schema_versions`,
    [r.id, JSON.stringify(r.supportedSchemaVersions), c.stamp()],
  );
}

const supportedRow = z.object({ supported_schema_versions: z.array(z.number().int()) });

const releaseNotFound = (): Result<never> => fail("not_found", "Release not found.");

export async function createRelease(
  c: PgContext,
  tenantId: string,
  agentId: string,
  input: { environment: Environment; allocations: Allocation[]; runtimeRevision: string },
): Promise<Result<Release>> {
  const parsed = parseInput(releaseInputSchema, input, "Release");
  if (!parsed.ok) return parsed;
  const { environment, allocations, runtimeRevision } = parsed.value;
  if (!(await agentExists(c, tenantId, agentId))) return agentNotFound();

  const runtime = await firstRow(
    c.db,
    `SELECT supported_schema_versions FROM ${c.t.runtimes} WHERE id = $1`,
    [runtimeRevision],
  );
  if (runtime === null) return unknownRuntime(runtimeRevision);
  const supported = supportedRow.parse(runtime).supported_schema_versions;

  const { rows } = await c.db.query(
    `SELECT id, version, schema_version FROM ${c.t.versions}
     WHERE tenant_id = $1 AND agent_id = $2 AND version = ANY($3::bigint[])`,
    [tenantId, agentId, allocations.map((a) => a.version)],
  );
  const versionRow = z.object({ id: z.string(), version: z.coerce.number(), schema_version: z.number() });
  const found = new Map(rows.map((row) => versionRow.parse(row)).map((v) => [v.version, v]));
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
    createdAt: c.stamp(),
    activatedAt: null,
    active: false,
  };
  try {
    await c.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO ${c.t.releases} (tenant_id, id, agent_id, environment, runtime_revision, created_at, activated_at)
         VALUES ($1, $2, $3, $4, $5, $6, NULL)`,
        [tenantId, release.id, agentId, environment, runtimeRevision, release.createdAt],
      );
      await tx.query(
        `INSERT INTO ${c.t.allocations} (tenant_id, release_id, position, agent_id, version, weight)
         SELECT $1, $2, a.position - 1, $3, a.version, a.weight
         FROM unnest($4::bigint[], $5::integer[]) WITH ORDINALITY AS a (version, weight, position)`,
        [tenantId, release.id, agentId, resolved.map((a) => a.version), resolved.map((a) => a.weight)],
      );
    });
  } catch (error) {
    if (foreignKeyViolation(error)) return agentNotFound();
    throw error;
  }
  return ok(release);
}

export async function activateRelease(
  c: PgContext,
  tenantId: string,
  agentId: string,
  releaseId: string,
): Promise<Result<Release>> {
  const now = c.stamp();
  return c.db.transaction(async (tx) => {
    const marked = await tx.query(
      `UPDATE ${c.t.releases} SET activated_at = $1 WHERE tenant_id = $2 AND agent_id = $3 AND id = $4`,
      [now, tenantId, agentId, releaseId],
    );
    if (marked.rowCount !== 1) return releaseNotFound();
    await tx.query(
      `INSERT INTO ${c.t.activeReleases} (tenant_id, agent_id, environment, release_id, activated_at)
       SELECT tenant_id, agent_id, environment, id, $1 FROM ${c.t.releases}
       WHERE tenant_id = $2 AND agent_id = $3 AND id = $4
       ON CONFLICT (tenant_id, agent_id, environment)
       DO UPDATE SET release_id = excluded.release_id, activated_at = excluded.activated_at`,
      [now, tenantId, agentId, releaseId],
    );
    const release = await readRelease(tx, c, tenantId, agentId, releaseId);
    return release === null ? releaseNotFound() : ok(release);
  });
}

export function getRelease(
  c: PgContext,
  tenantId: string,
  agentId: string,
  releaseId: string,
): Promise<Release | null> {
  return readRelease(c.db, c, tenantId, agentId, releaseId);
}

async function readRelease(
  db: PgQueryable,
  c: PgContext,
  tenantId: string,
  agentId: string,
  releaseId: string,
): Promise<Release | null> {
  const row = await firstRow(
    db,
    `SELECT ${releaseColumns(c.t)} FROM ${c.t.releases} r WHERE r.tenant_id = $1 AND r.agent_id = $2 AND r.id = $3`,
    [tenantId, agentId, releaseId],
  );
  if (row === null) return null;
  const allocations = await db.query(
    `${allocationSelect(c.t)} WHERE ra.tenant_id = $1 AND ra.release_id = $2 ORDER BY ra.position`,
    [tenantId, releaseId],
  );
  return toRelease(row, parseAllocations(allocations.rows));
}

export async function listReleases(
  c: PgContext,
  tenantId: string,
  agentId: string,
  page: PageRequest,
): Promise<Page<Release>> {
  const limit = pageLimit(page.limit);
  const [createdAt, id] = page.after === undefined ? [null, ""] : decodeCursor(page.after, timeIdCursor);
  const { rows } = await c.db.query(
    `SELECT ${releaseColumns(c.t)} FROM ${c.t.releases} r
     WHERE r.tenant_id = $1 AND r.agent_id = $2
       AND ($3::timestamptz IS NULL OR r.created_at > $3 OR (r.created_at = $3 AND r.id > $4))
     ORDER BY r.created_at, r.id LIMIT $5`,
    [tenantId, agentId, createdAt, id, limit + 1],
  );
  // Allocations are written with their release and never change, so reading them second sees the same ones.
  const ids = rows.map((row) => String(row.id));
  const allocations = await c.db.query(
    `${allocationSelect(c.t)} WHERE ra.tenant_id = $1 AND ra.release_id = ANY($2::text[]) ORDER BY ra.position`,
    [tenantId, ids],
  );
  const allocationRows = parseAllocations(allocations.rows);
  const items = rows.map((row) => toRelease(row, allocationRows));
  return pageOf(items, limit, (r) => encodeCursor([r.createdAt, r.id]));
}

export async function getActiveRelease(
  c: PgContext,
  tenantId: string,
  agentId: string,
  environment: Environment,
): Promise<Release | null> {
  const releaseId = await activeReleaseId(c.db, c, tenantId, agentId, environment);
  return releaseId === null ? null : getRelease(c, tenantId, agentId, releaseId);
}

async function activeReleaseId(
  db: PgQueryable,
  c: PgContext,
  tenantId: string,
  agentId: string,
  environment: string,
): Promise<string | null> {
  const row = await firstRow(
    db,
    `SELECT release_id FROM ${c.t.activeReleases} WHERE tenant_id = $1 AND agent_id = $2 AND environment = $3`,
    [tenantId, agentId, environment],
  );
  return row === null ? null : z.string().parse(row.release_id);
}

/**
 * One transaction: an existing pin is returned as it is; otherwise the active release's allocation for this thread
 * is verified and inserted with ON CONFLICT DO NOTHING, and the pin read back. Of concurrent first turns one INSERT
 * wins; the others wait for it, insert nothing, and read the winner's pin (READ COMMITTED: a fresh snapshot per
 * statement), so there is exactly one pin.
 */
export async function assignThread(
  c: PgContext,
  tenantId: string,
  input: { agentId: string; environment: Environment; threadId: string },
): Promise<Result<ThreadPin>> {
  const parsed = parseInput(assignmentSchema, input, "Thread assignment");
  if (!parsed.ok) return parsed;
  const { agentId, environment, threadId } = parsed.value;
  return c.db.transaction(async (tx) => {
    const existing = await readPin(tx, c, tenantId, threadId);
    if (existing !== null) return matchPin(existing, parsed.value);

    const releaseId = await activeReleaseId(tx, c, tenantId, agentId, environment);
    if (releaseId === null) return noActiveRelease();
    const { rows } = await tx.query(
      `${allocationSelect(c.t)} WHERE ra.tenant_id = $1 AND ra.release_id = $2 ORDER BY ra.position`,
      [tenantId, releaseId],
    );
    const chosen = await selectAllocation(
      { tenantId, environment, agentId, releaseId, threadId },
      parseAllocations(rows),
    );
    // The pinned version is verified before it is pinned: a tampered artifact must never be bound.
    const version = await getVersionById(c, tenantId, chosen.version_id, tx);
    if (!version.ok) return version;

    const inserted = await firstRow(
      tx,
      `INSERT INTO ${c.t.pins} (${PG_PIN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (tenant_id, thread_id) DO NOTHING RETURNING ${PG_PIN_COLUMNS}`,
      [
        tenantId,
        threadId,
        agentId,
        environment,
        releaseId,
        version.value.id,
        version.value.version,
        version.value.digest,
        c.stamp(),
      ],
    );
    const pin = inserted === null ? await readPin(tx, c, tenantId, threadId) : toPin(inserted);
    if (pin === null) throw new Error("Thread pin vanished after being written.");
    return matchPin(pin, parsed.value);
  });
}

export function getPin(c: PgContext, tenantId: string, threadId: string): Promise<ThreadPin | null> {
  return readPin(c.db, c, tenantId, threadId);
}

async function readPin(
  db: PgQueryable,
  c: PgContext,
  tenantId: string,
  threadId: string,
): Promise<ThreadPin | null> {
  const row = await firstRow(
    db,
    `SELECT ${PG_PIN_COLUMNS} FROM ${c.t.pins} WHERE tenant_id = $1 AND thread_id = $2`,
    [tenantId, threadId],
  );
  return row === null ? null : toPin(row);
}
