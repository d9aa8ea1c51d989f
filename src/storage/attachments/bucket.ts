// The attachments bucket's keys and reads (docs/api.md, "Attachments"): the only module besides the upload that
// touches R2. One object per tenant and content, `attachments/<tenantId>/<sha256>`; never shared across tenants.

const PREFIX = "attachments/";

/** Where a tenant's bytes with this SHA-256 live. */
export function attachmentKey(tenantId: string, sha256: string): string {
  return `${PREFIX}${tenantId}/${sha256}`;
}

/** Where an upload streams while it is hashed, before its SHA-256 (and so its final key) is known. */
export function uploadKey(tenantId: string, uploadId: string): string {
  return `uploads/${tenantId}/${uploadId}`;
}

/** The whole object (model input, the audit rebuild); null when there is none. */
export async function readAttachmentBytes(
  bucket: R2Bucket,
  tenantId: string,
  sha256: string,
): Promise<Uint8Array | null> {
  const object = await bucket.get(attachmentKey(tenantId, sha256));
  if (object === null) return null;
  return new Uint8Array(await object.arrayBuffer());
}

/** The object as a stream (downloads); null when there is none. */
export function openAttachment(
  bucket: R2Bucket,
  tenantId: string,
  sha256: string,
): Promise<R2ObjectBody | null> {
  return bucket.get(attachmentKey(tenantId, sha256));
}

/** Deletes the tenant's objects of these SHA-256s; a missing one is no error. */
export async function deleteAttachmentObjects(
  bucket: R2Bucket,
  tenantId: string,
  sha256s: readonly string[],
): Promise<void> {
  // R2 deletes at most 1000 keys per call.
  for (let i = 0; i < sha256s.length; i += 1000) {
    const keys = sha256s.slice(i, i + 1000).map((sha256) => attachmentKey(tenantId, sha256));
    if (keys.length > 0) await bucket.delete(keys);
  }
}

/** Every attachment key of one tenant, or of all tenants (the erasure scan): `attachments/<tenantId>/<sha256>`. */
export async function listTenantAttachmentKeys(bucket: R2Bucket, tenantId?: string): Promise<string[]> {
  const prefix = tenantId === undefined ? PREFIX : `${PREFIX}${tenantId}/`;
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, ...(cursor !== undefined ? { cursor } : {}) });
    for (const object of page.objects) keys.push(object.key);
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor !== undefined);
  return keys;
}

/** Whether the bucket is bound and answers (GET /v1/ready): a HEAD of a key that never exists. */
export async function attachmentsBucketAnswers(bucket: R2Bucket | undefined): Promise<boolean> {
  if (bucket === undefined || bucket === null) return false;
  try {
    await bucket.head("ready-probe");
    return true;
  } catch {
    return false;
  }
}
