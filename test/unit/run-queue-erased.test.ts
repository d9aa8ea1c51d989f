// A run that ends as its thread is erased asks the queue for the next turn after the thread's tables are gone; every
// caller starts `advance` without awaiting it, so it must settle, not reject (an unhandled rejection in the object).
import { describe, expect, it, vi } from "vitest";
import { RunQueue, type RunQueueDeps } from "../../src/thread/run/run-queue";

describe("the run queue of an erased thread", () => {
  it("advances to nothing when its table cannot be read, and logs why", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const queue = new RunQueue({
      queue: {
        count: () => {
          throw new Error("no such table: queued_turns: SQLITE_ERROR");
        },
      },
      live: () => null,
    } as unknown as RunQueueDeps);
    await expect(queue.advance()).resolves.toBeUndefined();
    expect(errors.mock.calls.flat().join(" ")).toContain("queue unreadable");
    errors.mockRestore();
  });
});
