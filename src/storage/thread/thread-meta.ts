// The thread's `meta` key/value table (schema version, active leaf, projection and retention marks), read and
// written one way by every module that keeps a fact there.

/** The selected leaf of the thread's tree (read by the entry store, cleared by retention when it deletes it). */
export const ACTIVE_LEAF_KEY = "active_leaf";

/** The stored text of `key`, or null when it is not set. */
export function readMeta(storage: DurableObjectStorage, key: string): string | null {
  const row = storage.sql.exec("SELECT value FROM meta WHERE key = ?", key).toArray()[0];
  return row === undefined ? null : String(row.value);
}

/** `key` as a safe integer; null when it is not set or does not hold one. */
export function readMetaInteger(storage: DurableObjectStorage, key: string): number | null {
  const text = readMeta(storage, key);
  if (text === null) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
}

/**
 * Several keys in one statement (each call into SQLite has a fixed cost, docs/decisions.md "Statements per turn"):
 * the stored text of each key that is set.
 */
export function readMetaKeys(storage: DurableObjectStorage, keys: readonly string[]): Map<string, string> {
  const values = new Map<string, string>();
  const rows = storage.sql
    .exec("SELECT key, value FROM meta WHERE key IN (SELECT value FROM json_each(?))", JSON.stringify(keys))
    .raw();
  for (const [key, value] of rows) values.set(String(key), String(value));
  return values;
}

/** A value read by `readMetaKeys` as a safe integer; null when it is not set or does not hold one. */
export function metaInteger(values: ReadonlyMap<string, string>, key: string): number | null {
  const text = values.get(key);
  if (text === undefined) return null;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : null;
}

export function writeMeta(storage: DurableObjectStorage, key: string, value: string): void {
  storage.sql.exec(
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    key,
    value,
  );
}

/** Sets `key` to `value` only when it is set; an unset key stays unset. */
export function updateMeta(storage: DurableObjectStorage, key: string, value: string): void {
  storage.sql.exec("UPDATE meta SET value = ? WHERE key = ?", value, key);
}

/** Sets `key` to `value` only while it still holds `expected`; an unset key stays unset. */
export function replaceMeta(
  storage: DurableObjectStorage,
  key: string,
  expected: string,
  value: string,
): void {
  storage.sql.exec("UPDATE meta SET value = ? WHERE key = ? AND value = ?", value, key, expected);
}

export function deleteMeta(storage: DurableObjectStorage, ...keys: string[]): void {
  for (const key of keys) storage.sql.exec("DELETE FROM meta WHERE key = ?", key);
}
