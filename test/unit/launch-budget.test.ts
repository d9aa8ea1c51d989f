// How a daily launch quota divides: integer percent, rounded up for the share, never zero unless the reserve is all.
import { describe, expect, it } from "vitest";
import { launchBudget } from "../../src/auth/launch-budget";

const quotas = (
  launchesPerDay: number | null,
  privateLaunchReservePercent: number | null = null,
  agentPublicLaunchSharePercent: number | null = null,
) => ({ launchesPerDay, privateLaunchReservePercent, agentPublicLaunchSharePercent });

describe("launchBudget", () => {
  it.each([
    // [launchesPerDay, reserve, share] → [public launches, one agent's public launches]
    [1, null, null, 1, 1],
    [2, null, null, 1, 1],
    [3, null, null, 2, 2],
    [4, null, null, 2, 2],
    [2, 0, 100, 2, 2],
    [10, 30, 70, 7, 7],
    [10, 100, 10, 0, 1],
    [100_000, null, null, 50_000, 50_000],
    [3, 99, 1, 1, 1],
  ])(
    "a day of %i with reserve %s and share %s: %i public, %i per agent",
    (limit, reserve, share, pub, agent) => {
      const budget = launchBudget(quotas(limit, reserve, share), 999);
      expect(budget.launchesPerDay).toBe(limit);
      expect(budget.publicLaunchesPerDay).toBe(pub);
      expect(budget.agentPublicLaunchesPerDay).toBe(agent);
    },
  );

  it("uses the platform default quota and 50% for whatever the operator did not set", () => {
    expect(launchBudget(quotas(null), 7)).toEqual({
      launchesPerDay: 7,
      privateReservePercent: 50,
      publicLaunchesPerDay: 4,
      agentPublicSharePercent: 50,
      agentPublicLaunchesPerDay: 4,
    });
  });

  it("never gives public launches more than the day, nor the reserve less than its floor", () => {
    for (let limit = 1; limit <= 200; limit++) {
      for (const reserve of [0, 1, 33, 50, 67, 99, 100]) {
        const budget = launchBudget(quotas(limit, reserve, 100), 1);
        expect(budget.publicLaunchesPerDay).toBeLessThanOrEqual(limit);
        expect(limit - budget.publicLaunchesPerDay).toBe(Math.floor((limit * reserve) / 100));
        if (reserve < 100) expect(budget.publicLaunchesPerDay).toBeGreaterThanOrEqual(1);
      }
    }
  });
});
