// Launch rate limits per (agent key, client IP) through the Workers Rate Limiting binding, and tenant quotas.
import { AppError } from "../errors";
import { tenantQuota } from "./tenant-quota";

/** The binding's window; a refused caller is told to come back after it. */
const LAUNCH_WINDOW_SECONDS = 60;

/** `CF-Connecting-IP` only: `X-Forwarded-For` is client-controlled. */
export function clientIp(request: Request): string {
  return request.headers.get("CF-Connecting-IP") ?? "unknown";
}

export async function enforceLaunchRateLimit(env: Env, agentKey: string, ip: string): Promise<void> {
  const { success } = await env.LAUNCH_LIMITER.limit({ key: `launch:${agentKey}:${ip}` });
  if (!success) {
    throw new AppError("rate_limited", "Too many launches; try again shortly.", {
      retryAfter: LAUNCH_WINDOW_SECONDS,
    });
  }
}

export function dailyLaunchQuota(env: Env): number {
  const n = Number(env.TENANT_DAILY_LAUNCH_QUOTA);
  return Number.isInteger(n) && n > 0 ? n : 100_000;
}

export async function consumeLaunchQuota(env: Env, tenantId: string): Promise<void> {
  const decision = await tenantQuota(env, tenantId).consume("launches", dailyLaunchQuota(env));
  if (!decision.ok) {
    throw new AppError("quota_exceeded", "The daily launch quota for this account is used up.", {
      retryAfter: decision.retryAfterSeconds ?? 3600,
    });
  }
}
