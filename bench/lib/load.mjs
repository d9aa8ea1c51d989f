// Bounded closed-loop HTTP load on loopback: a fixed number of requests, a fixed number in flight.

/**
 * Runs `total` calls of `send(i)` with `concurrency` in flight; `send` resolves to true on the expected status.
 * Returns per-request latencies (ms), failures and requests per second over the whole batch.
 */
export async function closedLoop({ total, concurrency, send }) {
  const latencies = [];
  let failures = 0;
  let next = 0;
  let firstFailure = null;
  const start = performance.now();
  async function worker() {
    while (next < total) {
      const i = next;
      next += 1;
      const t0 = performance.now();
      try {
        const result = await send(i);
        if (result === true) latencies.push(performance.now() - t0);
        else {
          failures += 1;
          firstFailure ??= String(result);
        }
      } catch (error) {
        failures += 1;
        firstFailure ??= error instanceof Error ? error.message : String(error);
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - start) / 1000;
  return { latencies, failures, firstFailure, seconds, rps: total / seconds };
}
