// A thread's attachments as the conversation sees them (docs/api.md, "Attachments"): the rules its current version
// sets, the uploads it holds, and the per-message and per-thread counts.
import { type AttachmentPolicy, attachmentPolicyOf } from "../../control/artifact";
import { attachmentTypeAllowed, threadHasRoom } from "../../control/attachment-policy";
import { fail, ok, type Result } from "../../errors";
import { type AttachmentRef, attachmentRef } from "../../shared/protocol";
import {
  countAttachments,
  countAttachmentsSince,
  findAttachment,
  insertAttachment,
  listAttachments,
} from "../../storage/thread/attachment-store";
import type { ThreadRuntime } from "./thread-runtime";

/** The thread's current version's attachment rules (null: attachments are off) and how many files it holds. */
export function attachmentRules(
  storage: DurableObjectStorage,
  runtime: ThreadRuntime,
): { policy: AttachmentPolicy | null; count: number } {
  return { policy: attachmentPolicyOf(runtime.current().artifact), count: countAttachments(storage) };
}

/**
 * An upload about to start: the rules, once the thread's per-minute budget of sends allows one more (the minute's
 * sends and uploads together count against `limits.maxSendsPerMinute`).
 */
export function admitUpload(
  storage: DurableObjectStorage,
  runtime: ThreadRuntime,
  now: number,
): Result<{ policy: AttachmentPolicy | null; count: number }> {
  const since = now - 60_000;
  const limit = runtime.limits.sendsPerMinute;
  // The minute's sends (one run each) and uploads together.
  if (countAttachmentsSince(storage, since) + runtime.runs.countCreatedAfter(since, limit + 1) >= limit) {
    return { ok: false, code: "rate_limited", message: "Too many uploads; slow down.", retryAfter: 60 };
  }
  return ok(attachmentRules(storage, runtime));
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
