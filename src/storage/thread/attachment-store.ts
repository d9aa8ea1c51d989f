// The thread's attachments in its SQLite (docs/api.md, "Attachments"): what each upload names — id, SHA-256, media
// type, size, name. The bytes are in R2 under the tenant and the SHA-256, never in this database.
import { z } from "zod";
import { type AttachmentRef, attachmentRef } from "../../shared/protocol";

const attachmentRow = z.object({
  id: z.string(),
  sha256: z.string(),
  media_type: z.string(),
  size: z.number().int(),
  name: z.string(),
});

const COLUMNS = "id, sha256, media_type, size, name";

function fromRow(row: unknown): AttachmentRef {
  const r = attachmentRow.parse(row);
  return attachmentRef.parse({
    id: r.id,
    sha256: r.sha256,
    mediaType: r.media_type,
    size: r.size,
    name: r.name,
  });
}

export function insertAttachment(storage: DurableObjectStorage, ref: AttachmentRef, at: number): void {
  storage.sql.exec(
    `INSERT INTO attachments (${COLUMNS}, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
    ref.id,
    ref.sha256,
    ref.mediaType,
    ref.size,
    ref.name,
    at,
  );
}

export function countAttachments(storage: DurableObjectStorage): number {
  return z.number().int().parse(storage.sql.exec("SELECT COUNT(*) AS n FROM attachments").one().n);
}

/** Uploads since `since` (epoch ms): the per-minute budget they share with sends. */
export function countAttachmentsSince(storage: DurableObjectStorage, since: number): number {
  return z
    .number()
    .int()
    .parse(storage.sql.exec("SELECT COUNT(*) AS n FROM attachments WHERE created_at > ?", since).one().n);
}

export function findAttachment(storage: DurableObjectStorage, id: string): AttachmentRef | null {
  const row = storage.sql.exec(`SELECT ${COLUMNS} FROM attachments WHERE id = ?`, id).toArray()[0];
  return row === undefined ? null : fromRow(row);
}

/** Every attachment of the thread, oldest first. */
export function listAttachments(storage: DurableObjectStorage): AttachmentRef[] {
  return storage.sql
    .exec(`SELECT ${COLUMNS} FROM attachments ORDER BY created_at, id`)
    .toArray()
    .map(fromRow);
}
