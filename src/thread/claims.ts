// Verified claims as the Worker hands them to a thread object, in a header only the Worker can set.
import { z } from "zod";
import type { LaunchClaims } from "../auth/launch-token";
import { environmentSchema } from "../shared/api";

export const CLAIMS_HEADER = "X-Agent-Threads-Claims";
/** Headers a client might send to impersonate the Worker or the SDK; always removed before forwarding. */
export const INTERNAL_HEADERS = [
  CLAIMS_HEADER,
  "x-agents-lifecycle-props",
  "x-partykit-room",
  "x-partykit-namespace",
];

export const threadClaimsSchema = z.strictObject({
  tenantId: z.string().min(1),
  environment: environmentSchema,
  agentEntityId: z.string().min(1),
  threadId: z.string().min(1),
  sub: z.string().min(1),
  subjectKind: z.enum(["visitor", "user"]),
});

export type ThreadClaims = z.infer<typeof threadClaimsSchema>;

export function threadClaimsFrom(claims: LaunchClaims): ThreadClaims {
  return {
    tenantId: claims.tenantId,
    environment: claims.environment,
    agentEntityId: claims.agentEntityId,
    threadId: claims.threadId,
    sub: claims.sub,
    subjectKind: claims.subjectKind ?? "visitor",
  };
}

export function parseThreadClaims(header: string | null): ThreadClaims | null {
  if (header === null) return null;
  try {
    const parsed = threadClaimsSchema.safeParse(JSON.parse(header));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
