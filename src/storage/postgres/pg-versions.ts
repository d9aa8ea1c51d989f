// Drafts and versions on PostgreSQL: a draft saved only at the revision the editor saw, versions numbered under the
// draft's row lock, written once, and re-verified against their digest on every read.
import { z } from "zod";
import { canonicalJson, digestOf } from "../../control/canonical-json";
import type { AgentVersion, Draft, Page, PageRequest } from "../../control/deployment-store";
import { newId } from "../../control/ids";
import { decodeCursor, encodeCursor, pageLimit, versionCursor } from "../../control/page-cursor";
import {
  agentNotFound,
  artifactFromDefinition,
  badRevision,
  canonicalDraft,
  draftDefinitionSchema,
  isVersionNumber,
  pageOf,
  revisionSchema,
  staleDraft,
  verifyStoredArtifact,
  versionNotFound,
} from "../../control/store-rules";
import { AppError, fail, ok, type Result } from "../../errors";
import { agentExists } from "./pg-agents";
import { foreignKeyViolation, type PgQueryable, uniqueViolation } from "./pg-connection";
import { draftRow, firstRow, PG_VERSION_COLUMNS, type PgContext, versionRow } from "./pg-rows";

export async function saveDraft(
  c: PgContext,
  tenantId: string,
  agentId: string,
  expectedRevision: number,
  definition: unknown,
): Promise<Result<{ revision: number }>> {
  if (!revisionSchema.safeParse(expectedRevision).success) return badRevision("expectedRevision");
  const text = canonicalDraft(definition);
  if (!text.ok) return text;
  if (!(await agentExists(c, tenantId, agentId))) return agentNotFound();
  const now = c.stamp();
  try {
    // Compare-and-swap: the row changes only at the expected revision, so of two savers from one revision one wins.
    const result =
      expectedRevision === 0
        ? await c.db.query(
            `INSERT INTO ${c.t.drafts} (tenant_id, agent_id, revision, definition, updated_at)
             VALUES ($1, $2, 1, $3, $4) ON CONFLICT (tenant_id, agent_id) DO NOTHING`,
            [tenantId, agentId, text.value, now],
          )
        : await c.db.query(
            `UPDATE ${c.t.drafts} SET revision = revision + 1, definition = $3, updated_at = $4
             WHERE tenant_id = $1 AND agent_id = $2 AND revision = $5`,
            [tenantId, agentId, text.value, now, expectedRevision],
          );
    return result.rowCount === 1 ? ok({ revision: expectedRevision + 1 }) : staleDraft();
  } catch (error) {
    if (foreignKeyViolation(error)) return agentNotFound();
    throw error;
  }
}

export async function getDraft(c: PgContext, tenantId: string, agentId: string): Promise<Draft | null> {
  const row = await firstRow(
    c.db,
    `SELECT revision, definition, updated_at FROM ${c.t.drafts} WHERE tenant_id = $1 AND agent_id = $2`,
    [tenantId, agentId],
  );
  if (row === null) return null;
  const r = draftRow.parse(row);
  const definition = draftDefinitionSchema.parse(JSON.parse(r.definition));
  return { tenantId, agentId, revision: r.revision, definition, updatedAt: r.updated_at };
}

