// A thread's attachments as the conversation sees them (docs/api.md, "Attachments"): the rules its current version
// sets, the uploads it holds, and the per-message and per-thread counts.
import { type AttachmentPolicy, attachmentPolicyOf } from "../../control/artifact";
import { type ErrorReason, type Failure, fail, ok, type Result } from "../../errors";
import { type AttachmentRef, attachmentRef } from "../../shared/protocol";
import {
  countAttachments,
  findAttachment,
  insertAttachment,
  listAttachments,
} from "../../storage/thread/attachment-store";
import type { ThreadRuntime } from "./thread-runtime";

function refused(code: Failure["code"], reason: ErrorReason, message: string): Failure {
  return { ok: false, code, reason, message };
}

/** The thread's current version's attachment rules (null: attachments are off) and how many files it holds. */
export function attachmentRules(
  storage: DurableObjectStorage,
  runtime: ThreadRuntime,
): { policy: AttachmentPolicy | null; count: number } {
  return { policy: attachmentPolicyOf(runtime.current().artifact), count: countAttachments(storage) };
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

/** Records an upload whose bytes are stored; the type and the per-thread count are checked again here. */
export function addAttachment(
  storage: DurableObjectStorage,
  runtime: ThreadRuntime,
  ref: unknown,
  now: number,
): Result<AttachmentRef> {
  const parsed = attachmentRef.safeParse(ref);
  if (!parsed.success) return { ok: false, code: "bad_request", message: "The attachment is invalid." };
  const { policy, count } = attachmentRules(storage, runtime);
  const allowed = attachmentTypeAllowed(policy, parsed.data.mediaType);
  if (!allowed.ok || policy === null) return allowed.ok ? fail("internal", "No attachment policy.") : allowed;
  const room = threadHasRoom(policy, count);
  if (!room.ok) return room;
  insertAttachment(storage, parsed.data, now);
  return ok(parsed.data);
}

export { findAttachment, listAttachments };
