// How a tenant's daily launch quota divides between private and public launches and among its public agents.
import type { TenantQuotas } from "../shared/api";

/** The part of the daily launch quota public launches may not use, in percent, unless the operator set another. */
export const DEFAULT_PRIVATE_LAUNCH_RESERVE_PERCENT = 50;
/** The part of the daily launch quota one agent's public launches may use, in percent, unless the operator set another. */
export const DEFAULT_AGENT_PUBLIC_LAUNCH_SHARE_PERCENT = 50;

/** A tenant's launches per UTC day as they are enforced (docs/operations.md, "Launch shares"). */
export interface LaunchBudget {
  /** All new launches, private and public. */
  launchesPerDay: number;
  privateReservePercent: number;
  /** New public launches of all the tenant's agents together: what the private reserve leaves. */
  publicLaunchesPerDay: number;
  agentPublicSharePercent: number;
  /** New public launches of any one agent. */
  agentPublicLaunchesPerDay: number;
}

/** `percent` of `limit`, rounded up: a share that is not zero is always at least one launch. */
const share = (limit: number, percent: number): number => Math.ceil((limit * percent) / 100);

/**
 * The budget of a tenant with `quotas` on a platform whose default daily quota is `defaultLimit`. Integer percent
 * arithmetic, rounded up in favour of the share: public launches get `ceil(limit × (100 − reserve) / 100)` (at least
 * one unless the reserve is 100%), one agent `ceil(limit × share / 100)` (at least one); private launches may use the
 * whole quota, the reserve included.
 */
export function launchBudget(
  quotas: Pick<
    TenantQuotas,
    "launchesPerDay" | "privateLaunchReservePercent" | "agentPublicLaunchSharePercent"
  >,
  defaultLimit: number,
): LaunchBudget {
  const launchesPerDay = quotas.launchesPerDay ?? defaultLimit;
  const privateReservePercent = quotas.privateLaunchReservePercent ?? DEFAULT_PRIVATE_LAUNCH_RESERVE_PERCENT;
  const agentPublicSharePercent =
    quotas.agentPublicLaunchSharePercent ?? DEFAULT_AGENT_PUBLIC_LAUNCH_SHARE_PERCENT;
  return {
    launchesPerDay,
    privateReservePercent,
    publicLaunchesPerDay: share(launchesPerDay, 100 - privateReservePercent),
    agentPublicSharePercent,
    agentPublicLaunchesPerDay: share(launchesPerDay, agentPublicSharePercent),
  };
}
