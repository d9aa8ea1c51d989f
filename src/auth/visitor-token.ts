// Visitor tokens: a long-lived, agent-scoped proof of "the same anonymous visitor", kept in the browser.
import { z } from "zod";
import { randomBytes } from "../shared/bytes";
import { toHex } from "../shared/hex";
import { signJwt, type TokenResult, verifyJwt } from "./jwt";
import { type KeySet, parseKeySetOrSecret } from "./signing-keys";
import { tokenPolicy } from "./token-policy";

export const VISITOR_TOKEN_TYP = "agent-visitor+jwt";
/** The kid of a plain (pre-key-set) `VISITOR_TOKEN_KEY`: every visitor token issued before rotation carries it. */
export const LEGACY_VISITOR_KID = "v1";

/** `VISITOR_TOKEN_KEY`: a key set like `LAUNCH_TOKEN_KEYS`, or one plain secret that signs as kid `v1`. */
export function visitorKeys(env: Env): KeySet {
  return parseKeySetOrSecret(env.VISITOR_TOKEN_KEY, LEGACY_VISITOR_KID);
}

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
  const keys = visitorKeys(env);
  const { agentId, ...rest } = visitor;
  return signJwt(
    { ...rest, agentEntityId: agentId },
    {
      typ: VISITOR_TOKEN_TYP,
      kid: keys.currentKid,
      key: keys.currentKey,
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
    keys: visitorKeys(env).verifying,
    leewaySeconds: policy.leewaySeconds,
    maxLifetimeSeconds: policy.visitorTtlSeconds,
    claims: visitorClaimsSchema,
    now,
  });
}
