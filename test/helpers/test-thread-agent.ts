// A thread object whose clock and keep-alive timer a test can drive: the production class, only its settings replaced.
import { runInDurableObject } from "cloudflare:test";
import { ThreadAgent } from "../../src/objects/thread-agent";
import type { ThreadAddress } from "../../src/thread/contract";
import { THREAD_SETTINGS } from "../../src/thread/object/thread-settings";
import { StorageMeter } from "./storage-meter";

/** The object's clock: real time plus however far a test has moved it on. */
export class TestClock {
  #offsetMs = 0;

  now(): number {
    return Date.now() + this.#offsetMs;
  }

  advance(ms: number): void {
    this.#offsetMs += ms;
  }
}

/** Real timers that a test may also fire at once, so "after a while" needs no sleep. */
export class TestTimers {
  readonly #pending = new Map<number, () => void>();
  readonly #timeouts = new Map<number, () => void>();
  #next = 0;

  after(ms: number, fn: () => void): () => void {
    const id = this.#next++;
    const timer = setTimeout(() => this.#fire(id), ms);
    this.#timeouts.set(id, () => clearTimeout(timer));
    this.#pending.set(id, () => {
      clearTimeout(timer);
      fn();
    });
    return () => {
      clearTimeout(timer);
      this.#pending.delete(id);
      this.#timeouts.delete(id);
    };
  }

  /** Fires every pending timer now; returns how many there were. */
  fireAll(): number {
    const ids = [...this.#pending.keys()];
    for (const id of ids) this.#fire(id);
    return ids.length;
  }

  /** Cancels every pending timer without firing it, as an instance that dies takes its timers with it. */
  dropAll(): number {
    const ids = [...this.#pending.keys()];
    for (const id of ids) this.#timeouts.get(id)?.();
    this.#pending.clear();
    this.#timeouts.clear();
    return ids.length;
  }

  #fire(id: number): void {
    const fire = this.#pending.get(id);
    this.#pending.delete(id);
    this.#timeouts.delete(id);
    fire?.();
  }
}

export class TestThreadAgent extends ThreadAgent {
  readonly clock: TestClock;
  readonly timers: TestTimers;
  /** Counts the rows (and alarms) this instance's storage writes while a test has it started. */
  readonly meter: StorageMeter;
  readonly #window: { ms: number | null };

  constructor(ctx: DurableObjectState, env: Env) {
    const clock = new TestClock();
    const timers = new TestTimers();
    const window: { ms: number | null } = { ms: null };
    const meter = new StorageMeter();
    meter.install(ctx);
    super(ctx, env, {
      ...THREAD_SETTINGS,
      now: () => clock.now(),
      after: (ms, fn) => timers.after(ms, fn),
      get projectionWindowMs() {
        return window.ms;
      },
    });
    this.clock = clock;
    this.timers = timers;
    this.meter = meter;
    this.#window = window;
  }

  /** This instance's projection window (tests run with `PROJECTION_WINDOW_MS` 0); gone with an eviction. */
  setProjectionWindow(ms: number): void {
    this.#window.ms = ms;
  }

  /** Asks to re-check sockets this instance received, and how many of the next ones throw (as an RPC cut off). */
  readonly rechecks = { asked: 0, failNext: 0 };

  override async recheckSockets(address: ThreadAddress) {
    this.rechecks.asked += 1;
    if (this.rechecks.failNext > 0) {
      this.rechecks.failNext -= 1;
      throw new Error("the ask was cut off (test)");
    }
    return super.recheckSockets(address);
  }

  /** A test marks an object with `failErasure` to stand for the Worker being cut off while erasing it. */
  override async eraseThread(address: ThreadAddress) {
    if ((await this.ctx.storage.get(FAIL_ERASURE_KEY)) === true) throw new Error("cut off mid-erasure");
    return super.eraseThread(address);
  }
}

const FAIL_ERASURE_KEY = "test:fail-erasure";

/** Makes the object's next erasures throw (`on`) or proceed again. */
export function failErasure(stub: DurableObjectStub<ThreadAgent>, on: boolean): Promise<void> {
  return runInDurableObject(stub, async (_instance, state) => {
    if (on) await state.storage.put(FAIL_ERASURE_KEY, true);
    else await state.storage.delete(FAIL_ERASURE_KEY);
  });
}

/** Runs `fn` inside a thread object, which the test Worker entry makes a TestThreadAgent. */
export function inTestThread<R>(
  stub: DurableObjectStub<ThreadAgent>,
  fn: (instance: TestThreadAgent) => R | Promise<R>,
): Promise<R> {
  return runInDurableObject(stub, (instance: ThreadAgent) => {
    if (!(instance instanceof TestThreadAgent)) throw new Error("tests must run the test Worker entry");
    return fn(instance);
  });
}
