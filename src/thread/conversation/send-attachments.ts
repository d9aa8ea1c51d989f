// A send's attachment ids checked against the thread's uploads and the agent's policy, before anything is stored.
import { type Artifact, attachmentPolicyOf } from "../../control/artifact";
import { messageAttachmentsAllowed } from "../../control/attachment-policy";
import { fail, ok, type Result } from "../../errors";
import type { AttachmentRef } from "../../shared/protocol";
import { findAttachment } from "../../storage/thread/attachment-store";
import type { TurnRequest } from "../run";

/**
 * The request with its `attachmentIds` resolved to refs (docs/protocol.md#attachments): refused with nothing stored
 * when the agent takes no attachments (415), when it names more than the policy's `maxFiles` (409
 * `attachment_limit`), or when an id is not an upload of this thread (404: another thread's or tenant's ids look
 * exactly like unknown ones). A repeated id counts once. Other turns pass through without reading anything: the
 * artifact is asked for only when the send names files (a plain send's statements are counted, docs/scaling.md#what-one-turn-costs-measured).
 */
export function resolveAttachments(
  storage: DurableObjectStorage,
  request: TurnRequest,
  artifact: () => Pick<Artifact, "attachments">,
): Result<TurnRequest> {
  if (request.kind !== "send" || request.attachmentIds === undefined) return ok(request);
  const { attachmentIds, ...rest } = request;
  const ids = [...new Set(attachmentIds)];
  const allowed = messageAttachmentsAllowed(attachmentPolicyOf(artifact()), ids);
  if (!allowed.ok) return allowed;
  const attachments: AttachmentRef[] = [];
  for (const id of ids) {
    const ref = findAttachment(storage, id);
    if (ref === null) return fail("not_found", `Attachment ${id} was not uploaded to this thread.`);
    attachments.push(ref);
  }
  return ok({ ...rest, attachments });
}
