// The checks an artifact's attachment policy makes (docs/api.md, "Attachments"): the media type, the per-thread and
// per-message counts. Pure, so the upload route, the thread object and the send path share them.
import type { ErrorReason, Failure, Result } from "../errors";
import { ok } from "../errors";
import type { AttachmentPolicy } from "./artifact";

function refused(code: Failure["code"], reason: ErrorReason, message: string): Failure {
  return { ok: false, code, reason, message };
}

/** 415 `type_not_accepted` unless the policy is on and takes `mediaType`. */
export function attachmentTypeAllowed(policy: AttachmentPolicy | null, mediaType: string): Result<null> {
  if (policy === null) {
    return refused("unsupported_media_type", "type_not_accepted", "Attachments are off for this agent.");
  }
  if (!policy.accept.includes(mediaType)) {
    return refused(
      "unsupported_media_type",
      "type_not_accepted",
      `This agent does not accept ${mediaType}; it accepts ${policy.accept.join(", ")}.`,
    );
  }
  return ok(null);
}

/** 409 `attachment_limit` when the thread already holds `maxPerThread` files. */
export function threadHasRoom(policy: AttachmentPolicy, count: number): Result<null> {
  return count >= policy.maxPerThread
    ? refused(
        "conflict",
        "attachment_limit",
        `This conversation already holds ${policy.maxPerThread} attachments, the most it may.`,
      )
    : ok(null);
}

/** A message's attachments (at send): 409 `attachment_limit` past `maxFiles`, 415 when attachments are off. */
export function messageAttachmentsAllowed(
  policy: AttachmentPolicy | null,
  ids: readonly string[],
): Result<null> {
  if (ids.length === 0) return ok(null);
  if (policy === null) {
    return refused("unsupported_media_type", "type_not_accepted", "Attachments are off for this agent.");
  }
  return ids.length > policy.maxFiles
    ? refused(
        "conflict",
        "attachment_limit",
        `A message may carry at most ${policy.maxFiles} attachments (it has ${ids.length}).`,
      )
    : ok(null);
}
