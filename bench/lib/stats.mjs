// Summaries of latency samples: nearest-rank percentiles, so a p99 is always a measured sample.

export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** `{n, p50, p95, p99, mean, min, max}` in the samples' unit, rounded to 3 decimals; nulls when empty. */
export function summarize(samples) {
  const sorted = samples.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const round = (x) => (x === null ? null : Math.round(x * 1000) / 1000);
  const mean = sorted.length === 0 ? null : sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p95: round(percentile(sorted, 95)),
    p99: round(percentile(sorted, 99)),
    mean: round(mean),
    min: round(sorted[0] ?? null),
    max: round(sorted[sorted.length - 1] ?? null),
  };
}

export function ratio(value, baseline) {
  if (value === null || baseline === null || baseline === 0) return null;
  return Math.round((value / baseline) * 100) / 100;
}
