// Whether some active agent allows an Origin: one indexed D1 read, skipped while this isolate remembers the origin as
// allowed by none (a short-lived negative cache; docs/decisions.md, "Origin look-ups before any credential").
import { originLookupKeys } from "../shared/origin-policy";
import { anyAgentAllowsOrigin } from "../storage/d1/agent-origins";
import { ExpiringSet } from "./expiring-set";

/** How long an origin no agent allowed is answered "unknown" without asking D1 again, in this isolate. */
export const UNKNOWN_ORIGIN_TTL_MS = 30_000;
export const UNKNOWN_ORIGIN_CACHE_MAX = 10_000;

const unknownOrigins = new ExpiringSet(UNKNOWN_ORIGIN_CACHE_MAX);

/**
 * True when some active agent allows `origin`. `beforeRead` runs only when D1 must be asked, and may throw to refuse
 * (the preflight limit), so answers from the cache cost no limiter call.
 */
export async function originKnown(
  db: D1Database,
  origin: string,
  options: { now?: number; beforeRead?: () => Promise<void> } = {},
): Promise<boolean> {
  const keys = originLookupKeys(origin);
  const [exact] = keys;
  if (exact === undefined) return false;
  const now = options.now ?? Date.now();
  if (unknownOrigins.has(exact, now)) return false;
  await options.beforeRead?.();
  const known = await anyAgentAllowsOrigin(db, keys);
  if (!known) unknownOrigins.add(exact, now + UNKNOWN_ORIGIN_TTL_MS);
  return known;
}

/** Forgets every remembered unknown origin in this isolate; agent writes call it so a new origin works at once here. */
export function forgetUnknownOrigins(): void {
  unknownOrigins.clear();
}

/** How many unknown origins this isolate remembers (for tests). */
export function unknownOriginCount(): number {
  return unknownOrigins.size;
}
