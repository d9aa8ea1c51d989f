// A report's range of UTC calendar days from `from`/`to` query values: defaults, validation and a maximum length.
import { AppError } from "../errors";

const DAY_MS = 86_400_000;

/** Epoch ms of a `YYYY-MM-DD` that names a real calendar day, else null (2026-02-31 is not one). */
function dayStart(day: string): number | null {
  const ms = Date.parse(`${day}T00:00:00.000Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== day ? null : ms;
}

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

const invalid = (path: string, message: string) =>
  new AppError("bad_request", message, { details: [{ path, message }] });

/**
 * `to` defaults to today (UTC) and `from` to `defaultDays` days ending at `to`; both inclusive. A day that is not on
 * the calendar, `from` after `to`, or more than `maxDays` days is a 400 naming the field.
 */
export function dayRange(
  query: { from?: string | undefined; to?: string | undefined },
  limits: { defaultDays: number; maxDays: number; now?: number },
): { from: string; to: string } {
  const to = query.to ?? dayOf(limits.now ?? Date.now());
  const toMs = dayStart(to);
  if (toMs === null) throw invalid("to", "to must be a calendar date (YYYY-MM-DD).");
  const from = query.from ?? dayOf(toMs - (limits.defaultDays - 1) * DAY_MS);
  const fromMs = dayStart(from);
  if (fromMs === null) throw invalid("from", "from must be a calendar date (YYYY-MM-DD).");
  if (fromMs > toMs) throw invalid("from", "from must not be after to.");
  if ((toMs - fromMs) / DAY_MS + 1 > limits.maxDays) {
    throw invalid("from", `A report covers at most ${limits.maxDays} days.`);
  }
  return { from, to };
}
