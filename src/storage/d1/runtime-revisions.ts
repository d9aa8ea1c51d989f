// The `runtime_revisions` table on D1: which artifact schema versions each deployed runtime can run (not tenant data).
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
      `INSERT INTO runtime_revisions (id, supported_schema_versions, created_at) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET supported_schema_versions = excluded.supported_schema_versions`,
    )
    .bind(r.id, JSON.stringify(r.supportedSchemaVersions), stamp())
    .run();
}

/** The schema versions a runtime revision supports; null when the revision was never registered. */
export async function supportedSchemaVersions(
  db: D1Database,
  runtimeRevision: string,
): Promise<number[] | null> {
  const row = await db
    .prepare("SELECT supported_schema_versions FROM runtime_revisions WHERE id = ?")
    .bind(runtimeRevision)
    .first();
  if (row === null) return null;
  return z.object({ supported_schema_versions: jsonText(z.array(z.number().int())) }).parse(row)
    .supported_schema_versions;
}
