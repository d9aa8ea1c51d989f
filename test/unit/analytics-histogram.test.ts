// The first-delta histogram behind analytics percentiles: bucket bounds, and percentiles within the stated error.
import { describe, expect, it } from "vitest";
import {
  bucketValue,
  FIRST_DELTA_MAX_BUCKET,
  firstDeltaBucket,
  histogramPercentile,
} from "../../src/storage/d1/analytics";

describe("first-delta histogram", () => {
  it("puts times in four buckets per doubling, from under a millisecond to the cap", () => {
    expect(firstDeltaBucket(0)).toBe(0);
    expect(firstDeltaBucket(0.5)).toBe(0);
    expect(firstDeltaBucket(1)).toBe(1);
    expect(firstDeltaBucket(2)).toBe(5);
    expect(firstDeltaBucket(1024)).toBe(41);
    expect(firstDeltaBucket(1023)).toBe(40);
    expect(firstDeltaBucket(10 * 86_400_000)).toBe(FIRST_DELTA_MAX_BUCKET);
  });

  it("reports every time within 9.1% (plus a millisecond of rounding) of its bucket's value", () => {
    for (let ms = 1; ms < 200_000; ms = Math.ceil(ms * 1.07)) {
      const reported = bucketValue(firstDeltaBucket(ms));
      expect(Math.abs(reported - ms), String(ms)).toBeLessThanOrEqual(ms * 0.0906 + 1);
    }
  });

  it("takes p50 and p95 as the bucket holding that rank", () => {
    const counts = new Map<number, number>();
    // 100 runs: 90 at about 200 ms, 10 at about 3 s.
    counts.set(firstDeltaBucket(200), 90);
    counts.set(firstDeltaBucket(3000), 10);
    expect(histogramPercentile(counts, 0.5)).toBe(bucketValue(firstDeltaBucket(200)));
    expect(histogramPercentile(counts, 0.9)).toBe(bucketValue(firstDeltaBucket(200)));
    expect(histogramPercentile(counts, 0.95)).toBe(bucketValue(firstDeltaBucket(3000)));
    expect(histogramPercentile(new Map(), 0.5)).toBeNull();
    // Negative counts (never produced by the triggers) are ignored rather than trusted.
    expect(histogramPercentile(new Map([[3, -1]]), 0.5)).toBeNull();
  });
});
