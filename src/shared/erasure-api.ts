// The erasure-by-subject contract (SPEC §12): the request query and the receipt and job shapes.
import { z } from "zod";

export const erasureScopeSchema = z.object({
  /** `subject`: the tenant erased it with `sk_`; `me`: the end user did, with their launch token. */
  kind: z.enum(["subject", "me"]),
  agentId: z.string().optional(),
});

/** What a receipt's JWS payload holds: ids and a time, never the subject nor any content. */
export const receiptPayloadSchema = z.object({
  id: z.string(),
  tenantId: z.string(),
  scope: erasureScopeSchema,
  threadIds: z.array(z.string()),
  erasedAt: z.iso.datetime(),
});

export const subjectErasureQuery = z.strictObject({
  agentId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/)
    .optional()
    .describe("Erase only this agent's threads of the subject."),
});

/** 200: done, with the receipt (a compact JWS, EdDSA, verifiable with `/.well-known/jwks.json`). */
export const erasureCompleted = z.object({
  id: z.string(),
  status: z.literal("completed"),
  receipt: z.string(),
  scope: erasureScopeSchema,
  threadIds: z.array(z.string()),
  erasedAt: z.iso.datetime(),
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