export async function publishDraft(
  c: PgContext,
  tenantId: string,
  agentId: string,
  draftRevision: number,
): Promise<Result<AgentVersion>> {
  if (!revisionSchema.safeParse(draftRevision).success || draftRevision < 1)
    return badRevision("draftRevision");
  if (!(await agentExists(c, tenantId, agentId))) return agentNotFound();
  try {
    return await c.db.transaction(async (tx) => {
      // The draft's row lock orders publishes of one agent: each reads the highest number its predecessor wrote.
      const row = await firstRow(
        tx,
        `SELECT revision, definition, updated_at FROM ${c.t.drafts}
         WHERE tenant_id = $1 AND agent_id = $2 FOR UPDATE`,
        [tenantId, agentId],
      );
      if (row === null) return fail("not_found", "Draft not found.");
      const draft = draftRow.parse(row);
      if (draft.revision !== draftRevision) return staleDraft();
      const artifact = artifactFromDefinition(JSON.parse(draft.definition));
      if (!artifact.ok) return artifact;
      const text = canonicalJson(artifact.value);
      const digest = await digestOf(artifact.value);
      const createdAt = c.stamp();
      const id = newId("ver");
      const inserted = await firstRow(
        tx,
        `INSERT INTO ${c.t.versions} (${PG_VERSION_COLUMNS})
         SELECT $1, $2, $3, COALESCE(MAX(version), 0) + 1, $4::bigint, $5::integer, $6, $7, $8::timestamptz
         FROM ${c.t.versions} WHERE tenant_id = $1 AND agent_id = $2
         RETURNING version`,
        [tenantId, agentId, id, draftRevision, artifact.value.schemaVersion, text, digest, createdAt],
      );
      const { version } = z.object({ version: z.coerce.number().int() }).parse(inserted);
      return ok({
        tenantId,
        agentId,
        id,
        version,
        draftRevision,
        digest,
        artifact: artifact.value,
        createdAt,
      });
    });
  } catch (error) {
    if (uniqueViolation(error) !== null)
      return fail("conflict", "Another version was published at the same time; retry.");
    if (foreignKeyViolation(error)) return agentNotFound();
    throw error;
  }
}

async function versionWhere(
  db: PgQueryable,
  c: PgContext,
  where: string,
  values: unknown[],
): Promise<Result<AgentVersion>> {
  const row = await firstRow(db, `SELECT ${PG_VERSION_COLUMNS} FROM ${c.t.versions} WHERE ${where}`, values);
  return row === null ? versionNotFound() : toVerifiedVersion(row);
}

export async function getVersion(
  c: PgContext,
  tenantId: string,
  agentId: string,
  version: number,
): Promise<Result<AgentVersion>> {
  if (!isVersionNumber(version)) return versionNotFound();
  return versionWhere(c.db, c, "tenant_id = $1 AND agent_id = $2 AND version = $3", [
    tenantId,
    agentId,
    version,
  ]);
}

export function getVersionById(
  c: PgContext,
  tenantId: string,
  versionId: string,
  db: PgQueryable = c.db,
): Promise<Result<AgentVersion>> {
  return versionWhere(db, c, "tenant_id = $1 AND id = $2", [tenantId, versionId]);
}

export async function listVersions(
  c: PgContext,
  tenantId: string,
  agentId: string,
  page: PageRequest,
): Promise<Page<AgentVersion>> {
  const limit = pageLimit(page.limit);
  const [after] = page.after === undefined ? [0] : decodeCursor(page.after, versionCursor);
  const { rows } = await c.db.query(
    `SELECT ${PG_VERSION_COLUMNS} FROM ${c.t.versions} WHERE tenant_id = $1 AND agent_id = $2 AND version > $3
     ORDER BY version LIMIT $4`,
    [tenantId, agentId, after, limit + 1],
  );
  const items: AgentVersion[] = [];
  for (const row of rows) {
    const version = await toVerifiedVersion(row);
    if (!version.ok) throw new AppError(version.code, version.message);
    items.push(version.value);
  }
  return pageOf(items, limit, (v) => encodeCursor([v.version]));
}

async function toVerifiedVersion(row: unknown): Promise<Result<AgentVersion>> {
  const r = versionRow.parse(row);
  const artifact = await verifyStoredArtifact(r.artifact, r.digest);
  if (!artifact.ok) return artifact;
  return ok({
    tenantId: r.tenant_id,
    agentId: r.agent_id,
    id: r.id,
    version: r.version,
    draftRevision: r.draft_revision,
    digest: r.digest,
    artifact: artifact.value,
    createdAt: r.created_at,
  });
}
