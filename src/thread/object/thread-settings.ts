// The thread object's clock, timers and thresholds in one place, so a test-only subclass can replace them whole.

export interface ThreadSettings {
  /** Epoch milliseconds: stamps entries, runs and socket activity, and is the clock retention runs at. */
  now(): number;
  /** Runs `fn` after `ms`; the returned function cancels it. */
  after(ms: number, fn: () => void): () => void;
  /**
   * A turn arms the SDK's keep-alive heartbeat only once it has run this long. Idle eviction needs 70–140 s without
   * an event and the heartbeat's first beat comes after 30 s, so arming at 10 s protects a long stream exactly as
   * arming at once would, while a turn that ends sooner (nearly all of them) skips two alarm reschedules.
   */
  keepAliveAfterMs: number;
  /**
   * The socket alarm (src/thread/object/upkeep.ts) wakes at the earliest of the open sockets' idle deadlines and their
   * standing recheck (src/thread/object/socket-watch.ts); this is its first wake after a socket opens (the agent's
   * idle timeout is not known yet) and its retry after a standing read that failed.
   */
  socketRetrySeconds: number;
  /** How often a thread with turns queued behind a run checks that they still get their turn (after its death too). */
  queueCheckSeconds: number;
  /** The projection window in ms; null reads `PROJECTION_WINDOW_MS` (src/storage/projection/projection-lane.ts). */
  projectionWindowMs: number | null;
}

export const THREAD_SETTINGS: Readonly<ThreadSettings> = {
  now: () => Date.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
  keepAliveAfterMs: 10_000,
  socketRetrySeconds: 30,
  queueCheckSeconds: 30,
  projectionWindowMs: null,
};
