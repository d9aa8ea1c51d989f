// How many rows SQLite read for the statements a piece of code ran on an object's storage (its `rowsRead` counters).

/** Runs `fn`, counting the rows read by every statement it runs on `storage`. */
export function rowsReadBy<T>(storage: DurableObjectStorage, fn: () => T): { value: T; rows: number } {
  const sql = storage.sql as { exec: SqlStorage["exec"] };
  const exec = sql.exec;
  const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
  sql.exec = ((query: string, ...bindings: unknown[]) => {
    const cursor = exec.call(storage.sql, query, ...bindings);
    cursors.push(cursor);
    return cursor;
  }) as SqlStorage["exec"];
  try {
    const value = fn();
    return { value, rows: cursors.reduce((n, c) => n + c.rowsRead, 0) };
  } finally {
    sql.exec = exec;
  }
}
