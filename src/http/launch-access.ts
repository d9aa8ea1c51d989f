// The launch-token gate as Hono sees it: reads the request's values, remembers the verified Origin for CORS.

import type { LaunchClaims } from "../auth/launch-token";
import { authorizeLaunch, type LaunchAccess } from "../auth/thread-access";
import { MAX_TOKEN_BYTES } from "../auth/token-policy";
import { bearerToken } from "./bearer";
import type { AppContext } from "./context";
import { deploymentStore } from "./store";

/** `Authorization: Bearer <jwt>` only; Basic, Token, … carry no launch token. */
export const launchBearer = (header: string | undefined): string | null =>
  bearerToken(header, MAX_TOKEN_BYTES + "Bearer ".length);

/**
 * Thread routes (`threadFromPath`, the default) require the path's thread to be the token's; `/v1/me/*` has no
 * thread in its path and is scoped by the token's own thread.
 */
export async function launchAccess(
  c: AppContext,
  token: string | null,
  options: { threadFromPath?: boolean } = {},
): Promise<LaunchClaims> {
  const access: LaunchAccess = await authorizeLaunch({
    env: c.env,
    store: deploymentStore(c),
    url: c.req.url,
    token,
    threadId: (options.threadFromPath ?? true) ? (c.req.param("threadId") ?? "") : null,
    origin: c.req.header("Origin"),
    requestId: c.get("requestId"),
  });
  if (access.origin !== undefined) c.set("launchOrigin", access.origin);
  return access.claims;
}
