// Retention with a controlled clock: the thread's own pass, its exact mirror in D1, and the scheduled job over D1.
import {
  createExecutionContext,
  createScheduledController,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { artifactSchema } from "../../src/control/artifact";
import worker from "../../src/index";
import { runRetentionJob } from "../../src/jobs/retention";
import { insertThread } from "../../src/storage/d1/thread-registry";
import { projectedEntrySeq } from "../../src/storage/projection/outbox";
import { drainOutbox } from "../../src/storage/projection/projection-drain";
import { EntryStore } from "../../src/storage/thread/entry-store";
import type { ThreadBinding } from "../../src/storage/thread/pin-store";
import { RunStore } from "../../src/storage/thread/run-store";
import { applyThreadRetention } from "../../src/storage/thread/thread-retention";
import { migrateThreadSchema } from "../../src/storage/thread/thread-schema";
import { ToolCallStore } from "../../src/storage/thread/tool-call-store";
import {
  converse,
  drainThread,
  launchFor,
  projectedEntries,
  threadEntries,
  threadStub,
} from "../helpers/projection";
import { validArtifact } from "../helpers/tenants";
import { inTestThread } from "../helpers/test-thread-agent";
import { liveAgent } from "../helpers/threads";

const DAY_MS = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);
const at = (days: number) => T0 + days * DAY_MS;

/** A thread object with a registry row and a binding, filled by hand so every timestamp is chosen. */
async function handMadeThread(retention: { maxAgeDays?: number; maxMessagesPerThread?: number }) {
  const tenantId = `ten_${crypto.randomUUID().replace(/-/g, "")}`;
  const threadId = `thr_${crypto.randomUUID().replace(/-/g, "")}`;
  await insertThread(env.DB, {
    tenantId,
    id: threadId,
    agentId: "agt_retention",
    environment: "development",
    subject: "user-1",
    subjectKind: "user",
    createdAt: new Date(T0).toISOString(),
  });
  const binding: ThreadBinding = {
    tenantId,
    environment: "development",
    agentId: "agt_retention",
    threadId,
    versionId: "ver_retention",
    version: 1,
    digest: `sha256:${"0".repeat(64)}`,
    artifact: artifactSchema.parse(validArtifact({ limits: { retention } })),
    boundAt: T0,
  };
  return {
    tenantId,
    threadId,
    binding,
    stub: env.THREAD.get(env.THREAD.idFromName(`retention-${threadId}`)),
  };
}

