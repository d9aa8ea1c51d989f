// Deterministic weighted assignment: the bucket formula, the cumulative walk, and the split it yields.
import { describe, expect, it } from "vitest";
import { bucketFor, pickAllocation, WEIGHT_TOTAL } from "../../src/control/allocation";
import { canonicalJson, sha256Hex } from "../../src/control/canonical-json";

const base = { tenantId: "ten_a", environment: "production" as const, agentId: "agt_a", releaseId: "rel_a" };

async function shares(weights: number[], threads: number): Promise<number[]> {
  const allocations = weights.map((weight, i) => ({ version: i + 1, weight }));
  const counts = weights.map(() => 0);
  for (let i = 0; i < threads; i++) {
    const chosen = pickAllocation(allocations, await bucketFor({ ...base, threadId: `thread-${i}` }));
    counts[chosen.version - 1]! += 1;
  }
  return counts.map((count) => count / threads);
}

describe("bucketFor", () => {
  it("is the first 48 bits of SHA-256 over the canonical tuple, mod 10,000", async () => {
    const threadId = "thr_1";
    const hex = await sha256Hex(canonicalJson(["ten_a", "production", "agt_a", "rel_a", threadId]));
    expect(await bucketFor({ ...base, threadId })).toBe(Number.parseInt(hex.slice(0, 12), 16) % 10_000);
  });

  it("is deterministic and depends on every part of the tuple", async () => {
    const bucket = await bucketFor({ ...base, threadId: "t" });
    expect(await bucketFor({ ...base, threadId: "t" })).toBe(bucket);
    const variants = [
      { ...base, threadId: "t2" },
      { ...base, tenantId: "ten_b", threadId: "t" },
      { ...base, environment: "staging" as const, threadId: "t" },
      { ...base, agentId: "agt_b", threadId: "t" },
      { ...base, releaseId: "rel_b", threadId: "t" },
    ];
    const others = await Promise.all(variants.map((v) => bucketFor(v)));
    expect(others.some((b) => b !== bucket)).toBe(true);
    for (const b of [bucket, ...others]) {
      expect(Number.isInteger(b)).toBe(true);
      expect(b).toBeGreaterThanOrEqual(0);
      expect(b).toBeLessThan(WEIGHT_TOTAL);
    }
  });
});

describe("pickAllocation", () => {
  const split = [
    { version: 1, weight: 1000 },
    { version: 2, weight: 3000 },
    { version: 3, weight: 6000 },
  ];

  it("walks cumulative weights in allocation order", () => {
    expect(pickAllocation(split, 0).version).toBe(1);
    expect(pickAllocation(split, 999).version).toBe(1);
    expect(pickAllocation(split, 1000).version).toBe(2);
    expect(pickAllocation(split, 3999).version).toBe(2);
    expect(pickAllocation(split, 4000).version).toBe(3);
    expect(pickAllocation(split, 9999).version).toBe(3);
    expect(pickAllocation([...split].reverse(), 0).version).toBe(3);
  });

  it("throws when the weights leave a bucket uncovered", () => {
    expect(() => pickAllocation([{ version: 1, weight: 5000 }], 5000)).toThrow();
  });
});

describe("weighted assignment over 10,000 threads", () => {
  it("lands a 50/50 split within ±2% of its weights", async () => {
    const [a, b] = await shares([5000, 5000], 10_000);
    expect(Math.abs(a! - 0.5)).toBeLessThanOrEqual(0.02);
    expect(Math.abs(b! - 0.5)).toBeLessThanOrEqual(0.02);
  });

  it("lands a 10/30/60 split within ±2% of its weights", async () => {
    const got = await shares([1000, 3000, 6000], 10_000);
    [0.1, 0.3, 0.6].forEach((want, i) => {
      expect(Math.abs(got[i]! - want)).toBeLessThanOrEqual(0.02);
    });
  });

  it("gives the same thread the same version every time", async () => {
    const allocations = [
      { version: 1, weight: 1000 },
      { version: 2, weight: 3000 },
      { version: 3, weight: 6000 },
    ];
    for (let i = 0; i < 200; i++) {
      const input = { ...base, threadId: `sticky-${i}` };
      const first = pickAllocation(allocations, await bucketFor(input));
      const again = pickAllocation(allocations, await bucketFor({ ...input }));
      expect(again).toBe(first);
    }
  });
});
