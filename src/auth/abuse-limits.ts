// Launch-side abuse limits beside the per-client launch limiter: preflights and failed launches per client network,
// and launches per (tenant, subject), each through a Workers Rate Limiting binding (budgets in wrangler.toml).
import { AppError } from "../errors";
import { utf8 } from "../shared/bytes";
import { toHex } from "../shared/hex";
import { clientNetwork } from "./rate-limit";

/** Every binding here counts in 60-second windows; a refused caller is told to come back after one. */
export const ABUSE_WINDOW_SECONDS = 60;

/** A preflight that needs a D1 origin look-up: limited per client network before the look-up is made. */
export async function enforcePreflightLimit(env: Env, ip: string): Promise<void> {
  const { success } = await env.PREFLIGHT_LIMITER.limit({ key: `preflight:${clientNetwork(ip)}` });
  if (!success) {
    throw new AppError("rate_limited", "Too many requests; try again shortly.", {
      retryAfter: ABUSE_WINDOW_SECONDS,
    });
  }
}

/** Counts one failed launch for the client's network; false once the network is past its budget for the window. */
export async function countFailedLaunch(env: Env, ip: string): Promise<boolean> {
  const { success } = await env.FAILED_LAUNCH_LIMITER.limit({ key: `failed-launch:${clientNetwork(ip)}` });
  return success;
}

/**
 * Counts one failed console sign-in (a wrong API key) for the client's network, on the failed-launch limiter's budget
 * under its own key; false once the network is past it for the window.
 */
export async function countFailedSignIn(env: Env, ip: string): Promise<boolean> {
  const { success } = await env.FAILED_LAUNCH_LIMITER.limit({ key: `failed-sign-in:${clientNetwork(ip)}` });
  return success;
}

export function tooManyFailedSignIns(): AppError {
  return new AppError("rate_limited", "Too many failed sign-ins; try again shortly.", {
    retryAfter: ABUSE_WINDOW_SECONDS,
  });
}

export function tooManyFailedLaunches(): AppError {
  return new AppError("rate_limited", "Too many failed launches; try again shortly.", {
    retryAfter: ABUSE_WINDOW_SECONDS,
  });
}

/**
 * Launches for one subject of a tenant (a backend's signed-in user, or a visitor refreshing a thread), on the launch
 * limiter's budget. The subject is hashed: the limiter never holds a customer's user id.
 */
export async function enforceSubjectLaunchLimit(
  env: Env,
  tenantId: string,
  subjectKind: "visitor" | "user",
  subject: string,
): Promise<void> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", utf8(subject)));
  const key = `launch:${subjectKind}:${tenantId}:${toHex(digest.subarray(0, 16))}`;
  const { success } = await env.LAUNCH_LIMITER.limit({ key });
  if (!success) {
    throw new AppError("rate_limited", "Too many launches for this user; try again shortly.", {
      retryAfter: ABUSE_WINDOW_SECONDS,
    });
  }
}
