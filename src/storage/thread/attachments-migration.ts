// Thread schema 20: attachments (docs/api.md, "Attachments") — the thread's uploads as metadata only (the bytes live in
// R2, never here) and the refs a user entry carries. Typed where it joins the list (`THREAD_MIGRATIONS`).
export const ATTACHMENTS_MIGRATION = {
  version: 20,
  up: [
    // One row per upload to this thread: what a ref names. `sha256` keys the tenant's R2 object; no byte is stored.
    `CREATE TABLE attachments (
        id TEXT PRIMARY KEY,
        sha256 TEXT NOT NULL,
        media_type TEXT NOT NULL,
        size INTEGER NOT NULL,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL
      ) WITHOUT ROWID`,
    // The refs of a user message (a JSON array of {id, sha256, mediaType, size, name}); NULL when it has none.
    `ALTER TABLE entries ADD COLUMN attachments_json TEXT`,
  ],
};
