// The workload credential between the Worker and the control-plane service (docs/control-plane.md#the-workload-credential):
// a short-lived HS256 JWT naming its audience, the deployment and one tenant (or one of two explicit wider scopes).
import { z } from "zod";
import { AppError } from "../errors";
import { signJwt, type TokenResult, verifyJwt } from "./jwt";
import { parseKeySet } from "./signing-keys";

declare global {
  interface Env {
    /** The workload key set (`{current, keys}` like LAUNCH_TOKEN_KEYS); a secret, needed only with CONTROL_PLANE=http. */
    CONTROL_PLANE_TOKEN?: string;
  }
}

export const WORKLOAD_TOKEN_TYP = "at-workload+jwt";
export const WORKLOAD_ISSUER = "agent-threads";
/** The service's audience unless CONTROL_PLANE_AUDIENCE names another (docs/control-plane.md#the-workload-credential). */
export const DEFAULT_WORKLOAD_AUDIENCE = "agent-threads:control-plane";
/** Every token lives this long at most; the Worker mints one per request. */
export const WORKLOAD_TTL_SECONDS = 60;
const WORKLOAD_LEEWAY_SECONDS = 5;

/**
 * What a token may touch: one tenant; `lookup`, the cross-tenant reads that come before a tenant is known (an
 * agent by its public key); `operator`, the global writes (a new tenant, a runtime revision).
 */
export type WorkloadScope = { tenantId: string } | "lookup" | "operator";

const claimsSchema = z.object({
  sub: z.string().min(1).max(200),
  scp: z.enum(["tenant", "lookup", "operator"]),
  tid: z.string().min(1).max(200).optional(),
});
export type WorkloadClaims = z.output<typeof claimsSchema>;

export async function signWorkloadToken(
  keySet: string,
  input: { deployment: string; scope: WorkloadScope; audience?: string },
  now = new Date(),
): Promise<string> {
  const keys = parseKeySet(keySet);
  const scope =
    typeof input.scope === "string" ? { scp: input.scope } : { scp: "tenant", tid: input.scope.tenantId };
  const signed = await signJwt(
    { ...scope, sub: input.deployment },
    {
      typ: WORKLOAD_TOKEN_TYP,
      kid: keys.currentKid,
      key: keys.currentKey,
      issuer: WORKLOAD_ISSUER,
      audience: input.audience ?? DEFAULT_WORKLOAD_AUDIENCE,
      ttlSeconds: WORKLOAD_TTL_SECONDS,
      now,
    },
  );
  return signed.token;
}

export async function verifyWorkloadToken(
  keySet: string,
  token: string,
  options: { audience?: string; now?: Date } = {},
): Promise<TokenResult<WorkloadClaims>> {
  const result = await verifyJwt(token, {
    typ: WORKLOAD_TOKEN_TYP,
    issuer: WORKLOAD_ISSUER,
    audience: options.audience ?? DEFAULT_WORKLOAD_AUDIENCE,
    keys: parseKeySet(keySet).verifying,
    leewaySeconds: WORKLOAD_LEEWAY_SECONDS,
    maxLifetimeSeconds: WORKLOAD_TTL_SECONDS,
    claims: claimsSchema,
    now: options.now ?? new Date(),
  });
  if (result.ok && (result.claims.scp === "tenant") !== (result.claims.tid !== undefined)) {
    return { ok: false, reason: "scope", expired: false };
  }
  return result;
}

/** Whether verified claims cover `needed`; a tenant scope covers only its own tenant. 403 otherwise. */
export function requireScope(claims: WorkloadClaims, needed: WorkloadScope): void {
  const allowed =
    typeof needed === "string"
      ? claims.scp === needed
      : claims.scp === "tenant" && claims.tid === needed.tenantId;
  if (!allowed) throw new AppError("forbidden", "The workload credential does not cover this tenant.");
}
