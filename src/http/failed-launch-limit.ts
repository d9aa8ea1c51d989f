// Failed launches per client network: past the budget a network's launches are refused before any work, for a window.
import { createMiddleware } from "hono/factory";
import { ABUSE_WINDOW_SECONDS, countFailedLaunch, tooManyFailedLaunches } from "../auth/abuse-limits";
import { clientIp, clientNetwork } from "../auth/rate-limit";
import type { AppContext, AppEnv } from "./context";
import { ExpiringSet } from "./expiring-set";
import { authenticateApiKey } from "./tenant-auth";

export const BLOCKED_NETWORKS_MAX = 10_000;

/** Networks this isolate saw go past their failed-launch budget, until their window ends. */
const blockedNetworks = new ExpiringSet(BLOCKED_NETWORKS_MAX);

/**
 * A failure that costs the caller nothing but us a look-up (an unknown key, a wrong Origin, a thread that is not
 * theirs): any 4xx except the limits' own 429s, unless a tenant API key authenticated the request — a tenant's
 * backend is accountable for its own traffic and is never limited by the address it shares with its users.
 */
function countsAsFailed(c: AppContext): boolean {
  const status = c.res.status;
  return status >= 400 && status < 500 && status !== 429 && c.get("tenant") === undefined;
}

/**
 * A blocked network's launch is refused unless a tenant API key authenticates it: a tenant's backend may share an
 * address with abusive clients (a NAT, a cloud egress) and is limited per subject, never by that address.
 */
async function authenticatedBackend(c: AppContext): Promise<boolean> {
  const authorization = c.req.header("Authorization");
  return authorization !== undefined && (await authenticateApiKey(c.env, authorization)) !== null;
}

/**
 * Mounted before the launch CORS middleware, so a refusal here makes no origin look-up either (and carries no CORS
 * header: a browser sees a network error, which the widget retries with backoff).
 */
export const failedLaunchLimit = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "POST") return next();
  const ip = clientIp(c.req.raw);
  const network = clientNetwork(ip);
  if (blockedNetworks.has(network, Date.now()) && !(await authenticatedBackend(c)))
    throw tooManyFailedLaunches();
  await next();
  if (!countsAsFailed(c) || (await countFailedLaunch(c.env, ip))) return;
  blockedNetworks.add(network, Date.now() + ABUSE_WINDOW_SECONDS * 1000);
  throw tooManyFailedLaunches();
});
