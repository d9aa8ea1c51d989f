// The arithmetic of the console's charts, kept apart from the drawing so it can be tested: round axis ticks, and a
// value for every day of a range (the API lists only days with activity).

/** A round axis top at or above `max` (1, 2, 2.5 or 5 × 10ⁿ steps) and its ticks from 0, `count` intervals. */
export function niceTicks(max: number, count = 4): { top: number; ticks: number[] } {
  if (!(max > 0) || !Number.isFinite(max)) return { top: 1, ticks: [0, 1] };
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  // Counts are integers: a step below 1 would label an axis 0.25, 0.5…
  const whole = max >= 1 ? Math.max(1, step) : step;
  const top = Math.ceil(max / whole) * whole;
  const ticks: number[] = [];
  for (let t = 0; t <= top + whole / 2; t += whole) ticks.push(Number(t.toPrecision(12)));
  return { top, ticks };
}

const DAY_MS = 86_400_000;

/** Every UTC day from `from` to `to` inclusive (`YYYY-MM-DD`); empty when `from` is after `to`. */
export function daysBetween(from: string, to: string): string[] {
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  if (Number.isNaN(start) || Number.isNaN(end)) return [];
  const days: string[] = [];
  for (let t = start; t <= end; t += DAY_MS) days.push(new Date(t).toISOString().slice(0, 10));
  return days;
}

/** One value per day: `pick` of that day's item, `missing` (0 for counts, null for latencies) when there is none. */
export function perDay<T>(
  days: readonly string[],
  items: readonly T[],
  dayOf: (item: T) => string,
  pick: (item: T) => number | null,
  missing: number | null = 0,
): (number | null)[] {
  const byDay = new Map(items.map((item) => [dayOf(item), item]));
  return days.map((day) => {
    const item = byDay.get(day);
    return item === undefined ? missing : pick(item);
  });
}

/** The largest value of the series (stacked: of the per-label sums), 0 when there is none. */
export function maxOf(series: readonly (readonly (number | null)[])[], stacked = false): number {
  let max = 0;
  const length = Math.max(0, ...series.map((s) => s.length));
  for (let i = 0; i < length; i++) {
    const values = series.map((s) => s[i] ?? 0).map((v) => v ?? 0);
    const here = stacked ? values.reduce((a, b) => a + b, 0) : Math.max(0, ...values);
    if (here > max) max = here;
  }
  return max;
}
