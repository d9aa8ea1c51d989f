// One drain or reconciliation at a time per thread object, each D1 call bounded in time, and one log line shape.
import type { ThreadBinding } from "../thread/pin-store";

/** What every projection step is given: the thread's storage, D1, the thread's binding and the clock. */
export interface ProjectionInput {
  storage: DurableObjectStorage;
  db: D1Database;
  binding: ThreadBinding;
  now: () => number;
}

/** A D1 call that has not answered by then counts as failed (the batch is idempotent if it lands later). */
const D1_TIMEOUT_MS = 30_000;

// Two overlapping drains would read the same rows, and a delete by seq after a concurrent delete could hit a reused
// seq: every step for one object waits for the one before it.
const tails = new WeakMap<DurableObjectStorage, Promise<unknown>>();

export function serialized<T>(storage: DurableObjectStorage, task: () => Promise<T>): Promise<T> {
  const previous = tails.get(storage) ?? Promise.resolve();
  const run = previous.then(task, task);
  tails.set(
    storage,
    run.catch(() => undefined),
  );
  return run;
}

/** Steps are serialized, so a D1 call that never settles must not hold up every later one. */
export async function withinTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`D1 did not answer within ${D1_TIMEOUT_MS} ms`)),
      D1_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

export function logProjection(
  level: "warn" | "error",
  message: string,
  fields: Record<string, unknown>,
): void {
  console.log(JSON.stringify({ level, message, ...fields }));
}

/** The default window: a thread drains to D1 at most this often (`PROJECTION_WINDOW_MS`). */
export const DEFAULT_PROJECTION_WINDOW_MS = 250;
const MAX_PROJECTION_WINDOW_MS = 60_000;

/** `PROJECTION_WINDOW_MS` as a number of milliseconds: 0 drains after every change; unset or unreadable, the default. */
export function projectionWindowMs(value: string | undefined): number {
  if (value === undefined || value.trim() === "") return DEFAULT_PROJECTION_WINDOW_MS;
  const ms = Number(value);
  if (!Number.isInteger(ms) || ms < 0) return DEFAULT_PROJECTION_WINDOW_MS;
  return Math.min(ms, MAX_PROJECTION_WINDOW_MS);
}

export interface ProjectionWindowOptions {
  /** At most one drain starts per window (read at each request); 0 drains on every request. */
  windowMs: () => number;
  now: () => number;
  /** Runs `fn` after `ms` (an in-memory timer); the returned function cancels it. */
  after: (ms: number, fn: () => void) => () => void;
  /** The drain itself: everything the thread holds that D1 lacks, in one batch. */
  drain: () => Promise<void>;
  /**
   * Makes the object wake within about `ms` even if it is evicted first (a durable alarm), so a drain put off to the
   * window's end is never lost with the timer. Its failure is logged; the timer still runs.
   */
  arm: (ms: number) => Promise<void>;
}

/**
 * Coalesces a thread's drains: the first change after a quiet window drains at once; changes inside the window wait
 * for its end and go in one drain, whatever their number. A drain never starts while the previous one is in flight:
 * changes made meanwhile wait for it to settle and go together in the next, so the window stretches to the drain's own
 * duration when D1 or the isolate is slow (many turns: fewer, larger drains), and a change still waits no longer than
 * it did when each drain queued behind the one before it. A deferred drain is backed by `arm`, so an eviction inside
 * the window delays it (to the alarm) but never loses it; what a drain carries is read from storage when it runs.
 */
export class ProjectionWindow {
  readonly #options: ProjectionWindowOptions;
  #lastStartAt = Number.NEGATIVE_INFINITY;
  /** The drain in flight, if any. */
  #running: Promise<void> | null = null;
  #deferred: Promise<void> | null = null;
  /** An alarm armed by this window is still waiting (cleared when it runs, `alarmRan`): arming again would change nothing. */
  #armed = false;

  constructor(options: ProjectionWindowOptions) {
    this.#options = options;
  }

  /** A change was committed: resolves once a drain that started after it has settled. */
  request(): Promise<void> {
    if (this.#deferred !== null) return this.#deferred;
    const wait = this.#rest();
    if (wait <= 0 && this.#running === null) return this.#drainNow();
    const deferred = this.#defer(wait, this.#running);
    this.#deferred = deferred;
    return deferred;
  }

  /** Milliseconds left of the current window (0 or less: none). */
  #rest(): number {
    const windowMs = this.#options.windowMs();
    return windowMs <= 0 ? 0 : this.#lastStartAt + windowMs - this.#options.now();
  }

  async #defer(wait: number, running: Promise<void> | null): Promise<void> {
    // Only the window's wait needs the alarm: a drain in flight is kept alive by its caller, as before. One alarm waiting
    // covers every deferred drain until it runs: woken by it, the object drains all that waits.
    if (wait > 0 && !this.#armed) {
      try {
        this.#armed = true;
        await this.#options.arm(wait);
      } catch (error) {
        this.#armed = false;
        logProjection("warn", "projection alarm not armed; the timer still drains", { error: String(error) });
      }
    }
    if (running !== null) await running.catch(() => undefined);
    const rest = this.#rest();
    if (rest > 0) {
      await new Promise<void>((resolve) => {
        this.#options.after(rest, resolve);
      });
    }
    this.#deferred = null;
    await this.#drainNow();
  }

  /** The alarm `arm` set has run (the object's `projectionDue`): the next deferred drain arms another. */
  alarmRan(): void {
    this.#armed = false;
  }

  #drainNow(): Promise<void> {
    this.#lastStartAt = this.#options.now();
    const run: Promise<void> = this.#options.drain().finally(() => {
      if (this.#running === run) this.#running = null;
    });
    this.#running = run;
    return run;
  }
}
