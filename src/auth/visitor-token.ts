// Visitor tokens: a long-lived, agent-scoped proof of "the same anonymous visitor", kept in the browser.
import { z } from "zod";
import { randomBytes } from "../shared/bytes";
import { toHex } from "../shared/hex";
import { signJwt, type TokenResult, verifyJwt } from "./jwt";
import { secretBytes } from "./signing-keys";
import { tokenPolicy } from "./token-policy";

export const VISITOR_TOKEN_TYP = "agent-visitor+jwt";
const VISITOR_KID = "v1";

/** The visitor JWT's payload (`agentEntityId` on the wire, as in launch tokens); code reads `agentId`. */
export const visitorClaimsSchema = z
  .object({
    exp: z.number().int(),
    iat: z.number().int(),
    jti: z.string().min(1),
    sub: z.string().regex(/^vis_[A-Za-z0-9_-]{16,64}$/),
    tenantId: z.string().min(1).max(256),
    agentEntityId: z.string().min(1).max(256),
  })
  .transform(({ agentEntityId, ...claims }) => ({ ...claims, agentId: agentEntityId }));

export type VisitorClaims = z.output<typeof visitorClaimsSchema>;

export function newVisitorId(): string {
  return `vis_${toHex(randomBytes(16))}`;
}

export async function signVisitorToken(
  env: Env,
  visitor: { sub: string; tenantId: string; agentId: string },
  now = new Date(),
) {
  const policy = tokenPolicy(env);
  const { agentId, ...rest } = visitor;
  return signJwt(
    { ...rest, agentEntityId: agentId },
    {
      typ: VISITOR_TOKEN_TYP,
      kid: VISITOR_KID,
      key: secretBytes(env.VISITOR_TOKEN_KEY),
      issuer: policy.issuer,
      audience: policy.audience,
      ttlSeconds: policy.visitorTtlSeconds,
      now,
    },
  );
}

export async function verifyVisitorToken(
  env: Env,
  token: string,
  now = new Date(),
): Promise<TokenResult<VisitorClaims>> {
  const policy = tokenPolicy(env);
  return verifyJwt(token, {
    typ: VISITOR_TOKEN_TYP,
    issuer: policy.issuer,
    audience: policy.audience,
    keys: new Map([[VISITOR_KID, secretBytes(env.VISITOR_TOKEN_KEY)]]),
    leewaySeconds: policy.leewaySeconds,
    maxLifetimeSeconds: policy.visitorTtlSeconds,
    claims: visitorClaimsSchema,
    now,
  });
}
