// Uploads and downloads of a thread's attachments (docs/api.md, "Attachments"): the thread's rules, the bytes streamed
// into R2 while hashed, the tenant's storage claim, then the thread's record; and a download's stored object.
import { tenantQuota } from "../auth/tenant-quota";
import { attachmentTypeAllowed, threadHasRoom } from "../control/attachment-policy";
import { newId } from "../control/ids";
import { AppError, type Failure, failureError, type Result, unwrap } from "../errors";
import type { AttachmentRef } from "../shared/protocol";
import { commitUpload, discardUpload, openAttachment, stageUpload } from "../storage/attachments";
import { type ThreadClaims, type ThreadObject, threadStub } from "../thread/contract";

/** The most characters an attachment's name may have once decoded. */
export const MAX_ATTACHMENT_NAME_CHARS = 255;
const DEFAULT_NAME = "attachment";
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** `X-Attachment-Name`: percent-encoded UTF-8, at most 255 characters, no control characters; default "attachment". */
export function attachmentName(header: string | undefined): string {
  if (header === undefined || header.trim() === "") return DEFAULT_NAME;
  let name: string;
  try {
    name = decodeURIComponent(header.trim());
  } catch {
    throw new AppError("bad_request", "X-Attachment-Name must be percent-encoded UTF-8.");
  }
  if (name.length === 0) return DEFAULT_NAME;
  if ([...name].length > MAX_ATTACHMENT_NAME_CHARS) {
    throw new AppError(
      "bad_request",
      `X-Attachment-Name is limited to ${MAX_ATTACHMENT_NAME_CHARS} characters.`,
    );
  }
  if (CONTROL.test(name))
    throw new AppError("bad_request", "X-Attachment-Name may not hold control characters.");
  return name;
}

/** The media type of a `Content-Type` header without its parameters, lower case; null when there is none. */
export function mediaTypeOf(header: string | undefined): string | null {
  const essence = header?.split(";")[0]?.trim().toLowerCase() ?? "";
  return /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(essence) ? essence : null;
}

/** `Content-Length` as bytes; 400 naming it when it is missing or not a length (R2 needs the length up front). */
export function contentLength(header: string | undefined): number {
  if (header === undefined || !/^\d{1,16}$/.test(header.trim())) {
    throw new AppError(
      "bad_request",
      "Content-Length is required: send the file with its length (no chunked transfer encoding).",
    );
  }
  return Number(header.trim());
}

function refusedWith(failure: Failure): never {
  throw failureError(failure);
}

/**
 * One upload: the thread's rules first (429 past the visitor's budgets, 415 when attachments are off or the type is
 * not accepted, 413 when the declared length is over `maxBytes`, 409 when the thread is full), all before a byte is
 * read; then the bytes, streamed (413 past `maxBytes`, 415 `type_mismatch`); then the tenant's storage claim (429
 * `storage_quota`); then the thread's record.
 */
export async function uploadAttachment(
  env: Env,
  input: {
    claims: ThreadClaims;
    stub: DurableObjectStub<ThreadObject>;
    body: ReadableStream<Uint8Array> | null;
    length: number;
    mediaType: string | null;
    name: string;
  },
): Promise<AttachmentRef> {
  const { claims, stub } = input;
  const { policy, count } = unwrap(await stub.startUpload(claims));
  const mediaType = input.mediaType ?? "application/octet-stream";
  const allowed = attachmentTypeAllowed(policy, mediaType);
  if (!allowed.ok) refusedWith(allowed);
  if (policy === null) throw new AppError("internal", "No attachment policy.");
  if (input.length > policy.maxBytes) {
    throw new AppError("payload_too_large", `The file is larger than ${policy.maxBytes} bytes.`);
  }
  const room = threadHasRoom(policy, count);
  if (!room.ok) refusedWith(room);
  if (input.body === null || input.length === 0) throw new AppError("bad_request", "The file is empty.");

  const staged = unwrap(
    await stageUpload(env.ATTACHMENTS, {
      tenantId: claims.tenantId,
      body: input.body,
      length: input.length,
      maxBytes: policy.maxBytes,
      mediaType,
    }),
  );
  const claim = await tenantQuota(env, claims.tenantId).claimAttachment({
    threadId: claims.threadId,
    sha256: staged.sha256,
    size: staged.size,
  });
  if (!claim.ok) {
    await discardUpload(env.ATTACHMENTS, staged);
    throw new AppError("quota_exceeded", "This account's attachment storage is full.", {
      reason: "storage_quota",
      details: { usedBytes: claim.usedBytes, limitBytes: claim.limitBytes },
    });
  }
  await commitUpload(env.ATTACHMENTS, claims.tenantId, staged);
  const ref: AttachmentRef = {
    id: newId("att"),
    sha256: staged.sha256,
    mediaType,
    size: staged.size,
    name: input.name,
  };
  return recordUpload(env, claims, stub, ref);
}

/**
 * The thread's record of a stored upload. A thread erased while its upload streamed refuses it — its tombstone answers
 * 401, or the call fails because the erasure reset the object under it — and then the claim just taken is given back,
 * so the bytes go unless another live thread uses them: an erasure never leaves a late upload behind
 * (docs/privacy.md#attachments). A call that failed otherwise is settled by asking the thread whether it holds the
 * file; other refusals leave the claim to the thread's own erasure or retention.
 */
async function recordUpload(
  env: Env,
  claims: ThreadClaims,
  stub: DurableObjectStub<ThreadObject>,
  ref: AttachmentRef,
): Promise<AttachmentRef> {
  let added: Result<AttachmentRef>;
  try {
    added = await stub.addAttachment(claims, ref);
  } catch (cause) {
    const fresh = await threadStub(env, claims);
    let held: Result<AttachmentRef | null>;
    try {
      held = await fresh.attachmentOf(claims, ref.id);
    } catch {
      throw new AppError("upstream_unavailable", "The upload could not be recorded; try again.", { cause });
    }
    if (held.ok) {
      if (held.value !== null) return held.value;
      throw new AppError("upstream_unavailable", "The upload could not be recorded; try again.", { cause });
    }
    added = held;
  }
  if (!added.ok && (added.code === "unauthenticated" || added.code === "not_found")) {
    await tenantQuota(env, claims.tenantId).releaseThreadAttachments(claims.threadId, [ref.sha256]);
  }
  return unwrap(added);
}

/** RFC 5987 `filename*` value: UTF-8, percent-encoded. */
function encodedFilename(name: string): string {
  return encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The download of one stored attachment: its bytes as stored, never rendered as a page (`nosniff`, a sandbox CSP,
 * `Content-Disposition: attachment` except for images, which display inline); null when the object is gone.
 */
export async function attachmentResponse(
  env: Env,
  tenantId: string,
  ref: AttachmentRef | null,
): Promise<Response | null> {
  if (ref === null) return null;
  const object = await openAttachment(env.ATTACHMENTS, tenantId, ref.sha256);
  if (object === null) return null;
  const disposition = ref.mediaType.startsWith("image/") ? "inline" : "attachment";
  return new Response(object.body, {
    status: 200,
    headers: {
      "Content-Type": ref.mediaType,
      "Content-Length": String(object.size),
      "Content-Disposition": `${disposition}; filename*=UTF-8''${encodedFilename(ref.name)}`,
      "X-Content-Type-Options": "nosniff",
      "Content-Security-Policy": "sandbox",
      "Cache-Control": "private, max-age=300",
      ETag: `"${ref.sha256}"`,
    },
  });
}
