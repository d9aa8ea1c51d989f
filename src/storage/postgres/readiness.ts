// The control-plane service's readiness (docs/control-plane.md#routes): the database answers and holds this schema.
import { DEFAULT_PREFIX, pgTables, SCHEMA_VERSION } from "./migration";
import type { PgQueryable } from "./pg-connection";

/** null when ready; otherwise why not, in words an operator acts on (never a credential). */
export async function postgresReadiness(
  sql: PgQueryable,
  prefix: string = DEFAULT_PREFIX,
): Promise<string | null> {
  const t = pgTables(prefix);
  let version: unknown;
  try {
    const table = await sql.query("SELECT to_regclass($1) AS found", [t.schemaVersion]);
    if (table.rows[0]?.found === null) {
      return `not migrated: no ${t.schemaVersion} (run the migration, docs/control-plane.md#owning-the-migration)`;
    }
    const result = await sql.query(`SELECT max(version) AS version FROM ${t.schemaVersion}`);
    version = result.rows[0]?.version;
  } catch (error) {
    return `database unreachable: ${error instanceof Error ? error.message : String(error)}`;
  }
  return Number(version) >= SCHEMA_VERSION
    ? null
    : `not migrated: schema version ${String(version)} < ${SCHEMA_VERSION}`;
}
