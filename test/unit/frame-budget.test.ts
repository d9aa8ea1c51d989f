// The frame budget's token bucket: exactly a burst at one instant, then refills at the configured rate.
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/shared/protocol";
import { type FrameBucket, laterBucket, spendFrame } from "../../src/thread/object/frame-budget";

/** Spends at `now` until refused; returns how many frames were admitted and the bucket left. */
function spendAll(
  start: FrameBucket | undefined,
  now: number,
): { spent: number; left: FrameBucket | undefined } {
  let bucket = start;
  for (let spent = 0; spent <= LIMITS.frameBurst * 2; spent += 1) {
    const next = spendFrame(bucket, now);
    if (next === null) return { spent, left: bucket };
    bucket = next;
  }
  return { spent: Number.POSITIVE_INFINITY, left: bucket };
}

describe("spendFrame", () => {
  it("admits exactly frameBurst frames at one instant and refuses the next", () => {
    const now = 1_700_000_000_000;
    let bucket: FrameBucket | undefined;
    for (let i = 0; i < LIMITS.frameBurst; i += 1) {
      const next = spendFrame(bucket, now);
      expect(next, `frame ${i + 1} of the burst`).not.toBeNull();
      bucket = next ?? undefined;
    }
    expect(bucket?.tokens).toBe(0);
    expect(spendFrame(bucket, now)).toBeNull();
  });

  it("refills framesPerSecond per second, never above the burst", () => {
    const now = 1_700_000_000_000;
    const { left } = spendAll(undefined, now);
    expect(spendAll(left, now + 10_000).spent).toBe(10 * LIMITS.framesPerSecond);
    expect(spendAll(left, now + 3_600_000).spent).toBe(LIMITS.frameBurst);
    // A clock that went backwards refills nothing.
    expect(spendFrame(left, now - 60_000)).toBeNull();
  });

  it("laterBucket picks the snapshot counted last, the emptier on a tie", () => {
    const a = { tokens: 5, at: 10 };
    const b = { tokens: 50, at: 20 };
    expect(laterBucket(a, b)).toBe(b);
    expect(laterBucket(b, a)).toBe(b);
    expect(laterBucket(a, { tokens: 1, at: 10 })).toEqual({ tokens: 1, at: 10 });
    expect(laterBucket(undefined, a)).toBe(a);
    expect(laterBucket(a, undefined)).toBe(a);
  });
});
