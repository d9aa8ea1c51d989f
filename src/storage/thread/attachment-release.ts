// Attachments a thread stops holding (docs/privacy.md#attachments): retention and the zero-retention purge delete the
// thread's rows in their own transaction and remember the SHA-256s here, and the thread then tells the tenant's ledger,
// which deletes the objects no other live thread uses. The list survives a failed call, so the release is retried.

/** Meta key: a JSON array of SHA-256s whose rows this thread deleted and the ledger has not yet released. */
const PENDING = "attachments_release_pending";

const shaList = (rows: Record<string, SqlStorageValue>[]): string[] => rows.map((r) => String(r.sha256));

/** The ids of the attachments these entries' messages carry. */
export function attachmentIdsOfEntries(storage: DurableObjectStorage, entryIdsJson: string): string[] {
  return storage.sql
    .exec(
      `SELECT DISTINCT json_extract(a.value, '$.id') AS id FROM entries e, json_each(e.attachments_json) a
       WHERE e.attachments_json IS NOT NULL AND e.id IN (SELECT value FROM json_each(?))`,
      entryIdsJson,
    )
    .toArray()
    .map((row) => String(row.id));
}

/**
 * After retention deleted entries (inside its transaction): deletes the attachment rows no remaining entry carries that
 * either a deleted entry carried or were uploaded before `cutoff` (files never sent, as old as the policy); returns how
 * many rows went. A file uploaded since and not yet sent stays for its message.
 */
export function dropRetainedAttachments(
  storage: DurableObjectStorage,
  carriedByDeleted: readonly string[],
  cutoff: number | null,
): number {
  const dropped = storage.sql
    .exec(
      `DELETE FROM attachments
       WHERE (id IN (SELECT value FROM json_each(?)) OR created_at < ?)
         AND id NOT IN (SELECT json_extract(a.value, '$.id') FROM entries e, json_each(e.attachments_json) a
                        WHERE e.attachments_json IS NOT NULL)
       RETURNING sha256`,
      JSON.stringify(carriedByDeleted),
      cutoff ?? Number.MIN_SAFE_INTEGER,
    )
    .toArray();
  addPending(storage, shaList(dropped));
  return dropped.length;
}

/** The zero-retention purge (inside its transaction): every attachment row goes, and messages stop naming files. */
export function dropAllAttachments(storage: DurableObjectStorage): number {
  storage.sql.exec("UPDATE entries SET attachments_json = NULL WHERE attachments_json IS NOT NULL");
  const dropped = storage.sql.exec("DELETE FROM attachments RETURNING sha256").toArray();
  addPending(storage, shaList(dropped));
  return dropped.length;
}

function readPending(storage: DurableObjectStorage): string[] {
  const row = storage.sql.exec("SELECT value FROM meta WHERE key = ?", PENDING).toArray()[0];
  if (row === undefined) return [];
  const parsed: unknown = JSON.parse(String(row.value));
  return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === "string") : [];
}

function writePending(storage: DurableObjectStorage, sha256s: readonly string[]): void {
  if (sha256s.length === 0) {
    storage.sql.exec("DELETE FROM meta WHERE key = ?", PENDING);
    return;
  }
  storage.sql.exec(
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    PENDING,
    JSON.stringify([...sha256s].sort()),
  );
}

function addPending(storage: DurableObjectStorage, sha256s: readonly string[]): void {
  if (sha256s.length === 0) return;
  writePending(storage, [...new Set([...readPending(storage), ...sha256s])]);
}

/**
 * What the ledger must release for this thread now: the remembered SHA-256s that no attachment row of the thread uses
 * (one uploaded again since is the thread's again, and stays claimed). Those still used leave the list at once.
 */
export function attachmentsToRelease(storage: DurableObjectStorage): string[] {
  const pending = readPending(storage);
  if (pending.length === 0) return [];
  const used = new Set(
    shaList(
      storage.sql
        .exec(
          "SELECT DISTINCT sha256 FROM attachments WHERE sha256 IN (SELECT value FROM json_each(?))",
          JSON.stringify(pending),
        )
        .toArray(),
    ),
  );
  const release = pending.filter((sha256) => !used.has(sha256));
  if (release.length !== pending.length) writePending(storage, release);
  return release;
}

/** The ledger released these: they leave the list (anything added meanwhile stays). */
export function attachmentsReleased(storage: DurableObjectStorage, sha256s: readonly string[]): void {
  const done = new Set(sha256s);
  writePending(
    storage,
    readPending(storage).filter((sha256) => !done.has(sha256)),
  );
}
