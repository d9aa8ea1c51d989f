// Failed launches per client network: past the budget a network's launches are refused before any work, for a window.
import { createMiddleware } from "hono/factory";
import { ABUSE_WINDOW_SECONDS, countFailedLaunch, tooManyFailedLaunches } from "../auth/abuse-limits";
import { clientIp, clientNetwork } from "../auth/rate-limit";
import type { AppContext, AppEnv } from "./context";
import { ExpiringSet } from "./expiring-set";

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
 * Mounted before the launch CORS middleware, so a refusal here makes no origin look-up either (and carries no CORS
 * header: a browser sees a network error, which the widget retries with backoff).
 */
export const failedLaunchLimit = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== "POST") return next();
  const ip = clientIp(c.req.raw);
  const network = clientNetwork(ip);
  if (blockedNetworks.has(network, Date.now())) throw tooManyFailedLaunches();
  await next();
  if (!countsAsFailed(c) || (await countFailedLaunch(c.env, ip))) return;
  blockedNetworks.add(network, Date.now() + ABUSE_WINDOW_SECONDS * 1000);
  throw tooManyFailedLaunches();
});
