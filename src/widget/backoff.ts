// When the widget reconnects after a socket closes, and how long it waits: pure, so the policy is unit-tested.
import { isTerminalCloseCode, WS_CLOSE_IDLE } from "../shared/errors";

const BASE_MS = 500;
const CAP_MS = 30_000;
const RATE_LIMITED_MIN_MS = 5_000;

/**
 * What to do after a close:
 * - `reconnect`: transient (1006 abnormal, 1011 internal, 1012 restart, 1013 try later, 1001 going away…) → backoff.
 * - `relaunch`: the token was refused or expired (4401) → get a fresh token, then reconnect.
 * - `idle`: the server closed an idle socket (4408) → reconnect only when there is something to do.
 * - `rate_limited`: 4429 → reconnect after a longer backoff.
 * - `stop`: any other 44xx is terminal: the same request would be refused again.
 */
export type CloseAction = "reconnect" | "relaunch" | "idle" | "rate_limited" | "stop";

export function closeAction(code: number): CloseAction {
  if (code === 4401) return "relaunch";
  if (code === WS_CLOSE_IDLE) return "idle";
  if (code === 4429) return "rate_limited";
  if (isTerminalCloseCode(code)) return "stop";
  return "reconnect";
}

/**
 * Exponential backoff with jitter: attempt 0 waits 250–500 ms, doubling up to a 15–30 s cap. The random half keeps
 * many widgets that lost the same server from reconnecting in lockstep. `random` is injectable for tests.
 */
export function backoffDelay(attempt: number, random: () => number = Math.random, minMs = 0): number {
  const ceiling = Math.min(CAP_MS, BASE_MS * 2 ** Math.max(0, Math.min(attempt, 16)));
  const delay = Math.round(ceiling * (0.5 + random() * 0.5));
  return Math.max(delay, minMs);
}

/** Backoff after a 4429 close or a 429 launch: never sooner than the server asked, nor than a few seconds. */
export function rateLimitedDelay(
  attempt: number,
  retryAfterSeconds?: number,
  random: () => number = Math.random,
) {
  const asked = retryAfterSeconds !== undefined && retryAfterSeconds > 0 ? retryAfterSeconds * 1000 : 0;
  return backoffDelay(attempt, random, Math.max(RATE_LIMITED_MIN_MS, Math.min(asked, 5 * 60_000)));
}
