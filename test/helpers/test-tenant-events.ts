// A tenant events object whose deliveries reach the test's fake receivers, retried after milliseconds, not minutes.
import { runInDurableObject } from "cloudflare:test";
import { TenantEvents } from "../../src/objects/tenant-events";
import { receiverFetch } from "./fake-receiver";
import { TestClock } from "./test-thread-agent";

/** The waits after each failed attempt in tests: as many as in production, short enough to await. */
export const TEST_RETRY_DELAYS_MS = [50, 100, 150, 200, 250, 300, 350];

export class TestTenantEvents extends TenantEvents {
  /** The object's clock (real time unless a test moves it on): what its delivery log and limits are stamped with. */
  readonly clock: TestClock;
  /** Hand-overs this instance was asked to accept (`accept` calls), so a test sees when a thread sends none. */
  accepts = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    const clock = new TestClock();
    super(ctx, env, { now: () => clock.now(), fetch: receiverFetch, retryDelaysMs: TEST_RETRY_DELAYS_MS });
    this.clock = clock;
  }

  override accept(...args: Parameters<TenantEvents["accept"]>): ReturnType<TenantEvents["accept"]> {
    this.accepts += 1;
    return super.accept(...args);
  }
}

/** Runs `fn` inside a tenant's events object, which the test Worker entry makes a TestTenantEvents. */
export function inTestEvents<R>(
  stub: DurableObjectStub<TenantEvents>,
  fn: (instance: TestTenantEvents, state: DurableObjectState) => R | Promise<R>,
): Promise<R> {
  return runInDurableObject(stub, (instance: TenantEvents, state) => {
    if (!(instance instanceof TestTenantEvents)) throw new Error("tests must run the test Worker entry");
    return fn(instance, state);
  });
}
