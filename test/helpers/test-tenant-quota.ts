// A tenant quota object whose clock a test can move and whose attachment deletes a test can make fail: the production
// class, only its clock and its R2 bucket's `delete` replaced.
import { runInDurableObject } from "cloudflare:test";
import { TenantQuota } from "../../src/objects/tenant-quota";
import { DISCONNECT_BATCH } from "../../src/services/tenant-disconnect";
import { TestClock } from "./test-thread-agent";

/** The bucket as the object sees it: the real one, except that `delete` throws while `failing.on` is set. */
function failableBucket(bucket: R2Bucket, failing: { on: boolean }): R2Bucket {
  return new Proxy(bucket, {
    get(target, property) {
      if (property === "delete" && failing.on)
        return () => Promise.reject(new Error("R2 is unavailable (test)"));
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

export class TestTenantQuota extends TenantQuota {
  readonly clock: TestClock;
  /** Calls of each run method since this instance started (a cost the bench reports per 100 turns). */
  readonly calls: Record<"startRun" | "renewRun" | "endRun", number> = {
    startRun: 0,
    renewRun: 0,
    endRun: 0,
  };
  readonly #failingDeletes: { on: boolean };

  /** Threads a socket round asks per alarm (the production batch until a test lowers it); gone with an eviction. */
  readonly socketRounds: { batch: number; alarmsLeft: number | null; held: boolean };

  constructor(ctx: DurableObjectState, env: Env) {
    const clock = new TestClock();
    const failing = { on: false };
    const withBucket: Env = Object.create(env);
    Object.defineProperty(withBucket, "ATTACHMENTS", { value: failableBucket(env.ATTACHMENTS, failing) });
    const rounds = { batch: DISCONNECT_BATCH, alarmsLeft: null as number | null, held: false };
    super(ctx, withBucket, clock, () => rounds.batch);
    this.clock = clock;
    this.#failingDeletes = failing;
    this.socketRounds = rounds;
  }

  /**
   * With `socketRounds.alarmsLeft` set, that many alarms run; the next one stops before its step, leaving the work
   * and an alarm an hour off in storage (`held`), as an object that died between two batches.
   */
  override async alarm() {
    const rounds = this.socketRounds;
    if (rounds.alarmsLeft === 0) {
      rounds.held = true;
      await this.ctx.storage.setAlarm(Date.now() + 3_600_000);
      return;
    }
    if (rounds.alarmsLeft !== null) rounds.alarmsLeft -= 1;
    return super.alarm();
  }

  override startRun(...args: Parameters<TenantQuota["startRun"]>) {
    this.calls.startRun += 1;
    return super.startRun(...args);
  }

  override renewRun(...args: Parameters<TenantQuota["renewRun"]>) {
    this.calls.renewRun += 1;
    return super.renewRun(...args);
  }

  /** While set, `endRun` (a run giving its slot back) does not answer until `releaseEndRuns` is called. */
  #heldEndRuns: (() => void)[] | null = null;

  holdEndRuns(): void {
    this.#heldEndRuns ??= [];
  }

  /** Lets every held `endRun` answer, and the next ones go through at once. */
  releaseEndRuns(): number {
    const held = this.#heldEndRuns ?? [];
    this.#heldEndRuns = null;
    for (const go of held) go();
    return held.length;
  }

  heldEndRuns(): number {
    return this.#heldEndRuns?.length ?? 0;
  }

  override async endRun(...args: Parameters<TenantQuota["endRun"]>): Promise<void> {
    this.calls.endRun += 1;
    const held = this.#heldEndRuns;
    if (held !== null) await new Promise<void>((resolve) => held.push(resolve));
    return super.endRun(...args);
  }

  /** Makes this object's deletes of attachment bytes fail (`on`) or work again; gone with an eviction. */
  failAttachmentDeletes(on: boolean): void {
    this.#failingDeletes.on = on;
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
