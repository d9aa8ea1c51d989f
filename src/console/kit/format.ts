// Formatting shared by the data screens: times, counts, durations, in the reader's locale.
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const count = new Intl.NumberFormat();

export const formatTime = (iso: string): string => {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? iso : dateTime.format(ms);
};

export const formatCount = (n: number): string => count.format(n);

export const formatMs = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? "—" : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms} ms`;

/** "1 message", "3 messages". */
export const plural = (n: number, one: string, many = `${one}s`): string =>
  `${formatCount(n)} ${n === 1 ? one : many}`;

/** Today's UTC day, and the day `days` before it, as `YYYY-MM-DD` (the API's days are UTC). */
export function utcDay(offsetDays = 0, from = Date.now()): string {
  return new Date(from + offsetDays * 86_400_000).toISOString().slice(0, 10);
}
