// The TenantQuota object's tables: units used per quota kind and UTC day, the tenant's settings as last read from D1
// (its launch shares and its storage quota in tables of their own), the leases of runs in progress, and the ledger of
// the tenant's attachment objects (src/storage/quota/attachment-ledger.ts).
import { z } from "zod";
import { TENANT_STATUSES, type TenantQuotas, type TenantStatus } from "../../shared/api";

const usedRow = z.object({ used: z.number().int() });

/**
 * Idempotent, run on every start. Each table has had one shape since it was introduced, so there is no migration
 * list: a table added later is simply created on the first start of a build that knows it.
 */
export function createQuotaCounters(sql: SqlStorage): void {
  sql.exec(
    "CREATE TABLE IF NOT EXISTS quota_counters (kind TEXT NOT NULL, day TEXT NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (kind, day))",
  );
  sql.exec(
    `CREATE TABLE IF NOT EXISTS tenant_settings (
       id INTEGER PRIMARY KEY CHECK (id = 1), status TEXT NOT NULL, launches_per_day INTEGER,
       tokens_per_day INTEGER, concurrent_threads INTEGER, loaded_at INTEGER NOT NULL)`,
  );
  // Added after `tenant_settings` (whose shape never changes): a settings row without its shares row is a copy
  // read before shares existed, and is read again from D1.
  sql.exec(
    `CREATE TABLE IF NOT EXISTS tenant_launch_shares (
       id INTEGER PRIMARY KEY CHECK (id = 1), private_reserve_percent INTEGER,
       agent_public_share_percent INTEGER)`,
  );
  // Added after `tenant_launch_shares`, the same way: a settings row without it is read again from D1.
  sql.exec(
    "CREATE TABLE IF NOT EXISTS tenant_storage_quota (id INTEGER PRIMARY KEY CHECK (id = 1), storage_bytes INTEGER)",
  );
  sql.exec(
    `CREATE TABLE IF NOT EXISTS run_leases (
       id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, expires_at INTEGER NOT NULL)`,
  );
}

/** Units of `kind` used on `day`; 0 when none were. */
export function quotaUsed(sql: SqlStorage, kind: string, day: string): number {
  const row = sql.exec("SELECT used FROM quota_counters WHERE kind = ? AND day = ?", kind, day).toArray()[0];
  return row === undefined ? 0 : usedRow.parse(row).used;
}

/** Counts `units` of `kind` on `day` and forgets earlier days (a quota never looks back). */
export function countQuotaUse(sql: SqlStorage, kind: string, day: string, units = 1): void {
  sql.exec(
    "INSERT INTO quota_counters (kind, day, used) VALUES (?, ?, ?) ON CONFLICT (kind, day) DO UPDATE SET used = used + excluded.used",
    kind,
    day,
    units,
  );
  sql.exec("DELETE FROM quota_counters WHERE day < ?", day);
}

/** Gives back one unit of `kind` on `day` (a launch that stored nothing after all); never below zero. */
export function uncountQuotaUse(sql: SqlStorage, kind: string, day: string): void {
  sql.exec("UPDATE quota_counters SET used = MAX(0, used - 1) WHERE kind = ? AND day = ?", kind, day);
}

export interface StoredTenantSettings {
  status: TenantStatus;
  quotas: TenantQuotas;
  /** Epoch ms of the D1 read this copy came from. */
  loadedAt: number;
}

const quota = z.number().int().positive().nullable();
const percent = z.number().int().min(0).max(100).nullable();
const settingsRow = z.object({
  status: z.enum(TENANT_STATUSES),
  launches_per_day: quota,
  tokens_per_day: quota,
  concurrent_threads: quota,
  loaded_at: z.number(),
  private_reserve_percent: percent,
  agent_public_share_percent: percent,
  storage_bytes: quota,
});

