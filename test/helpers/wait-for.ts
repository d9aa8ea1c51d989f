// Waiting for a state instead of sleeping: re-reads a value until it is the one a test needs, or fails saying why.

export interface WaitForOptions {
  /** What is awaited, for the failure message. */
  what: string;
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Re-reads `read()` until `done(value)` holds and returns that value. A read that throws counts as "not yet" (an
 * object resetting, a row not written); at the deadline the last value or error is in the failure.
 */
export async function waitFor<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  { what, timeoutMs = 5_000, intervalMs = 20 }: WaitForOptions,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: { value: T } | { error: unknown } | undefined;
  for (;;) {
    try {
      const value = await read();
      if (done(value)) return value;
      last = { value };
    } catch (error) {
      last = { error };
    }
    if (Date.now() >= deadline) {
      const seen =
        last === undefined ? "nothing" : "value" in last ? JSON.stringify(last.value) : String(last.error);
      throw new Error(`timed out waiting for ${what}; last saw ${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
