// The `agent_versions` table on D1: immutable published artifacts, numbered atomically and verified on every read.
import { z } from "zod";
import { canonicalJson, digestOf } from "../../control/canonical-json";
import type { AgentVersion, Page, PageRequest } from "../../control/deployment-store";
import { newId } from "../../control/ids";
import { decodeCursor, encodeCursor, pageLimit, versionCursor } from "../../control/page-cursor";
import {
  agentNotFound,
  artifactFromDefinition,
  badRevision,
  isVersionNumber,
  pageOf,
  revisionSchema,
  staleDraft,
  verifyStoredArtifact,
  versionNotFound,
} from "../../control/store-rules";
import { AppError, fail, ok, type Result } from "../../errors";
import { agentExists } from "./agents";
import { uniqueViolation, VERSION_COLUMNS, versionRow } from "./deployment-rows";
import { getDraft } from "./drafts";

/** Publishing retries this often when a concurrent writer took the version number first. */
const PUBLISH_ATTEMPTS = 3;

export async function publishDraft(
  db: D1Database,
  stamp: () => string,
  tenantId: string,
  agentId: string,
  draftRevision: number,
): Promise<Result<AgentVersion>> {
  if (!revisionSchema.safeParse(draftRevision).success || draftRevision < 1)
    return badRevision("draftRevision");
  if (!(await agentExists(db, tenantId, agentId))) return agentNotFound();
  const draft = await getDraft(db, tenantId, agentId);
  if (draft === null) return fail("not_found", "Draft not found.");
  if (draft.revision !== draftRevision) return staleDraft();
  const artifact = artifactFromDefinition(draft.definition);
  if (!artifact.ok) return artifact;
  const text = canonicalJson(artifact.value);
  const digest = await digestOf(artifact.value);
  const createdAt = stamp();
  // One INSERT … SELECT MAX(version)+1 numbers the version atomically (a D1 statement runs alone) and only
  // while the draft is still at the named revision; the primary key backstops the number, with a retry.
  for (let attempt = 0; attempt < PUBLISH_ATTEMPTS; attempt++) {
    const id = newId("ver");
    try {
      const row = await db
        .prepare(
          `INSERT INTO agent_versions (${VERSION_COLUMNS})
           SELECT ?1, ?2, ?3, next, ?4, ?5, ?6, ?7, ?8
           FROM (SELECT COALESCE(MAX(version), 0) + 1 AS next FROM agent_versions
                 WHERE tenant_id = ?1 AND agent_id = ?2)
           WHERE EXISTS (SELECT 1 FROM agent_drafts WHERE tenant_id = ?1 AND agent_id = ?2 AND revision = ?4)
           RETURNING version`,
        )
        .bind(tenantId, agentId, id, draftRevision, artifact.value.schemaVersion, text, digest, createdAt)
        .first();
      if (row === null) return staleDraft();
      const { version } = z.object({ version: z.number().int() }).parse(row);
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
    } catch (error) {
      if (uniqueViolation(error) === null) throw error;
    }
  }
  return fail("conflict", "Another version was published at the same time; retry.");
}

async function versionWhere(db: D1Database, sql: string, ...binds: unknown[]): Promise<Result<AgentVersion>> {
  const row = await db
    .prepare(`SELECT ${VERSION_COLUMNS} FROM agent_versions WHERE ${sql}`)
    .bind(...binds)
    .first();
  return row === null ? versionNotFound() : toVerifiedVersion(row);
}

export async function getVersion(
  db: D1Database,
  tenantId: string,
  agentId: string,
  version: number,
): Promise<Result<AgentVersion>> {
  if (!isVersionNumber(version)) return versionNotFound();
  return versionWhere(db, "tenant_id = ? AND agent_id = ? AND version = ?", tenantId, agentId, version);
}

export function getVersionById(
  db: D1Database,
  tenantId: string,
  versionId: string,
): Promise<Result<AgentVersion>> {
  return versionWhere(db, "tenant_id = ? AND id = ?", tenantId, versionId);
}

export async function listVersions(
  db: D1Database,
  tenantId: string,
  agentId: string,
  page: PageRequest,
): Promise<Page<AgentVersion>> {
  const limit = pageLimit(page.limit);
  const [after] = page.after === undefined ? [0] : decodeCursor(page.after, versionCursor);
  const { results } = await db
    .prepare(
      `SELECT ${VERSION_COLUMNS} FROM agent_versions WHERE tenant_id = ? AND agent_id = ? AND version > ?
       ORDER BY version LIMIT ?`,
    )
    .bind(tenantId, agentId, after, limit + 1)
    .all();
  const items: AgentVersion[] = [];
  for (const row of results) {
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
