// Verified claims as the Worker hands them to a thread object, in a header only the Worker can set.
import { z } from "zod";
import type { LaunchClaims } from "../../auth/launch-token";
import { environmentSchema } from "../../shared/api";

export const CLAIMS_HEADER = "X-Agent-Threads-Claims";

const claimsObject = z.strictObject({
  tenantId: z.string().min(1),
  environment: environmentSchema,
  agentId: z.string().min(1),
  threadId: z.string().min(1),
  sub: z.string().min(1),
  subjectKind: z.enum(["visitor", "user"]),
  /** The registry's context version the launch issued this token at; absent while the thread has none. */
  contextVersion: z.number().int().positive().optional(),
  /** The page origin the token was issued for, if any: a token refreshed on the socket keeps it. */
  origin: z.string().max(2048).optional(),
  /** The `sk_` key a private launch was minted with: the socket lives only while that key is not revoked. */
  apiKeyId: z.string().min(1).max(256).optional(),
  /** The launch that minted the thread proves its owner with it (src/auth/owner-proof.ts); checked, never trusted. */
  ownerProof: z.string().min(1).max(64).optional(),
});

/**
 * Sockets that hibernated under an earlier build keep claims that spell the agent `agentEntityId` in their
 * attachment; they are read as `agentId`, so a deploy does not close them.
 */
function renamedAgentKey(value: unknown): unknown {
  if (value === null || typeof value !== "object" || !("agentEntityId" in value) || "agentId" in value)
    return value;
  const { agentEntityId, ...rest } = value as Record<string, unknown>;
  return { ...rest, agentId: agentEntityId };
}

export const threadClaimsSchema = z.preprocess(renamedAgentKey, claimsObject);

export type ThreadClaims = z.infer<typeof claimsObject>;

/** Which thread, without a subject: what the tenant admin API and the retention job name a thread object by. */
export const threadAddressSchema = claimsObject.pick({
  tenantId: true,
  environment: true,
  agentId: true,
  threadId: true,
});

export type ThreadAddress = z.infer<typeof threadAddressSchema>;

export function threadClaimsFrom(claims: LaunchClaims): ThreadClaims {
  return {
    tenantId: claims.tenantId,
    environment: claims.environment,
    agentId: claims.agentId,
    threadId: claims.threadId,
    sub: claims.sub,
    subjectKind: claims.subjectKind ?? "visitor",
    ...(claims.contextVersion !== undefined ? { contextVersion: claims.contextVersion } : {}),
    ...(claims.origin !== undefined ? { origin: claims.origin } : {}),
    ...(claims.apiKeyId !== undefined ? { apiKeyId: claims.apiKeyId } : {}),
    ...(claims.ownerProof !== undefined ? { ownerProof: claims.ownerProof } : {}),
  };
}

/** Claims as an RPC argument: parsed like the header, never trusted by type alone. */
export function readThreadClaims(value: unknown): ThreadClaims | null {
  const parsed = threadClaimsSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

export function parseThreadClaims(header: string | null): ThreadClaims | null {
  if (header === null) return null;
  try {
    return readThreadClaims(JSON.parse(header));
  } catch {
    return null;
  }
}
