// The tenant's attachment ledger in its TenantQuota object (docs/api.md, "Attachments"): one row per R2 object (by
// SHA-256) and one per thread referencing it, so an object is deleted only when no thread of the tenant needs it,
// and the count survives restarts. Sizes only; never a byte of the files.
import { z } from "zod";

export function createAttachmentLedger(sql: SqlStorage): void {
  sql.exec(
    `CREATE TABLE IF NOT EXISTS attachment_objects (
       sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID`,
  );
  sql.exec(
    `CREATE TABLE IF NOT EXISTS attachment_refs (
       sha256 TEXT NOT NULL, thread_id TEXT NOT NULL, PRIMARY KEY (sha256, thread_id)) WITHOUT ROWID`,
  );
  sql.exec("CREATE INDEX IF NOT EXISTS attachment_refs_thread ON attachment_refs (thread_id)");
}

const storageRow = z.object({ bytes: z.number().int(), objects: z.number().int() });

/** Bytes and count of the tenant's distinct objects. */
export function attachmentStorageUsed(sql: SqlStorage): { bytes: number; objects: number } {
  return storageRow.parse(
    sql
      .exec("SELECT COALESCE(SUM(size), 0) AS bytes, COUNT(*) AS objects FROM attachment_objects")
      .toArray()[0],
  );
}

export function attachmentObjectExists(sql: SqlStorage, sha256: string): boolean {
  return sql.exec("SELECT 1 FROM attachment_objects WHERE sha256 = ?", sha256).toArray().length > 0;
}

/** Records the object (if new) and the thread's reference to it. */
export function insertAttachmentRef(
  sql: SqlStorage,
  ref: { sha256: string; size: number; threadId: string; at: number },
): void {
  sql.exec(
    "INSERT INTO attachment_objects (sha256, size, created_at) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING",
    ref.sha256,
    ref.size,
    ref.at,
  );
  sql.exec(
    "INSERT INTO attachment_refs (sha256, thread_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
    ref.sha256,
    ref.threadId,
  );
}

const shaRow = z.object({ sha256: z.string() });

/**
 * Removes the thread's references (all, or only those to `only`'s SHA-256s); returns the objects no thread references
 * any more (still in the ledger).
 */
export function dropThreadRefs(sql: SqlStorage, threadId: string, only?: readonly string[]): string[] {
  if (only === undefined) sql.exec("DELETE FROM attachment_refs WHERE thread_id = ?", threadId);
  else
    sql.exec(
      "DELETE FROM attachment_refs WHERE thread_id = ? AND sha256 IN (SELECT value FROM json_each(?))",
      threadId,
      JSON.stringify(only),
    );
  return unreferencedObjects(sql);
}

/** Objects in the ledger that no thread references (left by a release that stopped before deleting them). */
export function unreferencedObjects(sql: SqlStorage): string[] {
  return sql
    .exec(
      `SELECT o.sha256 FROM attachment_objects o
       WHERE NOT EXISTS (SELECT 1 FROM attachment_refs r WHERE r.sha256 = o.sha256) ORDER BY o.sha256`,
    )
    .toArray()
    .map((row) => shaRow.parse(row).sha256);
}

/** Forgets objects whose bytes were deleted, unless a thread referenced one again meanwhile. */
export function deleteAttachmentObjectRows(sql: SqlStorage, sha256s: readonly string[]): string[] {
  const deleted: string[] = [];
  for (const sha256 of sha256s) {
    const cursor = sql.exec(
      `DELETE FROM attachment_objects WHERE sha256 = ?1
       AND NOT EXISTS (SELECT 1 FROM attachment_refs WHERE sha256 = ?1)`,
      sha256,
    );
    cursor.toArray();
    if (cursor.rowsWritten > 0) deleted.push(sha256);
  }
  return deleted;
}
