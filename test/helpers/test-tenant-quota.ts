// A tenant quota object whose clock a test can move: the production class, only its clock replaced.
import { runInDurableObject } from "cloudflare:test";
import { TenantQuota } from "../../src/objects/tenant-quota";
import { TestClock } from "./test-thread-agent";

export class TestTenantQuota extends TenantQuota {
  readonly clock: TestClock;

  constructor(ctx: DurableObjectState, env: Env) {
    const clock = new TestClock();
    super(ctx, env, clock);
    this.clock = clock;
  }
}

/** Runs `fn` inside a tenant's quota object, which the test Worker entry makes a TestTenantQuota. */
export function inTestQuota<R>(
  stub: DurableObjectStub<TenantQuota>,
  fn: (instance: TestTenantQuota, state: DurableObjectState) => R | Promise<R>,
): Promise<R> {
  return runInDurableObject(stub, (instance: TenantQuota, state) => {
    if (!(instance instanceof TestTenantQuota)) throw new Error("tests must run the test Worker entry");
    return fn(instance, state);
  });
}
