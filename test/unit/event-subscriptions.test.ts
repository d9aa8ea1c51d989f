// The thread's copy of its tenant's subscribed event types: what it skips, and what makes it hand everything over again.
import { describe, expect, it } from "vitest";
import { EventSubscriptions, SUBSCRIPTION_LEASE_MS } from "../../src/events/subscriptions";

describe("EventSubscriptions", () => {
  it("wants every event until it learns the set, then only the subscribed types until the lease ends", () => {
    const subs = new EventSubscriptions();
    expect(subs.wanted("run.succeeded", 0)).toBe(true);
    subs.learn({ types: ["thread.created"], epoch: 0 }, 1_000);
    expect(subs.wanted("run.succeeded", 1_000)).toBe(false);
    expect(subs.wanted("thread.created", 1_000)).toBe(true);
    expect(subs.wanted("run.succeeded", 1_000 + SUBSCRIPTION_LEASE_MS)).toBe(true);
  });

  it("forgets the set on a change and ignores a set answered before that change, even if it arrives after it", () => {
    const subs = new EventSubscriptions();
    subs.learn({ types: [], epoch: 3 }, 0);
    subs.changed(4);
    expect(subs.wanted("run.succeeded", 1)).toBe(true);
    // The hand-over that crossed the change on the way back: its set is from epoch 3.
    subs.learn({ types: [], epoch: 3 }, 1);
    expect(subs.wanted("run.succeeded", 2)).toBe(true);
    subs.learn({ types: ["run.succeeded"], epoch: 4 }, 2);
    expect(subs.wanted("run.succeeded", 3)).toBe(true);
    expect(subs.wanted("run.failed", 3)).toBe(false);
  });
});
