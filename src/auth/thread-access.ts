// Who may use a thread with a launch token: the token, the agent's state and origins, and the thread's registry row.
import type { DeploymentStore } from "../control/deployment-store";
import { AppError } from "../errors";
import { originAllowed } from "../shared/origin-policy";
import { findThreadAndTenantStatus } from "../storage/d1/thread-registry";
import { tokenError } from "./jwt";
import { type LaunchClaims, verifyLaunchToken } from "./launch-token";

const TOKEN_QUERY_PARAMS = ["token", "access_token", "bearer", "jwt"];

export interface LaunchAccessRequest {
  env: Env;
  store: DeploymentStore;
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
  // Another thread is "not found" for this token whether or not it exists: no existence oracle (SPEC §3).
  if (request.threadId !== null && request.threadId !== claims.threadId) {
    throw new AppError("not_found", "Thread not found.");
  }

  const agent = await request.store.getAgent(claims.tenantId, claims.agentId);
  if (agent === null) throw new AppError("unauthenticated", "Authentication required.");
  if (agent.status !== "active") throw new AppError("forbidden", "This agent is disabled.");
  const origin = request.origin;
  let access: LaunchAccess = { claims };
  if (agent.visibility === "public" || origin !== undefined) {
    if (!originAllowed(origin, agent.allowedOrigins)) throw new AppError("forbidden", "Origin not allowed.");
    if (claims.origin !== undefined && claims.origin !== origin) {
      throw new AppError("forbidden", "The token was issued for another origin.");
    }
    access = origin === undefined ? { claims } : { claims, origin };
  }
  // The tenant's status comes with the thread's row: exact on every request, at no extra round trip.
  const thread = await findThreadAndTenantStatus(request.env.DB, claims.tenantId, claims.threadId);
  if (thread === null || thread.deletedAt !== null || thread.subject !== claims.sub) {
    throw new AppError("unauthenticated", "Authentication required.");
  }
  if (thread.tenantStatus !== "active") throw new AppError("forbidden", "This account is disabled.");
  return access;
}