describe("applyThreadRetention", () => {
  it("deletes by age and by count, keeps a live run's entries, re-roots survivors, and D1 follows exactly", async () => {
    const t = await handMadeThread({ maxAgeDays: 30 });
    const drain = (now: number) =>
      runInDurableObject(t.stub, (_i, state) =>
        drainOutbox({ storage: state.storage, db: env.DB, binding: t.binding, now: () => now }),
      );

    const ids = await runInDurableObject(t.stub, (_i, state) => {
      migrateThreadSchema(state.storage);
      let clock = at(0);
      const entries = new EntryStore(state.storage, { now: () => clock });
      const runs = new RunStore(state.storage, { now: () => clock });
      const toolCalls = new ToolCallStore(state.storage, { now: () => clock });
      const put = (id: string, parentId: string | null, role: "user" | "assistant", runId?: string) => {
        const appended = entries.append({
          id,
          parentId,
          kind: "message",
          role,
          body: { text: id },
          ...(runId ? { runId } : {}),
        });
        if (!appended.ok) throw new Error(appended.message);
      };
      put("u1", null, "user");
      put("a1", "u1", "assistant");
      // A regenerate of u1 that is still queued: its user message and its entries must survive.
      runs.create({ id: "r-live", userEntryId: "u1" });
      toolCalls.record({ id: "call-live", runId: "r-live", name: "lookup", input: { q: "live" } });
      const ev = entries.append({
        id: "ev-live",
        parentId: "u1",
        kind: "event",
        runId: "r-live",
        body: { note: "live" },
      });
      if (!ev.ok) throw new Error(ev.message);
      clock = at(5);
      runs.create({ id: "r-old" });
      const call = toolCalls.record({ id: "call-old", runId: "r-old", name: "lookup", input: { q: "x" } });
      if (!call.ok) throw new Error(call.message);
      runs.transition("r-old", "aborted", { abortReason: "cancelled" });
      clock = at(10);
      put("u2", "a1", "user");
      put("a2", "u2", "assistant");
      clock = at(20);
      put("u2b", "a1", "user");
      put("a2b", "u2b", "assistant");
      clock = at(40);
      put("u3", "a2b", "user");
      put("a3", "u3", "assistant");
      entries.setActiveLeaf("a2");
      return entries.all().map((e) => e.id);
    });
    expect(ids).toEqual(["u1", "a1", "ev-live", "u2", "a2", "u2b", "a2b", "u3", "a3"]);
    expect((await drain(at(41))).failed).toBe(false);
    expect((await projectedEntries(t.tenantId, t.threadId)).map((e) => e.id)).toEqual(ids);

    // Age: older than 30 days at day 45 (before day 15) goes, except the live run's user message and event.
    const byAge = await runInDurableObject(t.stub, (_i, state) => {
      const result = applyThreadRetention(state.storage, { maxAgeDays: 30 }, at(45));
      return {
        result,
        leaf: state.storage.sql.exec("SELECT value FROM meta WHERE key = 'active_leaf'").toArray(),
        calls: state.storage.sql
          .exec("SELECT id FROM tool_calls ORDER BY id")
          .toArray()
          .map((r) => r.id),
      };
    });
    expect(byAge.result).toEqual({ deletedEntries: 3 });
    expect(byAge.leaf).toEqual([]);
    expect(byAge.calls).toEqual(["call-live"]);
    let entries = await threadEntries(t.stub);
    expect(entries.map((e) => [e.id, e.parent_id])).toEqual([
      ["u1", null],
      ["ev-live", "u1"],
      ["u2b", null],
      ["a2b", "u2b"],
      ["u3", "a2b"],
      ["a3", "u3"],
    ]);
    // D1 still holds what the thread deleted until the next drain, which mirrors the pass exactly.
    expect(await projectedEntries(t.tenantId, t.threadId)).toHaveLength(9);
    await drain(at(45));
    expect(await projectedEntries(t.tenantId, t.threadId)).toEqual(entries);
    const d1Calls = await env.DB.prepare(
      "SELECT id FROM agent_tool_calls WHERE tenant_id = ? AND session_id = ?",
    )
      .bind(t.tenantId, t.threadId)
      .all();
    expect(d1Calls.results.map((r) => z.object({ id: z.string() }).parse(r).id)).toEqual(["call-live"]);

    // Count: only the newest two messages (plus the live run's) stay.
    const byCount = await runInDurableObject(t.stub, (_i, state) =>
      applyThreadRetention(state.storage, { maxMessagesPerThread: 2 }, at(45)),
    );
    expect(byCount).toEqual({ deletedEntries: 2 });
    entries = await threadEntries(t.stub);
    expect(entries.map((e) => [e.id, e.parent_id])).toEqual([
      ["u1", null],
      ["ev-live", "u1"],
      ["u3", null],
      ["a3", "u3"],
    ]);
    await drain(at(45));
    expect(await projectedEntries(t.tenantId, t.threadId)).toEqual(entries);

    // Entries deleted before they were ever projected never reach D1.
    await runInDurableObject(t.stub, (_i, state) => {
      const store = new EntryStore(state.storage, { now: () => at(46) });
      store.append({ id: "u4", parentId: "a3", kind: "message", role: "user", body: { text: "u4" } });
      store.append({ id: "a4", parentId: "u4", kind: "message", role: "assistant", body: { text: "a4" } });
      applyThreadRetention(state.storage, { maxMessagesPerThread: 1 }, at(46));
    });
    const waiting = await runInDurableObject(t.stub, (_i, state) =>
      state.storage.sql
        .exec("SELECT id FROM entries WHERE seq > ? ORDER BY seq", projectedEntrySeq(state.storage))
        .toArray()
        .map((r) => String(r.id)),
    );
    expect(waiting).toEqual(["a4"]);
    await drain(at(46));
    entries = await threadEntries(t.stub);
    expect(entries.map((e) => [e.id, e.parent_id])).toEqual([
      ["u1", null],
      ["ev-live", "u1"],
      ["a4", null],
    ]);
    expect(await projectedEntries(t.tenantId, t.threadId)).toEqual(entries);

    // No policy, no change.
    const none = await runInDurableObject(t.stub, (_i, state) =>
      applyThreadRetention(state.storage, {}, at(400)),
    );
    expect(none).toEqual({ deletedEntries: 0 });
  });
});

