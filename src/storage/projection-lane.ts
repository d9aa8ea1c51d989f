// One drain or reconciliation at a time per thread object, each D1 call bounded in time, and one log line shape.
import type { ThreadBinding } from "./pin-store";

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
