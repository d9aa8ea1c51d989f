// The D1 projection of real conversations: D1 outages lose nothing, retries never move a row backwards, evictions
// between write and drain lose nothing, and reconciliation refills what D1 lost.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { PROJECTION_SQL, upsertRun, upsertSession } from "../../src/storage/d1/projection-writer";
import { enqueueOutbox, projectedEntrySeq, setProjectedEntrySeq } from "../../src/storage/projection/outbox";
import { BACKOFF_CAP_MS, backoffMs, drainOutbox } from "../../src/storage/projection/projection-drain";
import { reconcileProjection } from "../../src/storage/projection/projection-reconcile";
import { titleFrom } from "../../src/storage/projection/projection-rows";
import { RunStore } from "../../src/storage/thread/run-store";
import {
  bindingOf,
  converse,
  drainThread,
  outboxRows,
  projectedEntries,
  threadEntries,
  threadStub,
  unreachableBatches,
} from "../helpers/projection";
import { launch, liveAgent } from "../helpers/threads";

const agentOptions = { artifact: { model: { provider: "local", model: "echo", local: { chunks: 3 } } } };

/** Takes D1's messages table away from every writer (the object's own drains included), then gives it back. */
async function whileD1Offline<T>(work: () => Promise<T>): Promise<T> {
  await env.DB.exec("ALTER TABLE agent_messages RENAME TO agent_messages_offline");
  try {
    return await work();
  } finally {
    await env.DB.exec("ALTER TABLE agent_messages_offline RENAME TO agent_messages");
  }
}

const sessionRow = z.object({
  user_id: z.string(),
  agent_id: z.string(),
  agent_name: z.string(),
  agent_version: z.number(),
  title: z.string().nullable(),
  message_count: z.number(),
  last_message_at: z.string().nullable(),
  projected_seq: z.number(),
  version: z.number(),
  state: z.string(),
});

async function sessionOf(tenantId: string, threadId: string) {
  const row = await env.DB.prepare(
    `SELECT user_id, agent_id, agent_name, agent_version, title, message_count, last_message_at, projected_seq,
            version, state
     FROM agent_sessions WHERE tenant_id = ? AND id = ?`,
  )
    .bind(tenantId, threadId)
    .first();
  return row === null ? null : sessionRow.parse(row);
}

async function count(sql: string, ...bindings: string[]): Promise<number> {
  const row = await env.DB.prepare(sql)
    .bind(...bindings)
    .first();
  return z.object({ n: z.number() }).parse(row).n;
}

function entryWatermark(stub: DurableObjectStub): Promise<number> {
  return runInDurableObject(stub, (_i, state) => projectedEntrySeq(state.storage));
}

