// Who may use a thread with a launch token, as the edge decides it: the token, and the agent's state and origins (from
// the isolate's gate cache). Whether the token's subject owns the thread, and whether it still exists, is the thread
// object's own decision (src/thread/object/thread-gate.ts); `/v1/me/*` alone asks the registry (`requireRegistryThread`).
import { AppError, databaseUnavailable } from "../errors";
import { originAllowed } from "../shared/origin-policy";
import { findThreadAndTenantStatus } from "../storage/d1/thread-registry";
import { GATE_UNAVAILABLE, gateAgentCached } from "./gate-agent-cache";
import { tokenError } from "./jwt";
import { type LaunchClaims, verifyLaunchToken } from "./launch-token";
import { ownerProofHolds } from "./owner-proof";

const PUBLIC_NEEDS_ORIGIN =
  "A public agent's thread is used from a web page: the request needs an Origin header the agent allows. " +
  "A backend should launch a private agent with its API key instead (see docs/api.md, private launch from a backend).";

const TOKEN_QUERY_PARAMS = ["token", "access_token", "bearer", "jwt"];

export interface LaunchAccessRequest {
  env: Env;
  /** The request's URL: a token in its query string is refused even next to a header token. */
  url: string;
  token: string | null;
  /** The path's thread, which must be the token's; null where the path names none (`/v1/me/*`). */
  threadId: string | null;
  origin: string | undefined;
  /** For the log line of a refused token. */
  requestId: string;
}

export interface LaunchAccess {
  claims: LaunchClaims;
  /** The Origin verified against the agent's allow-list, for CORS; absent when none was checked. */
  origin?: string;
}

/** Verifies a launch token for one request, or throws the AppError to answer with. */
export async function authorizeLaunch(request: LaunchAccessRequest): Promise<LaunchAccess> {
  const url = new URL(request.url);
  if (TOKEN_QUERY_PARAMS.some((name) => url.searchParams.has(name))) {
    throw new AppError("unauthenticated", "Tokens are accepted only in headers.");
  }
  if (request.token === null) throw new AppError("unauthenticated", "Authentication required.");
  const verified = await verifyLaunchToken(request.env, request.token);
  if (!verified.ok) {
    console.log(JSON.stringify({ level: "info", requestId: request.requestId, refused: verified.reason }));
    throw tokenError(verified);
  }
  const claims = verified.claims;
  // Another thread is "not found" for this token whether or not it exists: no existence oracle (docs/api.md).
  if (request.threadId !== null && request.threadId !== claims.threadId) {
    throw new AppError("not_found", "Thread not found.");
  }
  // A fresh launch's token proves its owner; one whose claims were changed under a valid signature (another subject,
  // another thread) is refused here, before any thread object is reached or created.
  if (claims.ownerProof !== undefined && !(await ownerProofValid(request.env, claims, claims.ownerProof))) {
    console.log(JSON.stringify({ level: "info", requestId: request.requestId, refused: "owner_proof" }));
    throw new AppError("unauthenticated", "Authentication required.");
  }

  const gate = await gateAgentCached(request.env.DB, claims.tenantId, claims.agentId);
  const origin = request.origin;
  if (gate === GATE_UNAVAILABLE) return tokenOnlyAccess(claims, origin);
  const agent = gate?.agent ?? null;
  if (gate === null || agent === null) throw new AppError("unauthenticated", "Authentication required.");
  if (gate.tenantStatus !== "active") throw new AppError("forbidden", "This account is disabled.");
  if (agent.status !== "active") throw new AppError("forbidden", "This agent is disabled.");
  if (claims.preview === true) return previewAccess(request, claims);
  if (agent.visibility === "public" || origin !== undefined) {
    // A backend's socket (Node's WebSocket sends no Origin) gets told what to do instead (docs/api.md).
    if (origin === undefined) throw new AppError("forbidden", PUBLIC_NEEDS_ORIGIN);
    if (!originAllowed(origin, agent.allowedOrigins)) throw new AppError("forbidden", "Origin not allowed.");
    if (claims.origin !== undefined && claims.origin !== origin) {
      throw new AppError("forbidden", "The token was issued for another origin.");
    }
    return origin === undefined ? { claims } : { claims, origin };
  }
  return { claims };
}

function ownerProofValid(env: Env, claims: LaunchClaims, proof: string): Promise<boolean> {
  return ownerProofHolds(env.DO_NAME_KEY, { ...claims, subjectKind: claims.subjectKind ?? "visitor" }, proof);
}

/**
 * A preview thread's token is the console's: it works from this deployment's own pages only (its `origin` claim is
 * that origin), whatever origins the agent allows its widget on.
 */
function previewAccess(request: LaunchAccessRequest, claims: LaunchClaims): LaunchAccess {
  const own = new URL(request.url).origin;
  if (request.origin !== own || claims.origin !== own) {
    throw new AppError("forbidden", "A preview token works only from this deployment's own pages.");
  }
  return { claims, origin: own };
}

/**
 * D1 cannot be read and this isolate knows nothing recent of the agent: the token alone stands in. Its launch checked
 * the agent, its tenant and the page's origin at most one token lifetime ago, so an origin-bound token is admitted
 * from that origin only. A token without an origin (a backend launch) can vouch for no page: from one it waits.
 */
function tokenOnlyAccess(claims: LaunchClaims, origin: string | undefined): LaunchAccess {
  if (origin === undefined && claims.origin === undefined) return { claims };
  if (claims.origin === undefined) {
    throw databaseUnavailable();
  }
  if (claims.origin !== origin) throw new AppError("forbidden", "The token was issued for another origin.");
  return { claims, origin };
}

/** `/v1/me/*`: the token's thread must still be live and its subject's in the registry (a D1 listing route anyway). */
export async function requireRegistryThread(env: Env, claims: LaunchClaims): Promise<void> {
  const thread = await findThreadAndTenantStatus(env.DB, claims.tenantId, claims.threadId);
  if (thread === null || thread.deletedAt !== null || thread.subject !== claims.sub) {
    throw new AppError("unauthenticated", "Authentication required.");
  }
  if (thread.tenantStatus !== "active") throw new AppError("forbidden", "This account is disabled.");
}
