// The thread's hand-over of its events to the tenant's events object when hand-overs overlap: the thread's upkeep, its
// start and its retry alarm each ask for one, and no event may be acknowledged without having been sent.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { Artifact } from "../../src/control/artifact";
import { ok } from "../../src/errors";
import type { ThreadBinding } from "../../src/storage/thread/pin-store";
import { recordThreadEvent, unforwardedEventCount } from "../../src/storage/thread/thread-events";
import { migrateThreadSchema } from "../../src/storage/thread/thread-schema";
import { forwardThreadEvents } from "../../src/thread/object/event-forwarding";

interface Accept {
  types: string[];
  answer: () => void;
}

/** An events object whose answers the test releases one by one (or at once, once `auto` is set). */
function gatedEvents() {
  const calls: Accept[] = [];
  let auto = false;
  const stub = {
    accept: (_tenantId: string, bodies: { type: string }[]) =>
      new Promise((resolve) => {
        const answer = () => resolve(ok({ accepted: bodies.length }));
        calls.push({ types: bodies.map((b) => b.type), answer });
        if (auto) answer();
      }),
  };
  const events = { idFromName: (name: string) => name, get: () => stub };
  return {
    env: { ...env, EVENTS: events } as unknown as Env,
    calls,
    releaseAll: () => {
      auto = true;
      for (const call of calls) call.answer();
    },
  };
}

const binding = (threadId: string): ThreadBinding => ({
  tenantId: "ten_forwarding",
  environment: "production",
  agentId: "agt_forwarding",
  threadId,
  versionId: "ver_forwarding",
  version: 1,
  digest: "sha256:forwarding",
  artifact: {} as Artifact,
  boundAt: 0,
});

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe("event hand-over", () => {
  it("sends an event recorded while two hand-overs overlap, though it took the seq of an acknowledged run event", async () => {
    const threadId = `thr_forwarding_${crypto.randomUUID().replace(/-/g, "")}`;
    const stub = env.THREAD.get(env.THREAD.idFromName(threadId));
    const result = await runInDurableObject(stub, async (_i, state) => {
      const storage = state.storage;
      migrateThreadSchema(storage);
      const events = gatedEvents();
      const deps = { storage, env: events.env, now: () => Date.now(), retryIn: async () => {} };
      recordThreadEvent(storage, { type: "run.succeeded", data: { threadId } }, Date.now());
      // Two hand-overs asked for at once (the turn's drain and the object's start, say).
      const first = forwardThreadEvents(deps, binding(threadId));
      const second = forwardThreadEvents(deps, binding(threadId));
      while (events.calls.length === 0) await tick();
      // The first is acknowledged: the run event is deleted, the watermark stays where it was.
      events.calls[0]?.answer();
      await first;
      // A new event takes the freed seq; then whatever else is in flight is answered.
      recordThreadEvent(storage, { type: "approval.requested", data: { threadId } }, Date.now());
      events.releaseAll();
      await second;
      // The next change's hand-over.
      await forwardThreadEvents(deps, binding(threadId));
      return { sent: events.calls.flatMap((c) => c.types), left: unforwardedEventCount(storage) };
    });
    expect(result.sent).toContain("approval.requested");
    expect(result.sent.filter((type) => type === "approval.requested")).toHaveLength(1);
    expect(result.left).toBe(0);
  });
});
