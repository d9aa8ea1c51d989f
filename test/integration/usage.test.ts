// GET /v1/usage: tokens in/out and runs per day, for the caller's tenant only; erasure never lowers them.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { analyticsResponse, usageResponse } from "../../src/shared/sessions-api";
import { converse, drainThread, launchFor, secondAgent, threadStub } from "../helpers/projection";
import { api, createApiKey, expectError, json } from "../helpers/tenants";
import { type LiveAgent, liveAgent } from "../helpers/threads";

const DAY_MS = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
// Around today, so a run just before midnight UTC still falls inside.
const around = `from=${day(Date.now() - DAY_MS)}&to=${day(Date.now() + DAY_MS)}`;

/** The thread's own token totals, read inside the object. */
async function threadTokens(agent: LiveAgent, threadId: string) {
  return runInDurableObject(await threadStub(agent, threadId), (_i, state) =>
    z.object({ input: z.number(), output: z.number(), runs: z.number() }).parse(
      state.storage.sql
        .exec(
          `SELECT COALESCE(SUM(input_tokens), 0) AS input, COALESCE(SUM(output_tokens), 0) AS output,
                    (SELECT COUNT(*) FROM runs) AS runs FROM usage`,
        )
        .one(),
    ),
  );
}

async function conversation(agent: LiveAgent, subject: string, texts: string[]) {
  const session = await launchFor(agent, subject);
  await converse(session, texts);
  await drainThread(await threadStub(agent, session.threadId));
  return threadTokens(agent, session.threadId);
}

describe("GET /v1/usage", () => {
  it("sums tokens and runs by day, per tenant and optionally per agent", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const billing = await secondAgent(agent);
    const other = await liveAgent({ agent: { visibility: "private" } });
    const one = await conversation(agent, "user-1", ["how much is it?", "and shipping?"]);
    const two = await conversation(billing, "user-1", ["send my invoice"]);
    await conversation(other, "user-1", ["someone else's usage"]);
    expect(one.input + one.output).toBeGreaterThan(0);

    const all = await json(await api(`/v1/usage?${around}`, { key: agent.apiKey }), 200, usageResponse);
    expect(all.totals).toEqual({
      runs: one.runs + two.runs,
      inputTokens: one.input + two.input,
      outputTokens: one.output + two.output,
    });
    expect(all.items.reduce((n, d) => n + d.runs, 0)).toBe(3);
    expect(all.agentId).toBeNull();

    const reader = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");
    const perAgent = await json(
      await api(`/v1/usage?${around}&agentId=${billing.agentId}`, { key: reader.apiKey }),
      200,
      usageResponse,
    );
    expect(perAgent.totals).toEqual({ runs: 1, inputTokens: two.input, outputTokens: two.output });
    expect(perAgent.agentId).toBe(billing.agentId);

    // Another tenant's agent id matches nothing here; a past range is empty.
    const foreign = await json(
      await api(`/v1/usage?${around}&agentId=${other.agentId}`, { key: agent.apiKey }),
      200,
      usageResponse,
    );
    expect(foreign.items).toEqual([]);
    const past = await json(
      await api("/v1/usage?from=2020-01-01&to=2020-01-31", { key: agent.apiKey }),
      200,
      usageResponse,
    );
    expect(past).toMatchObject({ from: "2020-01-01", to: "2020-01-31", items: [], totals: { runs: 0 } });

    // The default range is the last 30 days up to today.
    const asked = Date.now();
    const recent = await json(await api("/v1/usage", { key: agent.apiKey }), 200, usageResponse);
    // Today as the server saw it: either side of a midnight the request may have crossed.
    expect([day(asked), day(Date.now())]).toContain(recent.to);
    expect(recent.from).toBe(day(Date.parse(recent.to) - 29 * DAY_MS));
  });

  it("keeps erased threads' runs and tokens (billing data) and agrees with analytics before and after", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const subject = `user-${crypto.randomUUID()}`;
    const one = await conversation(agent, subject, ["first question", "second question"]);
    const two = await conversation(agent, subject, ["another thread"]);
    const kept = await launchFor(agent, "user-kept");
    await converse(kept, ["a thread erased on its own"]);
    await drainThread(await threadStub(agent, kept.threadId));
    const three = await threadTokens(agent, kept.threadId);

    /** Usage and analytics of the same tenant over the same days, day by day. */
    const both = async () => {
      const usage = await json(await api(`/v1/usage?${around}`, { key: agent.apiKey }), 200, usageResponse);
      const analytics = await json(
        await api(`/v1/analytics?${around}&groupBy=day`, { key: agent.apiKey }),
        200,
        analyticsResponse,
      );
      return {
        usage: usage.items.map((d) => [d.day, d.runs, d.inputTokens, d.outputTokens]),
        analytics: analytics.items.map((d) => [d.key, d.turns, d.inputTokens, d.outputTokens]),
        totals: usage.totals,
      };
    };
    const before = await both();
    expect(before.totals).toEqual({
      runs: one.runs + two.runs + three.runs,
      inputTokens: one.input + two.input + three.input,
      outputTokens: one.output + two.output + three.output,
    });
    expect(before.usage).toEqual(before.analytics);

    // Erasure removes text, never usage: by subject (two threads) and one thread on its own.
    const erased = await api("/v1/subject-erasures", {
      method: "POST",
      key: agent.apiKey,
      body: { subject },
    });
    expect(erased.status).toBe(200);
    expect((await api(`/v1/sessions/${kept.threadId}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );
    const runsLeft = await env.DB.prepare("SELECT COUNT(*) AS n FROM agent_runs WHERE tenant_id = ?")
      .bind(agent.tenantId)
      .first<{ n: number }>();
    expect(runsLeft?.n).toBe(0);

    const after = await both();
    expect(after).toEqual(before);
  });

  it("refuses malformed ranges and missing keys", async () => {
    const agent = await liveAgent();
    for (const query of [
      "from=2026-02-31",
      "from=2026-03-02&to=2026-03-01",
      "from=2020-01-01&to=2021-06-01",
      "from=yesterday",
      "to=2026-1-1",
      "agent=x",
    ]) {
      await expectError(await api(`/v1/usage?${query}`, { key: agent.apiKey }), 400, "bad_request");
    }
    await expectError(await api("/v1/usage"), 401, "unauthenticated");
  });
});
