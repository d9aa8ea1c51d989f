// The TenantQuota object's one table: how many units of each quota kind a tenant used on each UTC day.
import { z } from "zod";

const usedRow = z.object({ used: z.number().int() });

/** Idempotent, run on every start: the table has had one shape since it was introduced, so it has no migrations. */
export function createQuotaCounters(sql: SqlStorage): void {
  sql.exec(
    "CREATE TABLE IF NOT EXISTS quota_counters (kind TEXT NOT NULL, day TEXT NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (kind, day))",
  );
}

/** Units of `kind` used on `day`; 0 when none were. */
export function quotaUsed(sql: SqlStorage, kind: string, day: string): number {
  const row = sql.exec("SELECT used FROM quota_counters WHERE kind = ? AND day = ?", kind, day).toArray()[0];
  return row === undefined ? 0 : usedRow.parse(row).used;
}

/** Counts one unit of `kind` on `day` and forgets earlier days (a quota never looks back). */
export function countQuotaUse(sql: SqlStorage, kind: string, day: string): void {
  sql.exec(
    "INSERT INTO quota_counters (kind, day, used) VALUES (?, ?, 1) ON CONFLICT (kind, day) DO UPDATE SET used = used + 1",
    kind,
    day,
  );
  sql.exec("DELETE FROM quota_counters WHERE day < ?", day);
}
