// The projection spread over D1 shards by tenant (docs/scaling.md, "D1 shards"): new tenants placed by weight and
// never moved by a weight change, every read and write in the tenant's shard, the same answers from either shard,
// and a move between shards under traffic that loses no message and leaves nothing behind.
import { runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { D1_BINDINGS } from "../../scripts/lib/d1-bindings.mjs";
import { OperatorClient } from "../../src/client/index";
import { expirePreviews } from "../../src/jobs/previews";
import { advanceMove, runShardMoves } from "../../src/jobs/shard-moves";
import type { ThreadAgent } from "../../src/objects/thread-agent";
import { PREVIEW_TTL_MS } from "../../src/services/preview-session";
import { listResponse, tenantShardResponse } from "../../src/shared/api";
import { previewSessionResponse } from "../../src/shared/launch-api";
import { analyticsResponse, sessionListItem, usageResponse } from "../../src/shared/sessions-api";
import { PROJECTED_TABLES, ROLLUP_TABLES } from "../../src/storage/d1/shard-copy";
import { placeByWeight, SHARDS, type ShardName } from "../../src/storage/d1/shards";
import { projectionBacklog } from "../../src/storage/projection/outbox";
import { converse, launchFor, threadEntries, threadStub } from "../helpers/projection";
import {
  API,
  api,
  createTenant,
  expectError,
  json,
  operatorHeaders,
  saveDraft,
  unique,
  validArtifact,
} from "../helpers/tenants";
import { type Launch, type LiveAgent, liveAgent } from "../helpers/threads";

const sessions = listResponse(sessionListItem);
const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const around = `from=${day(Date.now() - DAY_MS)}&to=${day(Date.now() + DAY_MS)}`;

async function setWeights(weights: Record<ShardName, number>) {
  await env.DB.batch(
    Object.entries(weights).map(([shard, weight]) =>
      env.DB.prepare(
        "INSERT INTO shard_weights (shard, weight) VALUES (?, ?) ON CONFLICT (shard) DO UPDATE SET weight = excluded.weight",
      ).bind(shard, weight),
    ),
  );
}

afterEach(async () => {
  await setWeights({ DB: 1, DB_SHARD_1: 0 });
});

async function shardOf(tenantId: string) {
  const res = await api(`/v1/operator/tenants/${tenantId}/shard`, { headers: operatorHeaders() });
  return json(res, 200, tenantShardResponse);
}

/** A tenant with a live private agent, placed on `shard` by its weights at creation. */
async function agentOn(shard: ShardName, artifact?: Record<string, unknown>): Promise<LiveAgent> {
  await setWeights(shard === "DB" ? { DB: 1, DB_SHARD_1: 0 } : { DB: 0, DB_SHARD_1: 1 });
  const tenant = await createTenant();
  await setWeights({ DB: 1, DB_SHARD_1: 0 });
  expect((await shardOf(tenant.tenantId)).shard).toBe(shard);
  return liveAgent({ tenant, agent: { visibility: "private" }, ...(artifact ? { artifact } : {}) });
}

const db = (shard: ShardName) => (shard === "DB" ? env.DB : env.DB_SHARD_1);

async function count(shard: ShardName, table: string, tenantId: string, threadId?: string) {
  const column =
    table === "agent_sessions" || table === "threads"
      ? "id"
      : (PROJECTED_TABLES.find((t) => t.table === table)?.thread ?? "session_id");
  const row = await db(shard)
    .prepare(
      `SELECT COUNT(*) AS n FROM ${table} WHERE tenant_id = ?${threadId === undefined ? "" : ` AND ${column} = ?`}`,
    )
    .bind(tenantId, ...(threadId === undefined ? [] : [threadId]))
    .first();
  return z.object({ n: z.number() }).parse(row).n;
}

async function messageIds(shard: ShardName, tenantId: string, threadId: string) {
  const { results } = await db(shard)
    .prepare("SELECT id FROM agent_messages WHERE tenant_id = ? AND session_id = ? ORDER BY seq, id")
    .bind(tenantId, threadId)
    .all();
  return results.map((r) => z.object({ id: z.string() }).parse(r).id);
}

/** Drains the thread through its own path (the tenant's shard, as the object resolves it) until nothing waits. */
async function settle(agent: LiveAgent, threadId: string) {
  const stub = await threadStub(agent, threadId);
  await runInDurableObject(stub, async (instance: ThreadAgent, state) => {
    for (let i = 0; i < 20 && projectionBacklog(state.storage) > 0; i++) await instance.drainOutbox();
    expect(projectionBacklog(state.storage)).toBe(0);
  });
}

async function chat(agent: LiveAgent, subject: string, texts: string[]) {
  const session = await launchFor(agent, subject);
  await converse(session, texts);
  await settle(agent, session.threadId);
  return session;
}

describe("tenant placement", () => {
  it("knows the same shard bindings as the scripts that migrate them", () => {
    expect([...SHARDS]).toEqual(D1_BINDINGS);
  });

  it("places by the hash of the tenant id over cumulative weights, the same way every time", () => {
    const ids = Array.from({ length: 400 }, (_, i) => `ten_${i.toString(36)}`);
    const even = ids.map((id) =>
      placeByWeight(id, [
        { shard: "DB", weight: 1 },
        { shard: "DB_SHARD_1", weight: 1 },
      ]),
    );
    const onShard1 = even.filter((s) => s === "DB_SHARD_1").length;
    expect(onShard1).toBeGreaterThan(150);
    expect(onShard1).toBeLessThan(250);
    // Deterministic: the listing order of the weights and a second call change nothing.
    expect(
      ids.map((id) =>
        placeByWeight(id, [
          { shard: "DB_SHARD_1", weight: 1 },
          { shard: "DB", weight: 1 },
        ]),
      ),
    ).toEqual(even);
    // 1:3 puts about three quarters on the heavier shard.
    const skewed = ids.filter(
      (id) =>
        placeByWeight(id, [
          { shard: "DB", weight: 1 },
          { shard: "DB_SHARD_1", weight: 3 },
        ]) === "DB_SHARD_1",
    ).length;
    expect(skewed).toBeGreaterThan(260);
    expect(skewed).toBeLessThan(340);
    // Weight 0, unknown shards and no weights at all: nobody goes there, `DB` is the fallback.
    expect(
      ids.every(
        (id) =>
          placeByWeight(id, [
            { shard: "DB", weight: 0 },
            { shard: "DB_SHARD_1", weight: 2 },
          ]) === "DB_SHARD_1",
      ),
    ).toBe(true);
    expect(ids.every((id) => placeByWeight(id, [{ shard: "DB_SHARD_9", weight: 5 }]) === "DB")).toBe(true);
    expect(placeByWeight("ten_x", [])).toBe("DB");
  });

  it("records each new tenant's shard by the weights at creation, and a weight change moves no one", async () => {
    await setWeights({ DB: 1, DB_SHARD_1: 1 });
    const tenants = await Promise.all(Array.from({ length: 12 }, () => createTenant(unique("placed"))));
    const expected = tenants.map((t) =>
      placeByWeight(t.tenantId, [
        { shard: "DB", weight: 1 },
        { shard: "DB_SHARD_1", weight: 1 },
      ]),
    );
    const placed = await Promise.all(tenants.map((t) => shardOf(t.tenantId)));
    expect(placed.map((p) => p.shard)).toEqual(expected);
    expect(placed.every((p) => p.state === "active" && p.movingTo === null)).toBe(true);
    // Everyone new goes to DB now; the twelve stay where they were recorded.
    await setWeights({ DB: 1, DB_SHARD_1: 0 });
    expect((await Promise.all(tenants.map((t) => shardOf(t.tenantId)))).map((p) => p.shard)).toEqual(
      expected,
    );
    const later = await createTenant();
    expect((await shardOf(later.tenantId)).shard).toBe("DB");
  });
});

describe("reads and writes in the tenant's shard", () => {
  it("projects a shard-1 tenant's conversation into DB_SHARD_1 only, and serves every read from there", async () => {
    const agent = await agentOn("DB_SHARD_1");
    const session = await chat(agent, "user-1", ["Where is my parcel?", "It was order 5521."]);
    const entries = await threadEntries(await threadStub(agent, session.threadId));
    expect(entries).toHaveLength(4);
    expect(await messageIds("DB_SHARD_1", agent.tenantId, session.threadId)).toEqual(
      entries.map((e) => e.id),
    );
    for (const t of PROJECTED_TABLES) expect(await count("DB", t.table, agent.tenantId), t.table).toBe(0);
    expect(await count("DB_SHARD_1", "agent_runs", agent.tenantId)).toBe(2);
    // The registry stays in DB; DB_SHARD_1 holds its mirror of the thread's row.
    expect(await count("DB", "threads", agent.tenantId, session.threadId)).toBe(1);
    expect(await count("DB_SHARD_1", "threads", agent.tenantId, session.threadId)).toBe(1);

    const listed = await json(await api("/v1/sessions", { key: agent.apiKey }), 200, sessions);
    expect(listed.items.map((i) => i.threadId)).toEqual([session.threadId]);
    const found = await json(
      await api("/v1/sessions/search", { method: "POST", key: agent.apiKey, body: { q: "parcel" } }),
      200,
      sessions,
    );
    expect(found.items.map((i) => i.threadId)).toEqual([session.threadId]);
    const analytics = await json(
      await api(`/v1/analytics?${around}`, { key: agent.apiKey }),
      200,
      analyticsResponse,
    );
    expect(analytics.items).toMatchObject([{ key: "1", version: 1, threads: 1, turns: 2 }]);

    // Erasure removes the rows from the shard and leaves a tombstone in its mirror.
    const erased = await api(`/v1/sessions/${session.threadId}`, { method: "DELETE", key: agent.apiKey });
    expect(erased.status).toBe(204);
    for (const t of PROJECTED_TABLES)
      expect(await count("DB_SHARD_1", t.table, agent.tenantId), t.table).toBe(0);
    const mirror = await env.DB_SHARD_1.prepare(
      "SELECT subject, deleted_at FROM threads WHERE tenant_id = ? AND id = ?",
    )
      .bind(agent.tenantId, session.threadId)
      .first();
    expect(mirror).toMatchObject({ subject: "" });
    expect(z.object({ deleted_at: z.string() }).parse(mirror).deleted_at).toMatch(/^\d{4}-/);
  });

  it("answers list, messages, search, analytics and usage the same whichever shard holds the tenant", async () => {
    const views = [];
    for (const shard of ["DB", "DB_SHARD_1"] as const) {
      const agent = await agentOn(shard);
      const a = await chat(agent, "alice", ["Do you ship to Canada?", "And to Mexico?"]);
      const b = await chat(agent, "bob", ["My refund never arrived."]);
      const list = await json(await api("/v1/sessions", { key: agent.apiKey }), 200, sessions);
      const messages = z
        .object({
          items: z.array(z.object({ role: z.string().nullable(), content: z.string() }).passthrough()),
        })
        .parse(await (await api(`/v1/sessions/${a.threadId}/messages`, { key: agent.apiKey })).json());
      const search = await json(
        await api("/v1/sessions/search", { method: "POST", key: agent.apiKey, body: { q: "refund" } }),
        200,
        sessions,
      );
      const analytics = await json(
        await api(`/v1/analytics?${around}&groupBy=version`, { key: agent.apiKey }),
        200,
        analyticsResponse,
      );
      const usage = await json(await api(`/v1/usage?${around}`, { key: agent.apiKey }), 200, usageResponse);
      views.push({
        list: list.items.map((i) => ({ subject: i.subject, messageCount: i.messageCount, title: i.title })),
        messages: messages.items.map((m) => [m.role, m.content]),
        search: search.items.map((i) => (i.threadId === b.threadId ? "bob" : "other")),
        analytics: analytics.items.map(
          ({ agentId: _agent, firstDeltaMsP50: _p50, firstDeltaMsP95: _p95, ...rest }) => rest,
        ),
        usage: usage.totals,
      });
    }
    expect(views[1]).toEqual(views[0]);
    expect(views[0]?.list).toHaveLength(2);
    expect(views[0]?.analytics).toMatchObject([{ threads: 2, turns: 3 }]);
  });
});

describe("POST /v1/operator/tenants/:tenantId/shard", () => {
  it("refuses an unknown shard or tenant, answers the same move twice, and refuses a second move elsewhere", async () => {
    const tenant = await createTenant();
    const post = (tenantId: string, shard: string) =>
      api(`/v1/operator/tenants/${tenantId}/shard`, {
        method: "POST",
        headers: operatorHeaders(),
        body: { shard },
      });
    await expectError(await post(tenant.tenantId, "DB_SHARD_7"), 400, "bad_request");
    await expectError(await post("ten_nobody", "DB_SHARD_1"), 404, "not_found");
    expect(
      (await api(`/v1/operator/tenants/${tenant.tenantId}/shard`, { method: "POST", body: { shard: "DB" } }))
        .status,
    ).toBe(401);
    const same = await json(await post(tenant.tenantId, "DB"), 202, tenantShardResponse);
    expect(same).toMatchObject({ shard: "DB", state: "active", movingTo: null });
    const started = await json(await post(tenant.tenantId, "DB_SHARD_1"), 202, tenantShardResponse);
    expect(started).toMatchObject({ shard: "DB", state: "moving", movingTo: "DB_SHARD_1" });
    expect(await json(await post(tenant.tenantId, "DB_SHARD_1"), 202, tenantShardResponse)).toMatchObject({
      state: "moving",
      movingTo: "DB_SHARD_1",
    });
    await expectError(await post(tenant.tenantId, "DB"), 409, "conflict");
    // The scheduled pass finishes it (a tenant with no rows moves in a few steps).
    await runShardMoves(env);
    expect(await shardOf(tenant.tenantId)).toMatchObject({
      shard: "DB_SHARD_1",
      state: "active",
      movingFrom: null,
    });
    // The typed client speaks the same two routes.
    const client = new OperatorClient({
      baseUrl: API,
      fetch: (input, init) => exports.default.fetch(input, init),
      operatorToken: env.OPERATOR_TOKEN,
    });
    expect(tenantShardResponse.parse(await client.getTenantShard(tenant.tenantId)).shard).toBe("DB_SHARD_1");
    expect(tenantShardResponse.parse(await client.moveTenantShard(tenant.tenantId, "DB"))).toMatchObject({
      state: "moving",
      movingTo: "DB",
    });
    await runShardMoves(env);
    expect((await client.getTenantShard(tenant.tenantId)).shard).toBe("DB");
  });
});

describe("moving a tenant between shards", () => {
  it("copies then switches while turns run in its threads: every message in the new shard, none left in the old", {
    timeout: 180_000,
  }, async () => {
    // Each thread takes a turn per step of the move, as fast as it can: past the default 20 sends a minute a busy
    // thread would be refused (4429), which is the send rate's test, not this one's.
    const agent = await agentOn("DB", { limits: { maxSendsPerMinute: 1000 } });
    const subjects = ["ana", "ben", "cho"];
    const sessionsOf: Launch[] = [];
    for (const subject of subjects) sessionsOf.push(await chat(agent, subject, [`hello from ${subject}`]));
    expect(await count("DB", "agent_messages", agent.tenantId)).toBe(6);
    // An erased thread's rows are gone, but the rollup keeps its counts: the move must carry them over too.
    const erased = await chat(agent, "dee", ["soon forgotten"]);
    expect(
      (await api(`/v1/sessions/${erased.threadId}`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);

    const started = await api(`/v1/operator/tenants/${agent.tenantId}/shard`, {
      method: "POST",
      headers: operatorHeaders(),
      body: { shard: "DB_SHARD_1" },
    });
    expect((await json(started, 202, tenantShardResponse)).state).toBe("moving");

    // Traffic: every thread keeps taking turns until the move is done (and two more after). The mover takes one
    // step of the move after each finished turn, so turns land in every state of the move.
    let done = false;
    let turns = 0;
    let wake: (() => void) | null = null;
    const turnEnded = () => {
      turns += 1;
      wake?.();
      wake = null;
    };
    const statesSeen = new Set<string>();
    const traffic = sessionsOf.map(async (session, i) => {
      let after = 0;
      for (let n = 0; !done || after < 2; n++) {
        if (done) after += 1;
        await converse(session, [`turn ${n} of ${subjects[i]} waffle${n}`]);
        turnEnded();
      }
    });
    const mover = (async () => {
      for (let step = 0; step < 500; step++) {
        const seen = turns;
        if (turns === seen)
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        const placement = await advanceMove(env, agent.tenantId, {
          deadline: Date.now() + 10_000,
          maxSteps: 1,
        });
        statesSeen.add(placement?.state ?? "gone");
        if (placement?.state === "active") break;
      }
      done = true;
    })();
    await Promise.all([mover, ...traffic]);
    expect([...statesSeen]).toEqual(expect.arrayContaining(["moving", "frozen", "draining", "active"]));
    expect(await shardOf(agent.tenantId)).toMatchObject({
      shard: "DB_SHARD_1",
      state: "active",
      movingFrom: null,
    });
    expect(turns).toBeGreaterThan(20);

    // Drains the frozen step put off run now, into the new shard.
    let runs = 0;
    for (const session of sessionsOf) {
      await settle(agent, session.threadId);
      const entries = await threadEntries(await threadStub(agent, session.threadId));
      expect(await messageIds("DB_SHARD_1", agent.tenantId, session.threadId)).toEqual(
        [...entries].sort((a, b) => a.seq - b.seq || (a.id < b.id ? -1 : 1)).map((e) => e.id),
      );
      runs += entries.filter((e) => e.role === "user").length;
    }
    // Nothing of the tenant's projection is left in the old shard; the registry stays there.
    for (const t of [...PROJECTED_TABLES, ...ROLLUP_TABLES]) {
      expect(await count("DB", t.table, agent.tenantId), t.table).toBe(0);
    }
    expect(await count("DB", "threads", agent.tenantId)).toBe(4);
    expect(await count("DB_SHARD_1", "agent_runs", agent.tenantId)).toBe(runs);

    const listed = await json(await api("/v1/sessions", { key: agent.apiKey }), 200, sessions);
    expect(listed.items.map((i) => i.threadId).sort()).toEqual(sessionsOf.map((s) => s.threadId).sort());
    for (const item of listed.items) {
      const entries = await threadEntries(await threadStub(agent, item.threadId));
      expect(item.messageCount).toBe(entries.filter((e) => e.kind === "message").length);
    }
    // The rollup came across exactly: every thread and every turn counted once, the erased thread's too.
    const analytics = await json(
      await api(`/v1/analytics?${around}`, { key: agent.apiKey }),
      200,
      analyticsResponse,
    );
    expect(analytics.items).toMatchObject([{ threads: 4, turns: runs + 1 }]);
    // Search finds text written before, during and after the move.
    for (const word of ["hello", "waffle0", `waffle${Math.floor(turns / 6)}`]) {
      const found = await json(
        await api("/v1/sessions/search", { method: "POST", key: agent.apiKey, body: { q: word } }),
        200,
        sessions,
      );
      expect(found.items.length, word).toBeGreaterThan(0);
    }
  });

  it("keeps an erasure made mid-move and drops a row the old shard no longer has", async () => {
    const agent = await agentOn("DB_SHARD_1");
    const kept = await chat(agent, "kim", ["keep this conversation"]);
    const gone = await chat(agent, "lee", ["erase this conversation"]);
    const post = await api(`/v1/operator/tenants/${agent.tenantId}/shard`, {
      method: "POST",
      headers: operatorHeaders(),
      body: { shard: "DB" },
    });
    expect((await json(post, 202, tenantShardResponse)).movingTo).toBe("DB");
    const step = async () => advanceMove(env, agent.tenantId, { deadline: Date.now() + 10_000, maxSteps: 1 });

    // Part-way through the copy: one thread is erased; the erasure reaches both shards.
    for (let i = 0; i < 50 && (await shardOf(agent.tenantId)).step !== "copy"; i++) await step();
    await step();
    expect((await api(`/v1/sessions/${gone.threadId}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );
    // Once the copy is done, a row only the new shard holds (as a delete racing a page's copy would leave) …
    for (let i = 0; i < 50 && (await shardOf(agent.tenantId)).step !== "verify"; i++) await step();
    await env.DB.prepare(
      `INSERT INTO agent_messages (tenant_id, session_id, id, seq, kind, role, content, user_id, version, created_at)
       VALUES (?, ?, 'ent_stray', 999, 'message', 'user', 'resurrected text', 'kim', 1, ?)`,
    )
      .bind(agent.tenantId, kept.threadId, new Date().toISOString())
      .run();
    for (let i = 0; i < 100 && (await shardOf(agent.tenantId)).state !== "active"; i++) await step();
    expect(await shardOf(agent.tenantId)).toMatchObject({ shard: "DB", state: "active" });

    // … is gone, the erased thread left nothing in either shard, the kept one is whole in the new one.
    const entries = await threadEntries(await threadStub(agent, kept.threadId));
    expect(await messageIds("DB", agent.tenantId, kept.threadId)).toEqual(entries.map((e) => e.id));
    for (const shard of ["DB", "DB_SHARD_1"] as const) {
      for (const t of PROJECTED_TABLES)
        expect(await count(shard, t.table, agent.tenantId, gone.threadId)).toBe(0);
    }
    for (const t of [...PROJECTED_TABLES, ...ROLLUP_TABLES, { table: "threads" }]) {
      expect(await count("DB_SHARD_1", t.table, agent.tenantId), t.table).toBe(0);
    }
    const listed = await json(await api("/v1/sessions", { key: agent.apiKey }), 200, sessions);
    expect(listed.items.map((i) => i.threadId)).toEqual([kept.threadId]);
    const found = await json(
      await api("/v1/sessions/search", { method: "POST", key: agent.apiKey, body: { q: "resurrected" } }),
      200,
      sessions,
    );
    expect(found.items).toEqual([]);
    const analytics = await json(
      await api(`/v1/analytics?${around}`, { key: agent.apiKey }),
      200,
      analyticsResponse,
    );
    expect(analytics.items).toMatchObject([{ threads: 2, turns: 2 }]);
  });
});

describe("preview threads on a second shard", () => {
  it("keeps a shard-1 tenant's preview out of its lists and usage there, and erases it from that shard", async () => {
    const agent = await agentOn("DB_SHARD_1");
    await saveDraft(agent.apiKey, agent.agentId, 1, validArtifact({ name: "Support draft" }));
    const opened = await api(`/v1/agents/${agent.agentId}/draft/preview-session`, {
      method: "POST",
      key: agent.apiKey,
      body: { draftRevision: 2 },
    });
    const session = await json(opened, 201, previewSessionResponse);
    await converse(session, ["a preview on shard one"], { origin: new URL(API).origin });
    await settle(agent, session.threadId);
    await chat(agent, "alice", ["an ordinary turn"]);

    expect(await count("DB_SHARD_1", "agent_messages", agent.tenantId, session.threadId)).toBeGreaterThan(0);
    expect(await count("DB", "agent_messages", agent.tenantId, session.threadId)).toBe(0);
    const listed = async (query: string) =>
      (await json(await api(`/v1/sessions?${query}`, { key: agent.apiKey }), 200, sessions)).items.map(
        (s) => s.threadId,
      );
    expect(await listed("")).not.toContain(session.threadId);
    expect(await listed("preview=true")).toEqual([session.threadId]);
    const usage = await json(await api(`/v1/usage?${around}`, { key: agent.apiKey }), 200, usageResponse);
    expect(usage.items.reduce((n, d) => n + d.runs, 0)).toBe(1);

    expect(await expirePreviews(env, Date.now() + PREVIEW_TTL_MS + 1000)).toBeGreaterThanOrEqual(1);
    expect(await listed("preview=true")).toEqual([]);
    expect(await count("DB_SHARD_1", "agent_messages", agent.tenantId, session.threadId)).toBe(0);
    expect(await count("DB_SHARD_1", "agent_sessions", agent.tenantId, session.threadId)).toBe(0);
  });
});
