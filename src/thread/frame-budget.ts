// The per-socket frame budget: a token bucket kept in the socket's connection state, so hibernation keeps it too.
import { LIMITS } from "../shared/protocol";

/** What is left of a socket's budget, and when it was last counted (epoch ms, the thread's clock). */
export interface FrameBucket {
  tokens: number;
  at: number;
}

/**
 * Spends one frame at `now`: the bucket refills at `LIMITS.framesPerSecond` up to `LIMITS.frameBurst`, and a new
 * socket starts full. Returns the bucket after the frame, or `null` when the socket has no frame left to spend.
 */
export function spendFrame(bucket: FrameBucket | undefined, now: number): FrameBucket | null {
  const capacity = LIMITS.frameBurst;
  const start = bucket ?? { tokens: capacity, at: now };
  // A clock that moved backwards refills nothing (and takes nothing away).
  const elapsedMs = Math.max(0, now - start.at);
  const tokens = Math.min(capacity, start.tokens + (elapsedMs / 1000) * LIMITS.framesPerSecond);
  if (tokens < 1) return null;
  return { tokens: tokens - 1, at: Math.max(now, start.at) };
}
