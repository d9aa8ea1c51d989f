// The frame budget of a thread's visitor: a token bucket shared by all of the visitor's sockets on the thread, so a
// reconnect continues the bucket instead of starting a fresh burst (docs/protocol.md#limits).
import { z } from "zod";
import { LIMITS } from "../../shared/protocol";
import { readMeta, writeMeta } from "../../storage/thread/thread-meta";

/** What is left of a budget, and when it was last counted (epoch ms, the thread's clock). */
export interface FrameBucket {
  tokens: number;
  at: number;
}

/**
 * Spends one frame at `now`: the bucket refills at `LIMITS.framesPerSecond` up to `LIMITS.frameBurst`, and a new
 * budget starts full. Returns the bucket after the frame, or `null` when there is no frame left to spend.
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

/** The later of two snapshots of one bucket (the one counted last); on a tie, the emptier. */
export function laterBucket(a: FrameBucket | undefined, b: FrameBucket | undefined): FrameBucket | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a.at !== b.at) return a.at > b.at ? a : b;
  return a.tokens <= b.tokens ? a : b;
}

/** Kept in the thread's `meta` when a socket closes: what the owner's next socket continues from. */
const STORED_KEY = "frame_budget";

const storedBudget = z.object({ tokens: z.number(), at: z.number() });

export function readStoredBudget(storage: DurableObjectStorage): FrameBucket | undefined {
  const text = readMeta(storage, STORED_KEY);
  if (text === null) return undefined;
  try {
    const parsed = storedBudget.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** No subject is stored: a thread admits only its owner's sockets, so its one budget is that visitor's. */
export function writeStoredBudget(storage: DurableObjectStorage, bucket: FrameBucket): void {
  writeMeta(storage, STORED_KEY, JSON.stringify({ tokens: bucket.tokens, at: bucket.at }));
}