const dueRow = z.object({
  retention_due_at: z.string().nullable(),
  message_count: z.number(),
  title: z.string().nullable(),
});

async function sessionRetention(tenantId: string, threadId: string) {
  const row = await env.DB.prepare(
    "SELECT retention_due_at, message_count, title FROM agent_sessions WHERE tenant_id = ? AND id = ?",
  )
    .bind(tenantId, threadId)
    .first();
  return dueRow.parse(row);
}

describe("the retention job", () => {
  it("prunes D1 by the session's policy once a day and has the thread apply the same policy", async () => {
    const agent = await liveAgent({
      agent: { visibility: "private" },
      artifact: { limits: { retention: { maxMessagesPerThread: 2 } } },
    });
    const session = await launchFor(agent, "user-1");
    await converse(session, ["first question", "second question", "third question"]);
    const stub = await threadStub(agent, session.threadId);
    await drainThread(stub);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toHaveLength(6);
    const before = await sessionRetention(agent.tenantId, session.threadId);
    expect(before.retention_due_at).not.toBeNull();

    // Not due yet: bound less than a day ago.
    const early = await runRetentionJob(env, Date.now());
    expect(early.affected.map((s) => s.threadId)).not.toContain(session.threadId);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toHaveLength(6);

    const now = Date.now() + 2 * DAY_MS;
    const run = await runRetentionJob(env, now);
    expect(run.affected.map((s) => s.threadId)).toContain(session.threadId);
    expect(run.unreachable).toBe(0);
    const entries = await threadEntries(stub);
    expect(entries.map((e) => [e.role, e.text])).toEqual([
      ["user", "third question"],
      ["assistant", entries[1]?.text],
    ]);
    expect(entries[0]?.parent_id).toBeNull();
    await drainThread(stub);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual(entries);
    const after = await sessionRetention(agent.tenantId, session.threadId);
    expect(after).toEqual({
      retention_due_at: new Date(now + DAY_MS).toISOString(),
      message_count: 2,
      title: "third question",
    });

    // The same day again: not due, nothing changes.
    const again = await runRetentionJob(env, now);
    expect(again.affected.map((s) => s.threadId)).not.toContain(session.threadId);
    expect(await sessionRetention(agent.tenantId, session.threadId)).toEqual(after);
  });

  it("empties a thread idle past its max age, and a later turn starts a clean projection", async () => {
    const agent = await liveAgent({
      agent: { visibility: "private" },
      artifact: { limits: { retention: { maxAgeDays: 1 } } },
    });
    const session = await launchFor(agent, "user-1");
    await converse(session, ["an old conversation"]);
    const stub = await threadStub(agent, session.threadId);
    await drainThread(stub);

    // The thread applies the policy at its own clock, which (as in production) is no earlier than the job's.
    await inTestThread(stub, (instance) => instance.clock.advance(3 * DAY_MS));
    await runRetentionJob(env, Date.now() + 3 * DAY_MS);
    expect(await threadEntries(stub)).toEqual([]);
    await drainThread(stub);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual([]);
    expect(await sessionRetention(agent.tenantId, session.threadId)).toMatchObject({
      message_count: 0,
      title: null,
    });

    const resumed = await launchFor(agent, "user-1", session.threadId);
    await converse(resumed, ["a new start"]);
    await drainThread(stub);
    const entries = await threadEntries(stub);
    expect(entries.map((e) => e.text)).toEqual(["a new start", entries[1]?.text]);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual(entries);
    expect(await sessionRetention(agent.tenantId, session.threadId)).toMatchObject({
      message_count: 2,
      title: "a new start",
    });
  });

  it("runs from the Worker's scheduled handler with the trigger's time", async () => {
    const agent = await liveAgent({
      agent: { visibility: "private" },
      artifact: { limits: { retention: { maxMessagesPerThread: 1 } } },
    });
    const session = await launchFor(agent, "user-1");
    await converse(session, ["scheduled question"]);
    const stub = await threadStub(agent, session.threadId);
    await drainThread(stub);
    const scheduledTime = Date.now() + 2 * DAY_MS;
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime, cron: "*/5 * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect((await projectedEntries(agent.tenantId, session.threadId)).map((e) => e.role)).toEqual([
      "assistant",
    ]);
    expect(await sessionRetention(agent.tenantId, session.threadId)).toMatchObject({
      retention_due_at: new Date(scheduledTime + DAY_MS).toISOString(),
      message_count: 1,
    });
  });
});
