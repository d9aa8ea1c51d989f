// The `runtime_revisions` table on D1: which artifact schema versions each deployed runtime can run, and its capabilities (not tenant data).
import { z } from "zod";
import type { RuntimeRevision } from "../../control/deployment-store";
import { checkRuntime } from "../../control/store-rules";
import { jsonText } from "./deployment-rows";

export async function registerRuntime(
  db: D1Database,
  stamp: () => string,
  runtime: RuntimeRevision,
): Promise<void> {
  const r = checkRuntime(runtime);
  await db
    .prepare(
      `INSERT INTO runtime_revisions (id, supported_schema_versions, capabilities, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET supported_schema_versions = excluded.supported_schema_versions,
         capabilities = excluded.capabilities`,
    )
    .bind(r.id, JSON.stringify(r.supportedSchemaVersions), JSON.stringify(r.capabilities), stamp())
    .run();
}

const runtimeRow = z.object({
  id: z.string(),
  supported_schema_versions: jsonText(z.array(z.number().int())),
  capabilities: jsonText(z.array(z.string())),
});

export async function getRuntime(db: D1Database, runtimeId: string): Promise<RuntimeRevision | null> {
  const row = await db
    .prepare("SELECT id, supported_schema_versions, capabilities FROM runtime_revisions WHERE id = ?")
    .bind(runtimeId)
    .first();
  if (row === null) return null;
  const r = runtimeRow.parse(row);
  return { id: r.id, supportedSchemaVersions: r.supported_schema_versions, capabilities: r.capabilities };
}

/** The schema versions a runtime revision supports; null when the revision was never registered. */
export async function supportedSchemaVersions(
  db: D1Database,
  runtimeRevision: string,
): Promise<number[] | null> {
  return (await getRuntime(db, runtimeRevision))?.supportedSchemaVersions ?? null;
}
