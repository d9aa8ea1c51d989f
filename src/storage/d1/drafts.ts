// The `agent_drafts` table on D1: one editable definition per agent, saved only at the revision the editor saw.
import { z } from "zod";
import type { Draft } from "../../control/deployment-store";
import {
  agentNotFound,
  badRevision,
  canonicalDraft,
  draftDefinitionSchema,
  revisionSchema,
  staleDraft,
} from "../../control/store-rules";
import { ok, type Result } from "../../errors";
import { agentExists } from "./agents";
import { jsonText } from "./deployment-rows";

const draftRow = z.object({
  revision: z.number().int(),
  definition: jsonText(draftDefinitionSchema),
  updated_at: z.string(),
});

export async function saveDraft(
  db: D1Database,
  stamp: () => string,
  tenantId: string,
  agentId: string,
  expectedRevision: number,
  definition: unknown,
): Promise<Result<{ revision: number }>> {
  if (!revisionSchema.safeParse(expectedRevision).success) return badRevision("expectedRevision");
  const text = canonicalDraft(definition);
  if (!text.ok) return text;
  if (!(await agentExists(db, tenantId, agentId))) return agentNotFound();
  const now = stamp();
  const statement =
    expectedRevision === 0
      ? db
          .prepare(
            `INSERT INTO agent_drafts (tenant_id, agent_id, revision, definition, updated_at)
             VALUES (?1, ?2, 1, ?3, ?4) ON CONFLICT (tenant_id, agent_id) DO NOTHING`,
          )
          .bind(tenantId, agentId, text.value, now)
      : db
          .prepare(
            `UPDATE agent_drafts SET revision = revision + 1, definition = ?3, updated_at = ?4
             WHERE tenant_id = ?1 AND agent_id = ?2 AND revision = ?5`,
          )
          .bind(tenantId, agentId, text.value, now, expectedRevision);
  const result = await statement.run();
  return result.meta.changes === 1 ? ok({ revision: expectedRevision + 1 }) : staleDraft();
}

export async function getDraft(db: D1Database, tenantId: string, agentId: string): Promise<Draft | null> {
  const row = await db
    .prepare("SELECT revision, definition, updated_at FROM agent_drafts WHERE tenant_id = ? AND agent_id = ?")
    .bind(tenantId, agentId)
    .first();
  if (row === null) return null;
  const r = draftRow.parse(row);
  return { tenantId, agentId, revision: r.revision, definition: r.definition, updatedAt: r.updated_at };
}
