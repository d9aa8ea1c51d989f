// An upload's bytes on their way into R2 (docs/api.md, "Attachments"): streamed through a byte counter and a SHA-256
// digest into a staging object, never buffered whole, then copied to the tenant's key for that digest.
import { type ErrorReason, type Failure, ok, type Result } from "../../errors";
import { toHex } from "../../shared/hex";
import { attachmentKey, uploadKey } from "./bucket";

/** Bytes the signature check needs from the start of a file (the longest, WebP's, ends at byte 12). */
const SIGNATURE_BYTES = 12;

const ascii = (text: string) => Array.from(text, (c) => c.charCodeAt(0));
/** Leading bytes per media type; a type not listed has no signature to check (text/plain). */
const SIGNATURES: Record<string, (head: Uint8Array) => boolean> = {
  "image/png": (h) => startsWith(h, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  "image/jpeg": (h) => startsWith(h, [0xff, 0xd8, 0xff]),
  "image/gif": (h) => startsWith(h, ascii("GIF87a")) || startsWith(h, ascii("GIF89a")),
  "image/webp": (h) => startsWith(h, ascii("RIFF")) && startsWith(h.subarray(8), ascii("WEBP")),
  "application/pdf": (h) => startsWith(h, ascii("%PDF-")),
};

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);
}

/** Whether the first bytes of a file fit its declared media type (true for types without a signature). */
export function signatureMatches(mediaType: string, head: Uint8Array): boolean {
  const check = SIGNATURES[mediaType];
  return check === undefined || check(head);
}

function refused(code: Failure["code"], reason: ErrorReason | undefined, message: string): Failure {
  return reason === undefined ? { ok: false, code, message } : { ok: false, code, reason, message };
}

export interface StagedUpload {
  stagingKey: string;
  sha256: string;
  size: number;
}

/**
 * Streams `body` (exactly `length` bytes, as its Content-Length says) into a staging object while hashing it: 413
 * past `maxBytes`, 415 `type_mismatch` when the first bytes do not fit `mediaType`, 400 when the body is shorter or
 * longer than its length. Nothing is left in the bucket on a refusal.
 */
export async function stageUpload(
  bucket: R2Bucket,
  input: {
    tenantId: string;
    body: ReadableStream<Uint8Array>;
    length: number;
    maxBytes: number;
    mediaType: string;
  },
): Promise<Result<StagedUpload>> {
  const { body, length, maxBytes, mediaType } = input;
  const reader = body.getReader();
  // Peek: the first chunks up to the signature's length, kept to be written first.
  const head: Uint8Array[] = [];
  let peeked = 0;
  while (peeked < SIGNATURE_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    head.push(value);
    peeked += value.byteLength;
  }
  const start = new Uint8Array(Math.min(peeked, SIGNATURE_BYTES));
  let at = 0;
  for (const chunk of head) {
    if (at >= start.length) break;
    const part = chunk.subarray(0, start.length - at);
    start.set(part, at);
    at += part.byteLength;
  }
  if (!signatureMatches(mediaType, start)) {
    await reader.cancel().catch(() => {});
    return refused(
      "unsupported_media_type",
      "type_mismatch",
      `The file's bytes are not ${mediaType} (its signature does not match the Content-Type).`,
    );
  }

  const stagingKey = uploadKey(input.tenantId, crypto.randomUUID());
  const digest = new crypto.DigestStream("SHA-256");
  const digestWriter = digest.getWriter();
  // Settled by the close below; an abandoned upload must not leave it rejected and unheard.
  const digested = digest.digest;
  digested.catch(() => {});
  const fixed = new FixedLengthStream(length);
  const stored = bucket.put(stagingKey, fixed.readable).then(
    () => null,
    (error: unknown) => error,
  );
  const writer = fixed.writable.getWriter();
  let counted = 0;
  let refusal: Failure | null = null;
  const write = async (chunk: Uint8Array): Promise<boolean> => {
    counted += chunk.byteLength;
    if (counted > maxBytes) {
      refusal = refused("payload_too_large", undefined, `The file is larger than ${maxBytes} bytes.`);
      return false;
    }
    if (counted > length) {
      refusal = refused("bad_request", undefined, "The body is longer than its Content-Length.");
      return false;
    }
    await digestWriter.write(chunk);
    await writer.write(chunk);
    return true;
  };
  try {
    let going = true;
    for (const chunk of head) {
      going = await write(chunk);
      if (!going) break;
    }
    while (going) {
      const { done, value } = await reader.read();
      if (done) break;
      going = await write(value);
    }
    if (refusal === null && counted < length) {
      refusal = refused("bad_request", undefined, "The body is shorter than its Content-Length.");
    }
  } catch (error) {
    await writer.abort(error).catch(() => {});
    await digestWriter.abort(error).catch(() => {});
    await reader.cancel().catch(() => {});
    await stored;
    await bucket.delete(stagingKey);
    throw error;
  }
  if (refusal !== null) {
    await reader.cancel().catch(() => {});
    await writer.abort(new Error("upload refused")).catch(() => {});
    await digestWriter.abort().catch(() => {});
    await stored;
    await bucket.delete(stagingKey);
    return refusal;
  }
  await writer.close();
  await digestWriter.close();
  const failed = await stored;
  if (failed !== null) throw failed;
  const sha256 = toHex(new Uint8Array(await digested));
  return ok({ stagingKey, sha256, size: counted });
}

/**
 * Moves a staged upload to the tenant's key for its digest, unless that object is already there (the same bytes
 * uploaded before, by any thread of the tenant), then deletes the staging object.
 */
export async function commitUpload(bucket: R2Bucket, tenantId: string, staged: StagedUpload): Promise<void> {
  const key = attachmentKey(tenantId, staged.sha256);
  if ((await bucket.head(key)) === null) {
    const object = await bucket.get(staged.stagingKey);
    if (object === null) throw new Error("The staged upload is gone.");
    const fixed = new FixedLengthStream(staged.size);
    const copied = object.body.pipeTo(fixed.writable);
    // R2 checks the bytes against the digest computed while streaming.
    await bucket.put(key, fixed.readable, { sha256: staged.sha256 });
    await copied;
  }
  await bucket.delete(staged.stagingKey);
}

/** Drops a staged upload that will not be kept (a refused quota claim). */
export async function discardUpload(bucket: R2Bucket, staged: StagedUpload): Promise<void> {
  await bucket.delete(staged.stagingKey);
}
