// Which D1 migrations the database has applied, as wrangler records them in `d1_migrations` (no tenant data).
import { z } from "zod";

const nameRow = z.object({ name: z.string() });

/** Applied migration names; none when the table does not exist yet. Throws when D1 does not answer. */
export async function appliedMigrations(db: D1Database): Promise<Set<string>> {
  const table = await db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'd1_migrations'")
    .first();
  if (table === null) return new Set();
  const rows = await db.prepare("SELECT name FROM d1_migrations").all();
  return new Set(rows.results.map((row) => nameRow.parse(row).name));
}
