// The bounded, expiring set behind the isolate's unknown-origin cache and failed-launch blocks.
import { describe, expect, it } from "vitest";
import { ExpiringSet } from "../../src/http/expiring-set";

describe("ExpiringSet", () => {
  it("holds a key until its expiry, then forgets it", () => {
    const set = new ExpiringSet(10);
    set.add("a", 1_000);
    expect(set.has("a", 999)).toBe(true);
    expect(set.has("a", 1_000)).toBe(false);
    expect(set.size).toBe(0);
    expect(set.has("never", 0)).toBe(false);
  });

  it("never grows past its size: the oldest addition goes first", () => {
    const set = new ExpiringSet(3);
    for (const key of ["a", "b", "c", "d", "e"]) set.add(key, 10_000);
    expect(set.size).toBe(3);
    expect(["a", "b", "c", "d", "e"].map((key) => set.has(key, 0))).toEqual([false, false, true, true, true]);
    // Adding again renews a key and makes it the newest.
    set.add("c", 20_000);
    set.add("f", 10_000);
    expect(["c", "d", "e", "f"].map((key) => set.has(key, 0))).toEqual([true, false, true, true]);
    expect(set.has("c", 15_000)).toBe(true);
    set.clear();
    expect(set.size).toBe(0);
  });
});
