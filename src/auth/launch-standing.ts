// The thread's HTTP routes refuse a launch token whose standing is gone, by the rule open sockets use: its tenant and
// agent still active, its minting `sk_` key not revoked, its visitor not revoked. One D1 batch (the sockets' standing
// read) per grant, kept a few seconds per isolate (docs/security.md, "Launch tokens over HTTP").
import { AppError } from "../errors";
import { readSocketStanding, type SocketStanding } from "../storage/d1/socket-standing";
import type { LaunchClaims } from "./launch-token";
import { visitorHash } from "./visitor-revocation";

/** How long this isolate trusts a standing it read: the bound on another isolate's revocation being missed. */
export const LAUNCH_STANDING_TTL_MS = 5_000;
export const LAUNCH_STANDING_CACHE_MAX = 2_000;

/** Why a grant no longer stands, as the socket watch words it (src/thread/object/socket-watch.ts). */
export type StandingRefusal = "tenant disabled" | "agent disabled" | "api key revoked" | "visitor revoked";

const MESSAGES: Record<StandingRefusal, string> = {
  "tenant disabled": "This account is disabled.",
  "agent disabled": "This agent is disabled.",
  "api key revoked": "The API key that launched this thread was revoked; launch again with a live key.",
  "visitor revoked": "This visitor's access was revoked; launch again.",
};

interface Cached {
  tenantId: string;
  refusal: Promise<StandingRefusal | null>;
  expiresAt: number;
}

const byGrant = new Map<string, Cached>();

/** The same verdict the socket watch gives; a token without `apiKeyId` (a `pk_` launch) skips the key part. */
export function standingRefusal(
  standing: SocketStanding,
  claims: Pick<LaunchClaims, "apiKeyId" | "subjectKind">,
  hash: string | undefined,
): StandingRefusal | null {
  if (standing.tenantStatus !== "active") return "tenant disabled";
  if (standing.agentStatus !== "active") return "agent disabled";
  if (claims.apiKeyId !== undefined && !standing.liveKeys.has(claims.apiKeyId)) return "api key revoked";
  if (hash !== undefined && standing.revokedVisitors.has(hash)) return "visitor revoked";
  return null;
}

async function readRefusal(env: Env, claims: LaunchClaims, now: number): Promise<StandingRefusal | null> {
  // A missing subjectKind is a visitor, as the thread reads the claims (src/thread/contract/claims.ts).
  const visitor = (claims.subjectKind ?? "visitor") === "visitor";
  const hash = visitor ? await visitorHash(env, claims.tenantId, claims.sub) : undefined;
  const standing = await readSocketStanding(env.DB, {
    tenantId: claims.tenantId,
    agentId: claims.agentId,
    threadId: claims.threadId,
    apiKeyIds: claims.apiKeyId !== undefined ? [claims.apiKeyId] : [],
    visitorHashes: hash !== undefined ? [hash] : [],
    now: new Date(now).toISOString(),
  });
  return standingRefusal(standing, claims, hash);
}

/**
 * Throws 403 `forbidden` naming what was revoked or disabled, else returns. Concurrent misses for one grant share one
 * read. A failed read admits the token, as the socket watch keeps its sockets then: nothing can be revoked or disabled
 * while D1 cannot be written, and the token expires on its own; the failure is not kept, so the next request reads.
 */
export async function requireLaunchStanding(
  env: Env,
  claims: LaunchClaims,
  now: number = Date.now(),
): Promise<void> {
  const key = [claims.tenantId, claims.agentId, claims.apiKeyId ?? "", claims.sub].join("\u0000");
  let entry = byGrant.get(key);
  if (entry === undefined || entry.expiresAt <= now) {
    if (entry !== undefined) byGrant.delete(key);
    const fresh: Cached = {
      tenantId: claims.tenantId,
      refusal: readRefusal(env, claims, now),
      expiresAt: now + LAUNCH_STANDING_TTL_MS,
    };
    fresh.refusal.catch(() => {
      if (byGrant.get(key) === fresh) byGrant.delete(key);
    });
    if (byGrant.size >= LAUNCH_STANDING_CACHE_MAX) {
      const oldest = byGrant.keys().next();
      if (!oldest.done) byGrant.delete(oldest.value);
    }
    byGrant.set(key, fresh);
    entry = fresh;
  }
  let refusal: StandingRefusal | null;
  try {
    refusal = await entry.refusal;
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", message: "launch standing read failed", error: String(error) }),
    );
    return;
  }
  if (refusal !== null) throw new AppError("forbidden", MESSAGES[refusal]);
}

/** Forgets a tenant's standings in this isolate: call it after a key revocation, a disable or a visitor revocation. */
export function invalidateLaunchStanding(tenantId: string): void {
  for (const [key, entry] of byGrant) if (entry.tenantId === tenantId) byGrant.delete(key);
}

/** How many grants this isolate holds (for tests). */
export function launchStandingCacheSize(): number {
  return byGrant.size;
}
