// ProjectionWindow's throttle: the first request drains at once, requests inside the window share one drain at its
// end (armed first, one alarm at a time), a window of 0 drains on every request, and no drain starts while one is in flight.
import { describe, expect, it } from "vitest";
import { ProjectionWindow } from "../../src/storage/projection/projection-lane";

function harness(windowMs: number) {
  let now = 1_000;
  const timers: { at: number; fn: () => void }[] = [];
  const drains: number[] = [];
  const armed: number[] = [];
  const window = new ProjectionWindow({
    windowMs: () => windowMs,
    now: () => now,
    after: (ms, fn) => {
      timers.push({ at: now + ms, fn });
      return () => {};
    },
    drain: async () => {
      drains.push(now);
    },
    arm: async (ms) => {
      armed.push(ms);
    },
  });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  return {
    window,
    drains,
    armed,
    settle,
    /** Moves the clock on and fires the timers due by then. */
    async advance(ms: number) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      for (const t of due) timers.splice(timers.indexOf(t), 1);
      for (const t of due) t.fn();
      await settle();
    },
  };
}

describe("ProjectionWindow", () => {
  it("drains the first change at once and the changes inside the window in one drain at its end", async () => {
    const h = harness(250);
    await h.window.request();
    expect(h.drains).toEqual([1_000]);

    await h.advance(50);
    const second = h.window.request();
    const third = h.window.request();
    await h.settle();
    // Put off to the window's end, with the alarm armed for the rest of the window.
    expect(h.drains).toEqual([1_000]);
    expect(h.armed).toEqual([200]);
    await h.advance(200);
    await Promise.all([second, third]);
    expect(h.drains).toEqual([1_000, 1_250]);
    expect(h.armed).toHaveLength(1);

    // A quiet window later, the next change drains at once again, with no alarm.
    await h.advance(400);
    await h.window.request();
    expect(h.drains).toEqual([1_000, 1_250, 1_650]);
    expect(h.armed).toHaveLength(1);
  });

  it("drains on every request with a window of 0", async () => {
    const h = harness(0);
    await h.window.request();
    await h.window.request();
    await h.window.request();
    expect(h.drains).toHaveLength(3);
    expect(h.armed).toEqual([]);
  });

  it("starts no drain while one is in flight: every change made meanwhile goes in one drain once it settled", async () => {
    let now = 0;
    const started: number[] = [];
    const finishers: (() => void)[] = [];
    const armed: number[] = [];
    const window = new ProjectionWindow({
      windowMs: () => 100,
      now: () => now,
      after: () => {
        throw new Error("no window wait expected: the drain in flight outlasts the window");
      },
      drain: () => {
        started.push(now);
        return new Promise<void>((resolve) => finishers.push(resolve));
      },
      arm: async (ms) => {
        armed.push(ms);
      },
    });
    const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
    const first = window.request();
    // Slow D1: the window is long over, the first drain is still in flight, and three turns ended meanwhile.
    now = 400;
    const later = [window.request(), window.request()];
    now = 900;
    later.push(window.request());
    await settle();
    expect(started).toEqual([0]);
    // Waiting behind a drain in flight arms nothing: its caller keeps the object alive.
    expect(armed).toEqual([]);

    now = 1_000;
    finishers[0]?.();
    await first;
    await settle();
    expect(started).toEqual([0, 1_000]);
    finishers[1]?.();
    await Promise.all(later);
    expect(started).toHaveLength(2);
  });

  it("with a window of 0, a change made during a drain still gets a drain that starts after it", async () => {
    const started: number[] = [];
    const finishers: (() => void)[] = [];
    let now = 0;
    const window = new ProjectionWindow({
      windowMs: () => 0,
      now: () => now,
      after: (_ms, fn) => {
        fn();
        return () => {};
      },
      drain: () => {
        started.push(now);
        return new Promise<void>((resolve) => finishers.push(resolve));
      },
      arm: async () => {},
    });
    const first = window.request();
    now = 5;
    let secondDone = false;
    const second = window.request().then(() => {
      secondDone = true;
    });
    finishers[0]?.();
    await first;
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(started).toEqual([0, 5]);
    expect(secondDone).toBe(false);
    finishers[1]?.();
    await second;
    expect(secondDone).toBe(true);
  });

  it("arms one alarm for every deferred drain until it has run, then arms again", async () => {
    const h = harness(250);
    await h.window.request();
    for (const _ of [1, 2, 3]) {
      await h.advance(100);
      const deferred = h.window.request();
      await h.advance(150);
      await deferred;
    }
    // Three drains put off to their window's end, one alarm armed: the first is still waiting.
    expect(h.drains).toHaveLength(4);
    expect(h.armed).toEqual([150]);
    h.window.alarmRan();
    await h.advance(100);
    const next = h.window.request();
    await h.advance(150);
    await next;
    expect(h.armed).toEqual([150, 150]);
  });

  it("still drains at the window's end when arming the alarm fails", async () => {
    let timer: (() => void) | null = null;
    let drains = 0;
    let now = 0;
    const window = new ProjectionWindow({
      windowMs: () => 100,
      now: () => now,
      after: (_ms, fn) => {
        timer = fn;
        return () => {};
      },
      drain: async () => {
        drains += 1;
      },
      arm: async () => {
        throw new Error("storage reset");
      },
    });
    await window.request();
    now = 10;
    const deferred = window.request();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(drains).toBe(1);
    (timer as (() => void) | null)?.();
    await deferred;
    expect(drains).toBe(2);
  });
});
