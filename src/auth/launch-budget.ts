// Each agent's share of its tenant's daily launch quota, so one public agent's abuse cannot use up the tenant's day.
import { AppError } from "../errors";
import { tenantQuota } from "./tenant-quota";

/** An agent's public launches per UTC day may use at most this share of the tenant's daily launch quota. */
export const AGENT_LAUNCH_SHARE = 0.5;

export function agentDailyLaunchBudget(tenantLimit: number): number {
  return Math.max(1, Math.ceil(tenantLimit * AGENT_LAUNCH_SHARE));
}

/**
 * A new public launch's quota: one unit of the tenant's daily quota (`tenantLimit`) and one of the agent's budget
 * (kind `launches:agent:<id>`), in one call to the tenant's quota object, both or neither. A refusal consumes nothing.
 */
export async function consumePublicLaunchQuota(
  env: Env,
  tenantId: string,
  agentId: string,
  tenantLimit: number,
): Promise<void> {
  const decision = await tenantQuota(env, tenantId).consumeAll([
    { kind: "launches", limit: tenantLimit },
    { kind: `launches:agent:${agentId}`, limit: agentDailyLaunchBudget(tenantLimit) },
  ]);
  if (decision.ok) return;
  throw new AppError(
    "quota_exceeded",
    decision.kind === "launches"
      ? "The daily launch quota for this account is used up."
      : "The daily launch budget for this agent is used up.",
    { retryAfter: decision.retryAfterSeconds },
  );
}
