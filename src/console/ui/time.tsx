// "3 minutes ago" for a timestamp, with the exact local time on hover and in the machine-readable attribute; every
// shown relative time moves on once a minute.
import { signal } from "@preact/signals";

const now = signal(Date.now());
let ticking = false;

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["week", 7 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
];

const relative = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

/** "in 2 hours", "yesterday", "just now": the largest unit the distance fills. */
export function relativeTime(at: Date, from: number = Date.now()): string {
  const seconds = Math.round((at.getTime() - from) / 1000);
  const size = Math.abs(seconds);
  if (size < 45) return "just now";
  for (const [unit, unitSeconds] of UNITS) {
    if (size >= unitSeconds || unit === "minute")
      return relative.format(Math.round(seconds / unitSeconds), unit);
  }
  return "just now";
}

export function RelativeTime(props: { iso: string }) {
  if (!ticking) {
    ticking = true;
    setInterval(() => {
      now.value = Date.now();
    }, 60_000);
  }
  const at = new Date(props.iso);
  if (Number.isNaN(at.getTime())) return <span>{props.iso}</span>;
  return (
    <time dateTime={props.iso} title={at.toLocaleString()}>
      {relativeTime(at, now.value)}
    </time>
  );
}