describe("projection under D1 outages", () => {
  it("keeps every change through failed drains over several turns, then projects each entry exactly once", async () => {
    const agent = await liveAgent(agentOptions);
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);

    await whileD1Offline(async () => {
      for (let turn = 1; turn <= 4; turn++) {
        await converse(session, [`question number ${turn}`]);
        const before = await outboxRows(stub);
        // Each failing drain runs an hour after the last, past any backoff, so every queued row is tried again.
        const [outcome] = await drainThread(stub, {
          db: unreachableBatches(),
          now: () => Date.now() + turn * 3_600_000,
        });
        // Waiting: the runs and usage in the outbox, and every entry of every turn so far (above the watermark).
        expect(outcome).toMatchObject({ drained: 0, failed: true, remaining: before.length + turn * 2 });
        expect(outcome?.retryInMs).toBeGreaterThanOrEqual(500);
        expect(outcome?.retryInMs).toBeLessThanOrEqual(BACKOFF_CAP_MS);
        const after = await outboxRows(stub);
        expect(after.map((r) => [r.kind, r.ref_id, r.version])).toEqual(
          before.map((r) => [r.kind, r.ref_id, r.version]),
        );
        for (const [i, row] of after.entries()) {
          expect(row.attempts).toBeGreaterThan(before[i]?.attempts ?? 0);
          expect(row.next_attempt_at).toBeGreaterThan(Date.now());
        }
        // Every entry of every turn so far still waits: the watermark has not moved.
        expect(await threadEntries(stub)).toHaveLength(turn * 2);
        expect(await entryWatermark(stub)).toBe(0);
      }
      expect(
        await count(
          "SELECT COUNT(*) AS n FROM agent_messages_offline WHERE tenant_id = ? AND session_id = ?",
          agent.tenantId,
          session.threadId,
        ),
      ).toBe(0);
    });

    const outcomes = await drainThread(stub, { batchSize: 3, now: () => Date.now() + 10 * 3_600_000 });
    expect(outcomes.at(-1)).toMatchObject({ failed: false, remaining: 0 });
    expect(outcomes.length).toBeGreaterThan(1);
    expect(await outboxRows(stub)).toEqual([]);

    const entries = await threadEntries(stub);
    const projected = await projectedEntries(agent.tenantId, session.threadId);
    expect(projected).toEqual(entries);
    expect(new Set(projected.map((e) => e.id)).size).toBe(8);
    expect(projected.map((e) => e.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(projected.map((e) => e.parent_id)).toEqual([null, ...entries.slice(0, -1).map((e) => e.id)]);

    const row = await sessionOf(agent.tenantId, session.threadId);
    expect(row).toMatchObject({
      agent_id: agent.agentId,
      agent_name: "Support",
      agent_version: 1,
      title: "question number 1",
      message_count: 8,
      projected_seq: entries.at(-1)?.seq,
    });
    expect(row?.user_id).toMatch(/^vis_/);
    expect(JSON.parse(row?.state ?? "{}")).toMatchObject({
      leafId: entries.at(-1)?.id,
      lastRun: { status: "succeeded" },
    });
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM agent_runs WHERE tenant_id = ? AND session_id = ? AND status = 'succeeded'",
        agent.tenantId,
        session.threadId,
      ),
    ).toBe(4);
  });

  it("backs off exponentially with jitter, capped at five minutes", () => {
    for (const attempt of [1, 2, 3, 8, 9, 40]) {
      const ceiling = Math.min(BACKOFF_CAP_MS, 1000 * 2 ** (attempt - 1));
      expect(backoffMs(attempt, () => 0)).toBe(ceiling / 2);
      expect(backoffMs(attempt, () => 0.999_999)).toBeLessThanOrEqual(ceiling);
      expect(backoffMs(attempt, () => 0.999_999)).toBeGreaterThan(ceiling * 0.99);
    }
    expect(backoffMs(1, () => 0.5)).toBe(750);
  });

  it("loses nothing when the object is evicted between the write and the drain", async () => {
    const agent = await liveAgent(agentOptions);
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);
    await whileD1Offline(async () => {
      await converse(session, ["written before the eviction", "and a second turn"]);
      expect((await outboxRows(stub)).length).toBeGreaterThan(0);
      expect(await entryWatermark(stub)).toBe(0);
      await evictDurableObject(stub);
    });
    const outcomes = await drainThread(stub);
    expect(outcomes.at(-1)).toMatchObject({ failed: false, remaining: 0 });
    const entries = await threadEntries(stub);
    expect(entries).toHaveLength(4);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual(entries);
  });
});

