// GET /v1/analytics (docs/api.md): a 50/50 release read as an experiment — threads, turns, failures, tokens, first-delta
// percentiles and feedback per version and per day, from the projection's rollup; preview threads left out, counts
// kept across erasure and never doubled by a replayed projection, one tenant's figures only.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { analyticsResponse, sessionResponse } from "../../src/shared/sessions-api";
import { upsertRun, upsertUsage } from "../../src/storage/d1/projection-writer";
import { converse, drainThread, launchFor, threadStub } from "../helpers/projection";
import {
  api,
  createApiKey,
  createRelease,
  expectError,
  fieldPaths,
  json,
  publish,
  saveDraft,
  validArtifact,
} from "../helpers/tenants";
import { clientMessageId, connect, type LiveAgent, liveAgent } from "../helpers/threads";

const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const around = `from=${day(Date.now() - 2 * DAY_MS)}&to=${day(Date.now() + DAY_MS)}`;

async function analyticsOf(agent: LiveAgent, query: string, key = agent.apiKey) {
  return json(await api(`/v1/analytics?${query}`, { key }), 200, analyticsResponse);
}

/** A private agent whose version 1 answers and whose version 2 fails mid-reply, released 50/50. */
async function experiment(): Promise<LiveAgent> {
  const agent = await liveAgent({ agent: { visibility: "private" } });
  await saveDraft(
    agent.apiKey,
    agent.agentId,
    1,
    validArtifact({ model: { provider: "local", model: "echo", local: { chunks: 4, failAfterChunks: 2 } } }),
  );
  expect((await publish(agent.apiKey, agent.agentId, 2)).version).toBe(2);
  const release = await createRelease(agent.apiKey, agent.agentId, [
    { version: 1, weight: 5_000 },
    { version: 2, weight: 5_000 },
  ]);
  const activated = await api(`/v1/agents/${agent.agentId}/releases/${release.id}/activate`, {
    method: "POST",
    key: agent.apiKey,
  });
  expect(activated.status).toBe(200);
  return agent;
}

/** One turn on a new thread of `subject`, projected; returns the thread and the version it was allocated. */
async function oneTurn(agent: LiveAgent, subject: string, text: string) {
  const session = await launchFor(agent, subject);
  await converse(session, [text]);
  await drainThread(await threadStub(agent, session.threadId));
  const info = await json(
    await api(`/v1/sessions/${session.threadId}`, { key: agent.apiKey }),
    200,
    sessionResponse,
  );
  return { session, version: info.agentVersion };
}

const runFacts = z.object({
  session_id: z.string(),
  status: z.string(),
  first_delta_ms: z.number().nullable(),
  input_tokens: z.number(),
  output_tokens: z.number(),
});

/** What D1 holds about the given threads' runs: the ground truth the rollup must agree with. */
async function runsOf(tenantId: string, threadIds: readonly string[]) {
  const { results } = await env.DB.prepare(
    `SELECT r.session_id, r.status, r.first_delta_ms,
            (SELECT COALESCE(SUM(u.input_tokens), 0) FROM agent_usage u WHERE u.tenant_id = r.tenant_id
               AND u.session_id = r.session_id AND u.run_id = r.id) AS input_tokens,
            (SELECT COALESCE(SUM(u.output_tokens), 0) FROM agent_usage u WHERE u.tenant_id = r.tenant_id
               AND u.session_id = r.session_id AND u.run_id = r.id) AS output_tokens
     FROM agent_runs r WHERE r.tenant_id = ? AND r.session_id IN (SELECT value FROM json_each(?))`,
  )
    .bind(tenantId, JSON.stringify(threadIds))
    .all();
  return results.map((r) => runFacts.parse(r));
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length / 2) - 1] ?? 0;

/** Rates a thread's assistant reply over its socket; a second rating replaces the first. */
async function rateReply(
  agent: LiveAgent,
  session: Awaited<ReturnType<typeof launchFor>>,
  ratings: ("up" | "down")[],
) {
  const { results } = await env.DB.prepare(
    "SELECT id FROM agent_messages WHERE tenant_id = ? AND session_id = ? AND role = 'assistant'",
  )
    .bind(agent.tenantId, session.threadId)
    .all();
  const entryId = z.object({ id: z.string() }).parse(results[0]).id;
  const ws = await connect(session);
  // Projected after each rating, so D1 sees the change as an update of the first.
  for (const rating of ratings) {
    ws.send({ type: "feedback", entryId, rating });
    await ws.next("feedback", (f) => f.entryId === entryId && f.feedback?.rating === rating);
    await drainThread(await threadStub(agent, session.threadId));
  }
  ws.ws.close();
}

