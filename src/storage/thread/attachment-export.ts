// The thread's attachment rows a page at a time, oldest first, for the export (docs/privacy.md#attachments): metadata
// only, as the thread holds it; the bytes stay in the tenant's object storage.

export interface AttachmentRow {
  id: string;
  sha256: string;
  mediaType: string;
  size: number;
  name: string;
  createdAt: number;
}

/** Up to `limit` attachments after `after` in (created_at, id) order. */
export function attachmentsPage(
  storage: DurableObjectStorage,
  after: { createdAt: number; id: string } | null,
  limit: number,
): AttachmentRow[] {
  const rows = storage.sql
    .exec(
      `SELECT id, sha256, media_type, size, name, created_at FROM attachments
       WHERE created_at > ? OR (created_at = ? AND id > ?)
       ORDER BY created_at, id LIMIT ?`,
      after?.createdAt ?? Number.MIN_SAFE_INTEGER,
      after?.createdAt ?? Number.MIN_SAFE_INTEGER,
      after?.id ?? "",
      limit,
    )
    .toArray();
  return rows.map((row) => ({
    id: String(row.id),
    sha256: String(row.sha256),
    mediaType: String(row.media_type),
    size: Number(row.size),
    name: String(row.name),
    createdAt: Number(row.created_at),
  }));
}
