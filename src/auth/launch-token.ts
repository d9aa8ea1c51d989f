// Launch tokens: a few minutes of access to one tenant + agent + environment + thread + subject.
import { z } from "zod";
import { environmentSchema } from "../shared/api";
import { signJwt, type TokenResult, verifyJwt } from "./jwt";
import { parseKeySet } from "./signing-keys";
import { tokenPolicy } from "./token-policy";

export const LAUNCH_TOKEN_TYP = "agent-launch+jwt";

const id = z.string().min(1).max(256);

/** The JWT payload as docs/security.md names it (`agentEntityId` on the wire); code reads `agentId`. */
export const launchClaimsSchema = z
  .object({
    iss: z.string(),
    aud: z.union([z.string(), z.array(z.string())]),
    exp: z.number().int(),
    iat: z.number().int(),
    jti: id,
    tenantId: id,
    agentEntityId: id,
    environment: environmentSchema,
    threadId: id,
    sub: id,
    /** How the subject was established: an anonymous visitor, or the tenant's signed-in user. */
    subjectKind: z.enum(["visitor", "user"]).optional(),
    origin: z.string().max(2048).optional(),
    /** The thread's context version at this launch (docs/protocol.md): the object re-reads its context when it is behind. */
    contextVersion: z.number().int().positive().optional(),
    /** A preview thread's token (docs/api.md): valid only from the deployment's own origin, the console's. */
    preview: z.literal(true).optional(),
    /** A private launch's `sk_` key id: revoking that key stops the token's refreshes and sockets (docs/security.md). */
    apiKeyId: id.optional(),
    /**
     * A fresh launch's proof that it minted this thread for this subject (src/auth/owner-proof.ts): the thread object
     * records its owner from the first request carrying it.
     */
    ownerProof: z
      .string()
      .regex(/^[0-9a-f]{32}$/)
      .optional(),
  })
  .transform(({ agentEntityId, ...claims }) => ({ ...claims, agentId: agentEntityId }));

export type LaunchClaims = z.output<typeof launchClaimsSchema>;

export interface LaunchGrant {
  tenantId: string;
  agentId: string;
  threadId: string;
  sub: string;
  subjectKind: "visitor" | "user";
  origin?: string;
  contextVersion?: number;
  preview?: true;
  /** The `sk_` key that minted a private launch (kept by every refresh of its tokens). */
  apiKeyId?: string;
  /** Only in the token of the launch that minted the thread (never a resume's or a refresh's). */
  ownerProof?: string;
}

export async function signLaunchToken(env: Env, grant: LaunchGrant, now = new Date()) {
  const policy = tokenPolicy(env);
  const keys = parseKeySet(env.LAUNCH_TOKEN_KEYS);
  const { sub, agentId, ...rest } = grant;
  return signJwt(
    { ...rest, agentEntityId: agentId, environment: env.ENVIRONMENT, sub },
    {
      typ: LAUNCH_TOKEN_TYP,
      kid: keys.currentKid,
      key: keys.currentKey,
      issuer: policy.issuer,
      audience: policy.audience,
      ttlSeconds: policy.launchTtlSeconds,
      now,
    },
  );
}

/** Verifies a launch token for this Worker's environment; a token for another environment is refused. */
export async function verifyLaunchToken(
  env: Env,
  token: string,
  now = new Date(),
): Promise<TokenResult<LaunchClaims>> {
  const policy = tokenPolicy(env);
  const result = await verifyJwt(token, {
    typ: LAUNCH_TOKEN_TYP,
    issuer: policy.issuer,
    audience: policy.audience,
    keys: parseKeySet(env.LAUNCH_TOKEN_KEYS).verifying,
    leewaySeconds: policy.leewaySeconds,
    maxLifetimeSeconds: policy.launchTtlSeconds,
    claims: launchClaimsSchema,
    now,
  });
  if (result.ok && result.claims.environment !== env.ENVIRONMENT) {
    return { ok: false, reason: "environment", expired: false };
  }
  return result;
}
