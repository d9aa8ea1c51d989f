// The attachment policy's checks shared by uploads and sends: accepted types, files per message, files per thread.
import { describe, expect, it } from "vitest";
import { type AttachmentPolicy, artifactSchema, attachmentPolicyOf } from "../../src/control/artifact";
import {
  attachmentTypeAllowed,
  messageAttachmentsAllowed,
  threadHasRoom,
} from "../../src/control/attachment-policy";

const policy: AttachmentPolicy = attachmentPolicyOf(
  artifactSchema.parse({
    schemaVersion: 1,
    name: "A",
    instructions: "x",
    model: { provider: "local", model: "echo" },
    attachments: { enabled: true, accept: ["image/png"], maxFiles: 2, maxPerThread: 3 },
  }),
)!;

describe("attachment policy checks", () => {
  it("accepts only the policy's types, and nothing when attachments are off", () => {
    expect(attachmentTypeAllowed(policy, "image/png").ok).toBe(true);
    expect(attachmentTypeAllowed(policy, "application/pdf")).toMatchObject({
      ok: false,
      code: "unsupported_media_type",
      reason: "type_not_accepted",
    });
    expect(attachmentTypeAllowed(null, "image/png")).toMatchObject({ reason: "type_not_accepted" });
  });

  it("limits files per message and per thread with 409 attachment_limit", () => {
    expect(messageAttachmentsAllowed(policy, ["att_a", "att_b"]).ok).toBe(true);
    expect(messageAttachmentsAllowed(policy, ["att_a", "att_b", "att_c"])).toMatchObject({
      ok: false,
      code: "conflict",
      reason: "attachment_limit",
    });
    expect(messageAttachmentsAllowed(null, []).ok).toBe(true);
    expect(messageAttachmentsAllowed(null, ["att_a"])).toMatchObject({ reason: "type_not_accepted" });
    expect(threadHasRoom(policy, 2).ok).toBe(true);
    expect(threadHasRoom(policy, 3)).toMatchObject({ code: "conflict", reason: "attachment_limit" });
  });
});
