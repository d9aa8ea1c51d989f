// The erasure-by-subject contract (docs/privacy.md): the request body, the subject digest key, and the receipt and job shapes.
import { z } from "zod";

export const erasureScopeSchema = z.object({
  /** `subject`: the tenant erased it with `sk_`; `me`: the end user did, with their launch token. */
  kind: z.enum(["subject", "me"]),
  agentId: z.string().optional(),
});

/** A subject as private launches accept it (`POST /v1/agent-sessions`). */
export const MAX_SUBJECT_CHARS = 256;

const subjectDigestField = z
  .string()
  .describe(
    "base64url (unpadded) HMAC-SHA-256 of the subject's UTF-8 bytes under the tenant's key " +
      "(`GET /v1/subject-digest-key`): shows which subject the receipt covers without naming it. Absent only on " +
      "receipts issued before digests existed.",
  );

const receiptAttachmentsField = z
  .array(z.string().regex(/^[0-9a-f]{64}$/))
  .describe(
    "SHA-256 (lowercase hex) of every attachment object this erasure deleted from storage, sorted: the files of the " +
      "erased threads that no other live thread of the tenant still used (docs/privacy.md#attachments). A file " +
      "another live thread still uses is not deleted and not listed; the erased threads no longer name it.",
  );

/** What a receipt's JWS payload holds: ids, a time and the subject's keyed digest, never the subject nor content. */
export const receiptPayloadSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  scope: erasureScopeSchema,
  threadIds: z.array(z.string()),
  erasedAt: z.iso.datetime(),
  subjectDigest: subjectDigestField.optional(),
  /** Absent only on receipts issued before attachments existed. */
  attachments: receiptAttachmentsField.optional(),
});

export const subjectField = z
  .string()
  .min(1)
  .max(MAX_SUBJECT_CHARS)
  .describe("The end user's id, as the private launch's `subject` (or a visitor's id).");

/** `POST /v1/subject-erasures`: the subject travels in the body, never in the URL (docs/privacy.md). */
export const subjectErasureRequest = z.strictObject({
  subject: subjectField,
  agentId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/)
    .optional()
    .describe("Erase only this agent's threads of the subject."),
});
export type SubjectErasureRequest = z.infer<typeof subjectErasureRequest>;

/** `GET /v1/subject-digest-key`: the tenant's key for checking a receipt's `subjectDigest`. */
export const subjectDigestKeyResponse = z.object({
  algorithm: z.literal("HMAC-SHA-256"),
  /** The raw 32-byte key, base64url (unpadded). */
  key: z.string(),
});
export type SubjectDigestKeyResponse = z.infer<typeof subjectDigestKeyResponse>;

/** 200: done, with the receipt (a compact JWS, EdDSA, verifiable with `/.well-known/jwks.json`). */
export const erasureCompleted = z.object({
  id: z.string(),
  status: z.literal("completed"),
  receipt: z.string(),
  scope: erasureScopeSchema,
  threadIds: z.array(z.string()),
  erasedAt: z.iso.datetime(),
  subjectDigest: subjectDigestField.optional(),
  attachments: receiptAttachmentsField,
});

/** 202: more threads than one call erases; repeat the same request to continue (same `id`). */
export const erasurePending = z.object({
  id: z.string(),
  status: z.literal("pending"),
  scope: erasureScopeSchema,
  remaining: z.number().int(),
});

export const erasureResponse = z.union([erasureCompleted, erasurePending]);
export type ErasureResponse = z.infer<typeof erasureResponse>;

export const jwksResponse = z.object({
  keys: z.array(
    z.object({
      kty: z.literal("OKP"),
      crv: z.literal("Ed25519"),
      x: z.string(),
      kid: z.string(),
      alg: z.string(),
    }),
  ),
});