describe("GET /v1/analytics", () => {
  it("reads a 50/50 release by version: threads, turns, failures, tokens, first delta and feedback", async () => {
    const agent = await experiment();
    const threads: { session: Awaited<ReturnType<typeof launchFor>>; version: number }[] = [];
    for (let i = 0; i < 40; i++) {
      threads.push(await oneTurn(agent, `user-${i}`, `hello number ${i}`));
      const v1 = threads.filter((t) => t.version === 1).length;
      if (v1 >= 2 && threads.length - v1 >= 2) break;
    }
    const v1 = threads.filter((t) => t.version === 1);
    const v2 = threads.filter((t) => t.version === 2);
    expect(v1.length).toBeGreaterThanOrEqual(2);
    expect(v2.length).toBeGreaterThanOrEqual(2);

    // Feedback: every v1 reply up, except the first, rated up and then changed to down (latest wins).
    const [first, ...rest] = v1;
    if (first === undefined) throw new Error("no v1 thread");
    await rateReply(agent, first.session, ["up", "down"]);
    for (const t of rest) await rateReply(agent, t.session, ["up"]);

    const body = await analyticsOf(agent, `${around}&agentId=${agent.agentId}&groupBy=version`);
    expect(body).toMatchObject({ groupBy: "version", agentId: agent.agentId });
    expect(body.items.map((i) => i.key)).toEqual(["1", "2"]);
    for (const [group, item] of [
      [v1, body.items[0]],
      [v2, body.items[1]],
    ] as const) {
      const runs = await runsOf(
        agent.tenantId,
        group.map((t) => t.session.threadId),
      );
      expect(runs).toHaveLength(group.length);
      const deltas = runs.map((r) => r.first_delta_ms).filter((ms): ms is number => ms !== null);
      expect(deltas).toHaveLength(group.length);
      expect(item).toMatchObject({
        agentId: agent.agentId,
        threads: group.length,
        turns: group.length,
        failedTurns: runs.filter((r) => r.status === "failed").length,
        inputTokens: runs.reduce((n, r) => n + r.input_tokens, 0),
        outputTokens: runs.reduce((n, r) => n + r.output_tokens, 0),
      });
      // Percentiles come from a log histogram: within 9.1% of the true value, plus a millisecond of rounding.
      const p50 = item?.firstDeltaMsP50 ?? -1;
      expect(Math.abs(p50 - median(deltas))).toBeLessThanOrEqual(median(deltas) * 0.091 + 1);
      expect(item?.firstDeltaMsP95 ?? -1).toBeGreaterThanOrEqual(p50);
    }
    expect(body.items[0]).toMatchObject({
      version: 1,
      failedTurns: 0,
      feedbackUp: v1.length - 1,
      feedbackDown: 1,
    });
    expect(body.items[1]).toMatchObject({
      version: 2,
      failedTurns: v2.length,
      feedbackUp: 0,
      feedbackDown: 0,
    });

    // Without groupBy the answer is by version; a read key may ask.
    const reader = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");
    const again = await analyticsOf(agent, `${around}&agentId=${agent.agentId}`, reader.apiKey);
    expect(again.items).toEqual(body.items);

    // Erasure removes the conversation, not the counts.
    const erased = await api(`/v1/sessions/${first.session.threadId}`, {
      method: "DELETE",
      key: agent.apiKey,
    });
    expect(erased.status).toBe(204);
    expect(await runsOf(agent.tenantId, [first.session.threadId])).toEqual([]);
    expect((await analyticsOf(agent, `${around}&agentId=${agent.agentId}`)).items).toEqual(body.items);
  });

  it("groups by day, and a replayed or reordered projection never counts twice", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const { session } = await oneTurn(agent, "user-1", "what are your opening hours?");
    const scope = { tenantId: agent.tenantId, threadId: session.threadId };
    const versionId = z
      .object({ version_id: z.string() })
      .parse(
        await env.DB.prepare("SELECT version_id FROM agent_sessions WHERE tenant_id = ? AND id = ?")
          .bind(agent.tenantId, session.threadId)
          .first(),
      ).version_id;
    const pastDay = day(Date.now() - 2 * DAY_MS);
    const pastRun = (version: number, status: string, firstDeltaMs: number | null) => ({
      id: "run-from-the-past",
      agentId: agent.agentId,
      versionId,
      status,
      day: pastDay,
      userEntryId: null,
      assistantEntryId: null,
      abortReason: null,
      errorCode: status === "failed" ? "upstream_unavailable" : null,
      errorMessage: null,
      version,
      createdAt: `${pastDay}T10:00:00.000Z`,
      startedAt: null,
      endedAt: null,
      firstDeltaMs,
      firstDeltaBucket: firstDeltaMs === null ? null : Math.floor(4 * Math.log2(firstDeltaMs)) + 1,
      inputDigest: null,
    });
    const usage = {
      runId: "run-from-the-past",
      turn: 0,
      agentId: agent.agentId,
      day: pastDay,
      provider: "local",
      model: "echo",
      inputTokens: 30,
      outputTokens: 7,
      version: 1,
      createdAt: `${pastDay}T10:00:01.000Z`,
    };
    // The run as it moves (queued, then failed with a first delta of 400 ms), each batch delivered twice, and a
    // stale revision arriving last.
    for (const batch of [
      [upsertRun(env.DB, scope, pastRun(1, "queued", null))],
      [upsertRun(env.DB, scope, pastRun(3, "failed", 400)), upsertUsage(env.DB, scope, usage)],
      [upsertRun(env.DB, scope, pastRun(3, "failed", 400)), upsertUsage(env.DB, scope, usage)],
      [upsertRun(env.DB, scope, pastRun(2, "running", null))],
    ]) {
      await env.DB.batch(batch);
    }
    // The real turn's own projection, drained again: nothing new.
    await drainThread(await threadStub(agent, session.threadId));

    const body = await analyticsOf(agent, `${around}&groupBy=day`);
    const today = day(Date.now());
    expect(body.items.map((i) => i.key)).toEqual([pastDay, today]);
    expect(body.items[0]).toEqual({
      key: pastDay,
      threads: 0,
      turns: 1,
      failedTurns: 1,
      inputTokens: 30,
      outputTokens: 7,
      // 400 ms is in bucket [2^(34/4), 2^(35/4)) ms, reported as its middle.
      firstDeltaMsP50: Math.round(2 ** (34.5 / 4)),
      firstDeltaMsP95: Math.round(2 ** (34.5 / 4)),
      feedbackUp: 0,
      feedbackDown: 0,
    });
    expect(body.items[1]).toMatchObject({ key: today, threads: 1, turns: 1, failedTurns: 0 });
    expect(body.items[1]?.firstDeltaMsP50).not.toBeNull();

    // By version, both days add up under version 1.
    const byVersion = await analyticsOf(agent, around);
    expect(byVersion.items).toHaveLength(1);
    expect(byVersion.items[0]).toMatchObject({ key: "1", version: 1, threads: 1, turns: 2, failedTurns: 1 });
    // A range that leaves the past day out leaves its run out.
    const recent = await analyticsOf(
      agent,
      `from=${day(Date.now() - DAY_MS)}&to=${day(Date.now() + DAY_MS)}`,
    );
    expect(recent.items[0]).toMatchObject({ turns: 1, failedTurns: 0 });
  });

  it("leaves preview threads out and shows one tenant only", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const other = await liveAgent({ agent: { visibility: "private" } });
    await oneTurn(agent, "user-1", "a counted conversation");
    await oneTurn(other, "user-1", "another tenant's conversation");

    // A preview thread (marked at launch): its turns, tokens and feedback are not counted.
    const preview = await launchFor(agent, "tester");
    await env.DB.prepare("UPDATE threads SET preview = 1 WHERE tenant_id = ? AND id = ?")
      .bind(agent.tenantId, preview.threadId)
      .run();
    const ws = await connect(preview);
    ws.send({ type: "send", clientMessageId: clientMessageId(), text: "trying the draft" });
    const reply = await ws.next("entry", (f) => f.entry.role === "assistant");
    await ws.next("run", (f) => f.status === "succeeded");
    ws.send({ type: "feedback", entryId: reply.entry.id, rating: "down" });
    await ws.next("feedback");
    ws.ws.close();
    await drainThread(await threadStub(agent, preview.threadId));
    expect((await runsOf(agent.tenantId, [preview.threadId])).length).toBe(1);

    const mine = await analyticsOf(agent, around);
    expect(mine.items).toHaveLength(1);
    expect(mine.items[0]).toMatchObject({ agentId: agent.agentId, threads: 1, turns: 1, feedbackDown: 0 });
    const theirs = await analyticsOf(other, around);
    expect(theirs.items).toHaveLength(1);
    expect(theirs.items[0]).toMatchObject({ agentId: other.agentId, threads: 1, turns: 1 });
    // Another tenant's agent id names nothing here.
    expect((await analyticsOf(agent, `${around}&agentId=${other.agentId}`)).items).toEqual([]);
  });

  it("defaults to the last 30 days and refuses bad ranges naming the field", async () => {
    const agent = await liveAgent();
    const asked = Date.now();
    const recent = await analyticsOf(agent, "");
    // Today as the server saw it: either side of a midnight the request may have crossed.
    expect([day(asked), day(Date.now())]).toContain(recent.to);
    expect(recent.from).toBe(day(Date.parse(recent.to) - 29 * DAY_MS));
    expect(recent).toMatchObject({ groupBy: "version", agentId: null, items: [] });

    for (const [query, field] of [
      ["from=2026-02-31", "from"],
      ["to=tomorrow", "to"],
      ["from=2026-03-02&to=2026-03-01", "from"],
      ["from=2025-01-01&to=2026-03-01", "from"],
      ["groupBy=week", "groupBy"],
      ["subject=someone", "(root)"],
    ] as const) {
      const error = await expectError(
        await api(`/v1/analytics?${query}`, { key: agent.apiKey }),
        400,
        "bad_request",
      );
      expect(fieldPaths(error), query).toContain(field);
    }
    await expectError(await api("/v1/analytics"), 401, "unauthenticated");
  });
});
