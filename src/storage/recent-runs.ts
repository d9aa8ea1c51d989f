// The send rate limit's one read of the thread's `runs` table: how many of the newest runs started after a time.

/**
 * Runs created after `since` among the newest `cap` runs: every send, edit and regenerate starts one run, and runs
 * are inserted in time order, so rowid is recency and the count never scans more than `cap` rows.
 */
export function runsCreatedSince(storage: DurableObjectStorage, since: number, cap: number): number {
  const row = storage.sql
    .exec(
      "SELECT COUNT(*) AS n FROM (SELECT created_at FROM runs ORDER BY rowid DESC LIMIT ?) WHERE created_at > ?",
      cap,
      since,
    )
    .one();
  return Number(row.n);
}
