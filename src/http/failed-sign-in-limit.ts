// Failed console sign-ins per client network: past the budget a network's sign-ins are refused before any key is
// looked up, for a window, so the sign-in form cannot be used to guess keys.
import { ABUSE_WINDOW_SECONDS, countFailedSignIn, tooManyFailedSignIns } from "../auth/abuse-limits";
import { clientIp, clientNetwork } from "../auth/rate-limit";
import type { AppContext } from "./context";
import { ExpiringSet } from "./expiring-set";

const BLOCKED_NETWORKS_MAX = 10_000;

/** Networks this isolate saw go past their failed sign-in budget, until their window ends. */
const blockedNetworks = new ExpiringSet(BLOCKED_NETWORKS_MAX);

/** 429 for a network this isolate already saw go past its budget. */
export function refuseBlockedSignIn(c: AppContext): void {
  if (blockedNetworks.has(clientNetwork(clientIp(c.req.raw)), Date.now())) throw tooManyFailedSignIns();
}

/** Counts a failed sign-in; throws 429 (and blocks the network here) once the network is past its budget. */
export async function countSignInFailure(c: AppContext): Promise<void> {
  const ip = clientIp(c.req.raw);
  if (await countFailedSignIn(c.env, ip)) return;
  blockedNetworks.add(clientNetwork(ip), Date.now() + ABUSE_WINDOW_SECONDS * 1000);
  throw tooManyFailedSignIns();
}