describe("version guards", () => {
  it("never lets a retried or reordered older version overwrite a newer row", async () => {
    const agent = await liveAgent(agentOptions);
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);
    await converse(session, ["guard me"]);
    await drainThread(stub);
    const runBefore = await env.DB.prepare(
      "SELECT id, status, version, ended_at FROM agent_runs WHERE tenant_id = ? AND session_id = ?",
    )
      .bind(agent.tenantId, session.threadId)
      .first();
    const run = z
      .object({ id: z.string(), status: z.string(), version: z.number(), ended_at: z.string() })
      .parse(runBefore);
    expect(run).toMatchObject({ status: "succeeded" });
    expect(run.version).toBeGreaterThan(1);
    const sessionBefore = await sessionOf(agent.tenantId, session.threadId);

    // A stale write arriving late, straight through the writer: an older run revision and an older session row.
    const scope = { tenantId: agent.tenantId, threadId: session.threadId };
    const stale = await env.DB.batch([
      upsertRun(env.DB, scope, {
        id: run.id,
        agentId: agent.agentId,
        versionId: null,
        status: "queued",
        day: "2020-01-01",
        userEntryId: null,
        assistantEntryId: null,
        abortReason: null,
        errorCode: null,
        errorMessage: null,
        version: 1,
        createdAt: "2020-01-01T00:00:00.000Z",
        startedAt: null,
        endedAt: null,
        inputDigest: null,
        firstDeltaMs: null,
        firstDeltaBucket: null,
      }),
      upsertSession(env.DB, scope, {
        agentId: agent.agentId,
        agentName: "stale",
        environment: "development",
        agentVersion: 1,
        versionId: "stale",
        artifactDigest: "stale",
        leafVersion: 1,
        state: "{}",
        mode: "agent",
        title: "stale title",
        messageCount: 0,
        lastMessageAt: null,
        projectedSeq: 0,
        retentionMaxAgeDays: null,
        retentionMaxMessages: null,
        retentionDueAt: null,
        version: (sessionBefore?.version ?? 1) - 1,
        updatedAt: "2020-01-01T00:00:00.000Z",
      }),
    ]);
    expect(stale.map((r) => r.meta.changes)).toEqual([0, 0]);

    // A stale outbox row (an old revision queued again) projects the run as the thread holds it now.
    await runInDurableObject(stub, (_i, state) => {
      enqueueOutbox(
        state.storage,
        { kind: "run", refId: run.id, version: 1, payload: { id: run.id } },
        Date.now(),
      );
    });
    await drainThread(stub);
    const runAfter = await env.DB.prepare(
      "SELECT id, status, version, ended_at FROM agent_runs WHERE tenant_id = ? AND session_id = ?",
    )
      .bind(agent.tenantId, session.threadId)
      .first();
    expect(runAfter).toEqual(runBefore);
    const sessionAfter = await sessionOf(agent.tenantId, session.threadId);
    expect(sessionAfter).toMatchObject({
      title: "guard me",
      message_count: 2,
      projected_seq: sessionBefore?.projected_seq,
    });
    expect(sessionAfter?.version).toBeGreaterThan(sessionBefore?.version ?? 0);

    // Re-sending every entry (a retried batch) adds no duplicate.
    await runInDurableObject(stub, (_i, state) => setProjectedEntrySeq(state.storage, 0));
    await drainThread(stub);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual(await threadEntries(stub));
  });

  it("keeps a change made while a drain is in flight for the next drain", async () => {
    const agent = await liveAgent(agentOptions);
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);
    await converse(session, ["in flight"]);
    await drainThread(stub);
    const d1Run = () =>
      env.DB.prepare("SELECT status, version FROM agent_runs WHERE tenant_id = ? AND id = 'run-in-flight'")
        .bind(agent.tenantId)
        .first();

    const waiting = await runInDurableObject(stub, async (_i, state) => {
      const binding = await bindingOf(state.storage);
      const runs = new RunStore(state.storage, { now: Date.now });
      runs.create({ id: "run-in-flight" });
      let sent!: () => void;
      let answer!: () => void;
      const batchSent = new Promise<void>((resolve) => {
        sent = resolve;
      });
      const d1Answers = new Promise<void>((resolve) => {
        answer = resolve;
      });
      const slowDb = new Proxy(env.DB, {
        get(target, property) {
          if (property === "batch") {
            return async (statements: D1PreparedStatement[]) => {
              sent();
              await d1Answers;
              return target.batch(statements);
            };
          }
          const value: unknown = Reflect.get(target, property);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const drain = drainOutbox({ storage: state.storage, db: slowDb, binding, now: Date.now });
      await batchSent;
      // The run changes after the drain read it and before D1 answered.
      runs.transition("run-in-flight", "running");
      answer();
      await drain;
      return state.storage.sql
        .exec("SELECT kind, ref_id, version FROM outbox WHERE ref_id = 'run-in-flight'")
        .toArray();
    });
    // The drain projected version 1 and left the row, which now names version 2.
    expect(waiting).toEqual([{ kind: "run", ref_id: "run-in-flight", version: 2 }]);
    expect(await d1Run()).toEqual({ status: "queued", version: 1 });
    await drainThread(stub);
    expect(await d1Run()).toEqual({ status: "running", version: 2 });
    expect(await outboxRows(stub)).toEqual([]);
  });

  it("writes nothing for a thread whose registry row is deleted", async () => {
    const agent = await liveAgent(agentOptions);
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);
    await converse(session, ["about to be erased"]);
    await env.DB.prepare("UPDATE threads SET deleted_at = ? WHERE tenant_id = ? AND id = ?")
      .bind(new Date().toISOString(), agent.tenantId, session.threadId)
      .run();
    await env.DB.batch(
      ["agent_messages", "agent_runs", "agent_usage", "agent_sessions"].map((table) =>
        env.DB.prepare(
          `DELETE FROM ${table} WHERE tenant_id = ? AND ${table === "agent_sessions" ? "id" : "session_id"} = ?`,
        ).bind(agent.tenantId, session.threadId),
      ),
    );
    const outcomes = await drainThread(stub);
    expect(outcomes.at(-1)).toMatchObject({ failed: false, remaining: 0 });
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual([]);
    expect(await sessionOf(agent.tenantId, session.threadId)).toBeNull();
    expect(PROJECTION_SQL.upsertMessage).toContain("t.deleted_at IS NULL");
  });
});

