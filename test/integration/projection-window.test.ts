// The coalesced projection: a thread drains to D1 at most once per window, every turn since the last drain in one
// batch, and a drain put off to the window's end survives an eviction through the object's alarm.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tenantQuota } from "../../src/auth/tenant-quota";
import {
  DEFAULT_PROJECTION_WINDOW_MS,
  projectionWindowMs,
} from "../../src/storage/projection/projection-lane";
import { EntryStore } from "../../src/storage/thread/entry-store";
import { readMeta } from "../../src/storage/thread/thread-meta";
import { converse, projectedEntries, threadEntries, threadStub } from "../helpers/projection";
import { inTestQuota } from "../helpers/test-tenant-quota";
import { inTestThread } from "../helpers/test-thread-agent";
import { launch, liveAgent } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const agentOptions = { artifact: { model: { provider: "local", model: "echo", local: { chunks: 3 } } } };

const sessionRow = z.object({ message_count: z.number(), version: z.number() });

async function d1Session(tenantId: string, threadId: string) {
  const row = await env.DB.prepare(
    "SELECT message_count, version FROM agent_sessions WHERE tenant_id = ? AND id = ?",
  )
    .bind(tenantId, threadId)
    .first();
  return row === null ? null : sessionRow.parse(row);
}

function withMessages(tenantId: string, threadId: string, count: number, timeoutMs = 5_000) {
  return waitFor(
    () => d1Session(tenantId, threadId),
    (row) => row?.message_count === count,
    { what: `${count} messages in D1's session row`, timeoutMs },
  );
}

describe("projection window", () => {
  it("drains the first turn at once and the turns inside the window in one batch at its end", async () => {
    const agent = await liveAgent(agentOptions);
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);
    await inTestThread(stub, (thread) => thread.setProjectionWindow(5_000));

    await converse(session, ["first"]);
    const first = await withMessages(agent.tenantId, session.threadId, 2);

    await converse(session, ["second", "third"]);
    // Both turns wait for the window's end; the object armed its alarm in case it is evicted meanwhile.
    expect(await d1Session(agent.tenantId, session.threadId)).toEqual(first);
    const armed = await inTestThread(stub, (thread) =>
      thread.getSchedules().filter((s) => s.callback === "projectionDue"),
    );
    expect(armed).toHaveLength(1);

    const after = await withMessages(agent.tenantId, session.threadId, 6, 12_000);
    // One drain carried both turns: the session row's version moved once.
    expect(after?.version).toBe((first?.version ?? 0) + 1);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual(await threadEntries(stub));
  });

  it("loses nothing when the object is evicted inside the window: its alarm wakes it and it drains", async () => {
    const agent = await liveAgent(agentOptions);
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);
    await inTestThread(stub, (thread) => thread.setProjectionWindow(4_000));

    await converse(session, ["before the window"]);
    await withMessages(agent.tenantId, session.threadId, 2);
    await converse(session, ["inside the window"]);
    expect((await d1Session(agent.tenantId, session.threadId))?.message_count).toBe(2);

    // The in-memory timer dies with the instance; only the alarm is left to bring the turn to D1.
    expect(await inTestThread(stub, (thread) => thread.timers.dropAll())).toBeGreaterThan(0);
    await evictDurableObject(stub);
    await withMessages(agent.tenantId, session.threadId, 4, 12_000);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual(await threadEntries(stub));
  });
});

describe("after a turn", () => {
  it("drains the reply while the tenant's quota object has not yet answered the run's release", async () => {
    const agent = await liveAgent(agentOptions);
    const session = await launch(agent.publicKey);
    const quota = tenantQuota(env, agent.tenantId);
    await inTestQuota(quota, (instance) => instance.holdEndRuns());
    try {
      await converse(session, ["first"]);
      await waitFor(
        () => inTestQuota(quota, (instance) => instance.heldEndRuns()),
        (held) => held === 1,
        { what: "the run's release waiting in the quota object" },
      );
      // The reply reaches D1 although the release is still unanswered.
      await withMessages(agent.tenantId, session.threadId, 2);
      expect(await inTestQuota(quota, (instance) => instance.heldEndRuns())).toBe(1);
    } finally {
      await inTestQuota(quota, (instance) => instance.releaseEndRuns());
    }
  });
});

describe("session row version", () => {
  it("rises by one per drain without a meta row per drain, and keeps rising after the object starts again", async () => {
    const agent = await liveAgent(agentOptions);
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);

    const reserved = () =>
      runInDurableObject(stub, (_i, state) => readMeta(state.storage, "projection_version"));
    await converse(session, ["one"]);
    const first = await withMessages(agent.tenantId, session.threadId, 2);
    const reservedAfterFirst = await reserved();
    await converse(session, ["two"]);
    const second = await withMessages(agent.tenantId, session.threadId, 4);
    expect(second?.version).toBe((first?.version ?? 0) + 1);
    // The second drain took its version from the block the first reserved: no meta row written for it.
    expect(await reserved()).toBe(reservedAfterFirst);
    expect(Number(reservedAfterFirst)).toBeGreaterThan(second?.version ?? 0);

    // A new instance continues above every version the old one reserved, so D1 takes its session row.
    await evictDurableObject(stub);
    await converse(session, ["three"]);
    const third = await withMessages(agent.tenantId, session.threadId, 6);
    expect(third?.version).toBeGreaterThan(second?.version ?? 0);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual(await threadEntries(stub));
  });
});

describe("PROJECTION_WINDOW_MS", () => {
  it("reads whole milliseconds, 0 for a drain per change, and falls back to the default otherwise", () => {
    expect(projectionWindowMs("0")).toBe(0);
    expect(projectionWindowMs("100")).toBe(100);
    expect(projectionWindowMs("999999")).toBe(60_000);
    for (const value of [undefined, "", "soon", "-1", "2.5"]) {
      expect(projectionWindowMs(value)).toBe(DEFAULT_PROJECTION_WINDOW_MS);
    }
  });
  it("follows a drain that left entries behind with the window's next drain, not an alarm a second later", async () => {
    const agent = await liveAgent(agentOptions);
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);
    await converse(session, ["first"]);
    await withMessages(agent.tenantId, session.threadId, 2);
    // More entries than one drain carries (a batch is 100).
    await runInDurableObject(stub, (_i, state) => {
      const entries = new EntryStore(state.storage, { now: () => Date.now() });
      let parent = entries.latestLeaf()?.id ?? null;
      for (let i = 0; i < 150; i += 1) {
        const appended = entries.append({
          parentId: parent,
          kind: "message",
          role: i % 2 === 0 ? "user" : "assistant",
          body: { text: `message ${i}` },
        });
        if (!appended.ok) throw new Error(appended.message);
        parent = appended.value.entry.id;
      }
    });
    await inTestThread(stub, (thread) => thread.drainOutbox());
    // The first drain carried 100 and left 50: no alarm of its own for them...
    const alarms = await inTestThread(stub, (thread) =>
      thread.getSchedules().filter((s) => s.callback === "drainOutbox"),
    );
    expect(alarms).toEqual([]);
    // ...the drain after it carried them.
    await withMessages(agent.tenantId, session.threadId, 152);
  });
});
