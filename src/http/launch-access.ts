// The launch-token gate as Hono sees it: reads the request's values, remembers the verified Origin for CORS.

import type { LaunchClaims } from "../auth/launch-token";
import { authorizeLaunch, type LaunchAccess, requireRegistryThread } from "../auth/thread-access";
import { MAX_TOKEN_BYTES } from "../auth/token-policy";
import { bearerToken } from "./bearer";
import type { AppContext } from "./context";

/** `Authorization: Bearer <jwt>` only; Basic, Token, … carry no launch token. */
export const launchBearer = (header: string | undefined): string | null =>
  bearerToken(header, MAX_TOKEN_BYTES + "Bearer ".length);

/**
 * The page's origin. Browsers send no `Origin` on a same-origin GET (a widget on a page of the service's own host,
 * like the demo page, reading `/v1/me/threads`); there the browser's Fetch Metadata `Sec-Fetch-Site: same-origin`
 * says the page is on the request's own origin, which then stands in. Only a non-browser client can forge either
 * header, and it could send any `Origin` anyway: the agent's allowed origins and the token's origin still decide.
 */
export function requestOrigin(c: AppContext): string | undefined {
  const origin = c.req.header("Origin");
  if (origin !== undefined || c.req.header("Sec-Fetch-Site") !== "same-origin") return origin;
  return new URL(c.req.url).origin;
}

/**
 * Thread routes (`threadFromPath`, the default) require the path's thread to be the token's, and leave the subject and
 * the thread's state to the thread object; `/v1/me/*` has no thread in its path and is scoped by the token's own
 * thread, which the registry must show live and the subject's.
 */
export async function launchAccess(
  c: AppContext,
  token: string | null,
  options: { threadFromPath?: boolean } = {},
): Promise<LaunchClaims> {
  const access: LaunchAccess = await authorizeLaunch({
    env: c.env,
    url: c.req.url,
    token,
    threadId: (options.threadFromPath ?? true) ? (c.req.param("threadId") ?? "") : null,
    origin: requestOrigin(c),
    requestId: c.get("requestId"),
  });
  if (options.threadFromPath === false) await requireRegistryThread(c.env, access.claims);
  if (access.origin !== undefined) c.set("launchOrigin", access.origin);
  return access.claims;
}