describe("reconciliation", () => {
  it("is a no-op in sync, and re-queues exactly what D1 lost", async () => {
    const agent = await liveAgent(agentOptions);
    const session = await launch(agent.publicKey);
    const stub = await threadStub(agent, session.threadId);
    await converse(session, ["one", "two", "three"]);
    await drainThread(stub);
    const entries = await threadEntries(stub);

    const reconcile = () =>
      runInDurableObject(stub, async (_i, state) =>
        reconcileProjection({
          storage: state.storage,
          db: env.DB,
          binding: await bindingOf(state.storage),
          now: Date.now,
        }),
      );
    expect(await reconcile()).toEqual({ missing: 0 });
    expect(await outboxRows(stub)).toEqual([]);

    // D1 restored from an older copy: the last turn and the watermark are gone.
    const keep = entries[3]!;
    await env.DB.batch([
      env.DB.prepare("DELETE FROM agent_messages WHERE tenant_id = ? AND session_id = ? AND seq > ?").bind(
        agent.tenantId,
        session.threadId,
        keep.seq,
      ),
      env.DB.prepare("UPDATE agent_sessions SET projected_seq = ? WHERE tenant_id = ? AND id = ?").bind(
        keep.seq,
        agent.tenantId,
        session.threadId,
      ),
    ]);
    expect(await reconcile()).toEqual({ missing: 2 });
    await drainThread(stub);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual(entries);

    // D1 lost the whole thread: everything goes again, runs and usage included.
    await env.DB.batch(
      ["agent_messages", "agent_runs", "agent_usage", "agent_sessions"].map((table) =>
        env.DB.prepare(
          `DELETE FROM ${table} WHERE tenant_id = ? AND ${table === "agent_sessions" ? "id" : "session_id"} = ?`,
        ).bind(agent.tenantId, session.threadId),
      ),
    );
    expect(await reconcile()).toEqual({ missing: 6 });
    await drainThread(stub);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual(entries);
    expect(
      await count(
        "SELECT COUNT(*) AS n FROM agent_runs WHERE tenant_id = ? AND session_id = ?",
        agent.tenantId,
        session.threadId,
      ),
    ).toBe(3);
    expect(await reconcile()).toEqual({ missing: 0 });
  });
});

describe("titles", () => {
  it("takes the first user message on one line, cut to 80 characters", () => {
    expect(titleFrom("  Hello\nthere\tfriend  ")).toBe("Hello there friend");
    expect(titleFrom(" \n ")).toBeNull();
    const long = "é".repeat(100);
    expect(titleFrom(long)).toBe(`${"é".repeat(79)}…`);
    expect(Array.from(titleFrom("x".repeat(80)) ?? "")).toHaveLength(80);
  });
});
