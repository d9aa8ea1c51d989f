// The thread object's SQLite schema, applied on start with a stored version: the migrations themselves are the
// append-only list in src/storage/thread/thread-migrations.ts.
import { readMeta, writeMeta } from "./thread-meta";
import { THREAD_MIGRATIONS, type ThreadMigration } from "./thread-migrations";

export { THREAD_MIGRATIONS, type ThreadMigration };

const SCHEMA_VERSION_KEY = "schema_version";

export const THREAD_SCHEMA_VERSION: number = THREAD_MIGRATIONS[THREAD_MIGRATIONS.length - 1]?.version ?? 0;

/** Schema version recorded in this object's storage; 0 when nothing was ever applied. */
export function threadSchemaVersion(storage: DurableObjectStorage): number {
  const hasMeta = storage.sql
    .exec("SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'meta'")
    .toArray();
  if (hasMeta.length === 0) return 0;
  const version = Number(readMeta(storage, SCHEMA_VERSION_KEY) ?? 0);
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new Error("Thread storage has an unreadable schema version.");
  }
  return version;
}

/**
 * Applies every migration newer than the stored version, in one transaction, and records the new version.
 * Returns the version now in storage. Throws (a bug or a rollback of code, never a user error) when storage is
 * newer than this build or the list is malformed.
 */
export function migrateThreadSchema(
  storage: DurableObjectStorage,
  migrations: readonly ThreadMigration[] = THREAD_MIGRATIONS,
): number {
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(
        `Thread migrations must be numbered 1..n in order (found ${migration.version} at ${index}).`,
      );
    }
  });
  const target = migrations.length;
  return storage.transactionSync(() => {
    const current = threadSchemaVersion(storage);
    if (current > target) {
      throw new Error(`Thread storage is at schema ${current}, newer than this build (${target}).`);
    }
    for (const migration of migrations.slice(current)) {
      for (const statement of migration.up) storage.sql.exec(statement);
      migration.backfill?.(storage);
    }
    if (current !== target) {
      writeMeta(storage, SCHEMA_VERSION_KEY, String(target));
    }
    return target;
  });
}
