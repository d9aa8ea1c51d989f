// Release weights as the sliders move them: always positive integers summing to 10,000 (what POST …/releases
// accepts), so the form can never hold an allocation the API would refuse.

export const TOTAL = 10_000;

/** `total` split into `count` near-equal positive parts (the first ones get the remainder). */
export function evenSplit(count: number, total = TOTAL): number[] {
  if (count <= 0) return [];
  const base = Math.floor(total / count);
  return Array.from({ length: count }, (_, i) => base + (i < total - base * count ? 1 : 0));
}

/**
 * `weights` with item `index` set to `value` (clamped so every other item keeps at least 1), the others rescaled
 * to share the rest in proportion to what they had (evenly, when they had nothing to go by). Rounding uses the
 * largest remainders, so the sum is exact.
 */
export function rebalance(weights: number[], index: number, value: number): number[] {
  const count = weights.length;
  if (count === 0 || index < 0 || index >= count) return weights;
  if (count === 1) return [TOTAL];
  const target = Math.min(TOTAL - (count - 1), Math.max(1, Math.round(value)));
  const rest = TOTAL - target;
  const others = weights.map((w, i) => (i === index ? 0 : Math.max(0, w)));
  const sum = others.reduce((a, b) => a + b, 0);
  // Each other item keeps 1 and shares what is left above that in proportion.
  const spare = rest - (count - 1);
  const exact = others.map((w, i) => {
    if (i === index) return 0;
    return sum > 0 ? (w / sum) * spare : spare / (count - 1);
  });
  const floors = exact.map(Math.floor);
  let left = spare - floors.reduce((a, b) => a + b, 0);
  const order = exact
    .map((x, i) => ({ i, r: x - Math.floor(x) }))
    .filter(({ i }) => i !== index)
    .sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    floors[i] = (floors[i] ?? 0) + 1;
    left -= 1;
  }
  return floors.map((w, i) => (i === index ? target : w + 1));
}

/** A weight as a percentage of the total, as the form shows it: `33.33 %`. */
export const percent = (weight: number): string =>
  `${(weight / (TOTAL / 100)).toFixed(2).replace(/\.?0+$/, "")} %`;