export function readTenantSettings(sql: SqlStorage): StoredTenantSettings | null {
  const row = sql
    .exec(
      `SELECT s.status, s.launches_per_day, s.tokens_per_day, s.concurrent_threads, s.loaded_at,
         l.private_reserve_percent, l.agent_public_share_percent, q.storage_bytes
       FROM tenant_settings s JOIN tenant_launch_shares l ON l.id = s.id JOIN tenant_storage_quota q ON q.id = s.id
       WHERE s.id = 1`,
    )
    .toArray()[0];
  if (row === undefined) return null;
  const r = settingsRow.parse(row);
  return {
    status: r.status,
    quotas: {
      launchesPerDay: r.launches_per_day,
      tokensPerDay: r.tokens_per_day,
      concurrentThreads: r.concurrent_threads,
      privateLaunchReservePercent: r.private_reserve_percent,
      agentPublicLaunchSharePercent: r.agent_public_share_percent,
      storageBytes: r.storage_bytes,
    },
    loadedAt: r.loaded_at,
  };
}

export function writeTenantSettings(sql: SqlStorage, settings: StoredTenantSettings): void {
  sql.exec(
    `INSERT INTO tenant_settings (id, status, launches_per_day, tokens_per_day, concurrent_threads, loaded_at)
     VALUES (1, ?, ?, ?, ?, ?)
     ON CONFLICT (id) DO UPDATE SET status = excluded.status, launches_per_day = excluded.launches_per_day,
       tokens_per_day = excluded.tokens_per_day, concurrent_threads = excluded.concurrent_threads,
       loaded_at = excluded.loaded_at`,
    settings.status,
    settings.quotas.launchesPerDay,
    settings.quotas.tokensPerDay,
    settings.quotas.concurrentThreads,
    settings.loadedAt,
  );
  sql.exec(
    `INSERT INTO tenant_launch_shares (id, private_reserve_percent, agent_public_share_percent) VALUES (1, ?, ?)
     ON CONFLICT (id) DO UPDATE SET private_reserve_percent = excluded.private_reserve_percent,
       agent_public_share_percent = excluded.agent_public_share_percent`,
    settings.quotas.privateLaunchReservePercent,
    settings.quotas.agentPublicLaunchSharePercent,
  );
  sql.exec(
    `INSERT INTO tenant_storage_quota (id, storage_bytes) VALUES (1, ?)
     ON CONFLICT (id) DO UPDATE SET storage_bytes = excluded.storage_bytes`,
    settings.quotas.storageBytes,
  );
}

const countRow = z.object({ n: z.number().int() });

/** Forgets leases that expired at or before `now`: their holder died or stopped renewing. */
export function expireRunLeases(sql: SqlStorage, now: number): void {
  sql.exec("DELETE FROM run_leases WHERE expires_at <= ?", now);
}

/** Threads holding at least one live lease; `threadId`'s own leases are reported apart. */
export function leasedThreads(sql: SqlStorage, threadId: string): { threads: number; holdsOne: boolean } {
  const threads = countRow.parse(
    sql.exec("SELECT COUNT(DISTINCT thread_id) AS n FROM run_leases").toArray()[0],
  ).n;
  const own = countRow.parse(
    sql.exec("SELECT COUNT(*) AS n FROM run_leases WHERE thread_id = ?", threadId).toArray()[0],
  ).n;
  return { threads, holdsOne: own > 0 };
}

export function insertRunLease(sql: SqlStorage, lease: { id: string; threadId: string; expiresAt: number }) {
  sql.exec(
    "INSERT INTO run_leases (id, thread_id, expires_at) VALUES (?, ?, ?)",
    lease.id,
    lease.threadId,
    lease.expiresAt,
  );
}

/** Extends a live lease; false when it expired (or was never granted). */
export function renewRunLease(sql: SqlStorage, id: string, expiresAt: number): boolean {
  const cursor = sql.exec("UPDATE run_leases SET expires_at = ? WHERE id = ?", expiresAt, id);
  cursor.toArray();
  return cursor.rowsWritten > 0;
}

export function deleteRunLease(sql: SqlStorage, id: string): void {
  sql.exec("DELETE FROM run_leases WHERE id = ?", id);
}
