// Eval cases and real threads (docs/evals.md): a case copied from a thread's branch (redacted as the export is), a judge
// on a fake model with its verdict stored, and eval threads never showing in sessions, usage, analytics or webhooks.
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { suiteResponse } from "../../src/shared/evals-api";
import { completedRun, createSuite } from "../helpers/evals";
import { fakeOpenAICompatible } from "../helpers/fake-providers";
import { fakeReceiver } from "../helpers/fake-receiver";
import { launchFor } from "../helpers/projection";
import { api, createTenant, expectError, json } from "../helpers/tenants";
import { clientMessageId, type Launch, liveAgent, ORIGIN } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

afterEach(() => {
  vi.restoreAllMocks();
});

const replySchema = z.object({
  entries: z.array(z.object({ id: z.string(), role: z.string().nullable(), text: z.string() })),
});

async function say(session: Launch, text: string) {
  const res = await api(`/v1/threads/${session.threadId}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
    body: { clientMessageId: clientMessageId(), text },
  });
  return json(res, 201, replySchema);
}

describe("a case from a thread", () => {
  it("copies the branch up to the entry, redacted, in one call, and runs it", async () => {
    const agent = await liveAgent();
    const session = await launchFor(agent, "alice");
    const first = await say(session, "my key is sk_live_0123456789abcdefghijklmn, help");
    await say(session, "and my order number is 4242");
    const assistant = first.entries.find((e) => e.role === "assistant")!;
    const suite = await createSuite(agent, []);
    const cases = `/v1/agents/${agent.agentId}/eval-suites/${suite.id}/cases`;
    const added = await json(
      await api(cases, {
        method: "POST",
        key: agent.apiKey,
        body: { fromThread: { threadId: session.threadId, entryId: assistant.id } },
      }),
      201,
      suiteResponse,
    );
    expect(added.revision).toBe(2);
    const made = added.cases[0]!;
    expect(made.fromThread).toEqual({ threadId: session.threadId, entryId: assistant.id });
    expect(made.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const text = JSON.stringify(made.messages);
    expect(text).toContain("[REDACTED]");
    expect(text).not.toContain("0123456789abcdefghijklmn");
    expect(text).not.toContain("4242");

    // Another tenant's thread, or an entry the thread does not have, is not found.
    const other = await liveAgent({ tenant: await createTenant() });
    const foreign = await launchFor(other, "bob");
    await say(foreign, "hello");
    const refused = await api(cases, {
      method: "POST",
      key: agent.apiKey,
      body: { fromThread: { threadId: foreign.threadId, entryId: assistant.id } },
    });
    await expectError(refused, 404, "not_found");
    const noEntry = await api(cases, {
      method: "POST",
      key: agent.apiKey,
      body: { fromThread: { threadId: session.threadId, entryId: "ent_missing" } },
    });
    await expectError(noEntry, 404, "not_found");

    const run = await completedRun(agent, suite.id, { version: 1 });
    expect(run.cases[0]).toMatchObject({ caseId: made.id, passed: true });
    expect(run.cases[0]?.transcript.messages[0]?.text).toBe(made.messages[0]?.text);
  });
});

describe("the judge", () => {
  it("asks the model named in the case, stores its verdict and reasoning, and passes at the threshold", async () => {
    const agent = await liveAgent();
    const judge = fakeOpenAICompatible([
      {
        kind: "text",
        deltas: ['{"score": 0.9, ', '"reasoning": "Polite and on topic."}'],
        usage: { input: 40, output: 12 },
      },
      { kind: "text", deltas: ['{"score": 0.2, "reasoning": "Rude."}'] },
      { kind: "text", deltas: ["I cannot grade this."] },
    ]);
    vi.spyOn(globalThis, "fetch").mockImplementation(judge.fetch);
    const suite = await createSuite(agent, [
      {
        id: "polite",
        messages: [{ role: "user", text: "hello" }],
        expect: [
          {
            type: "judge",
            model: {
              provider: "openai-compatible",
              model: "judge-1",
              baseUrl: "https://judge.example.com/v1",
            },
            rubric: "The reply is polite.",
            threshold: 0.5,
          },
        ],
      },
    ]);
    const good = await completedRun(agent, suite.id, { version: 1 });
    expect(good.cases[0]).toMatchObject({
      passed: true,
      judge: [{ index: 0, score: 0.9, passed: true, reasoning: "Polite and on topic." }],
    });
    expect(good.tokens.input).toBeGreaterThanOrEqual(40);
    const asked = judge.requests[0]!.text;
    expect(asked).toContain("The reply is polite.");
    expect(asked).toContain("Echo: hello");

    const bad = await completedRun(agent, suite.id, { version: 1 });
    expect(bad.cases[0]).toMatchObject({
      passed: false,
      failures: [expect.objectContaining({ index: 0, type: "judge" })],
      judge: [{ index: 0, score: 0.2, passed: false, reasoning: "Rude." }],
    });
    const none = await completedRun(agent, suite.id, { version: 1 });
    expect(none.cases[0]?.judge[0]).toMatchObject({ score: null, passed: false });
  });
});

describe("eval threads", () => {
  it("never show in sessions, usage, analytics or webhooks; only eval.completed is sent", async () => {
    const agent = await liveAgent();
    const receiver = fakeReceiver();
    const hook = await api("/v1/webhooks", {
      method: "POST",
      key: agent.apiKey,
      body: {
        url: receiver.url,
        events: ["thread.created", "run.succeeded", "run.failed", "eval.completed"],
      },
    });
    expect(hook.status).toBe(201);
    const suite = await createSuite(agent, [
      {
        id: "one",
        messages: [
          { role: "user", text: "first" },
          { role: "user", text: "again" },
        ],
        expect: [],
      },
      { id: "two", messages: [{ role: "user", text: "second" }], expect: [] },
    ]);
    const run = await completedRun(agent, suite.id, { version: 1 });
    expect(run.tokens.input).toBeGreaterThan(0);

    const delivered = await waitFor(
      () => receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: { runId?: string } }),
      (events) => events.length > 0,
      { what: "eval.completed delivered" },
    );
    expect(delivered).toEqual([
      expect.objectContaining({
        type: "eval.completed",
        data: expect.objectContaining({ runId: run.id, passed: 2 }),
      }),
    ]);

    for (const query of ["", "&preview=true"]) {
      const sessions = await json(
        await api(`/v1/sessions?agentId=${agent.agentId}${query}`, { key: agent.apiKey }),
        200,
        z.object({ items: z.array(z.unknown()) }),
      );
      expect(sessions.items).toEqual([]);
    }
    const day = new Date().toISOString().slice(0, 10);
    const usage = await json(
      await api(`/v1/usage?agentId=${agent.agentId}&from=${day}&to=${day}`, { key: agent.apiKey }),
      200,
      z.object({ items: z.array(z.object({ runs: z.number() })) }),
    );
    expect(usage.items.reduce((n, d) => n + d.runs, 0)).toBe(0);
    const analytics = await json(
      await api(`/v1/analytics?agentId=${agent.agentId}&from=${day}&to=${day}&groupBy=day`, {
        key: agent.apiKey,
      }),
      200,
      z.object({ items: z.array(z.object({ turns: z.number(), threads: z.number() })) }),
    );
    expect(analytics.items.reduce((n, d) => n + d.turns + d.threads, 0)).toBe(0);
    const previews = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM threads WHERE tenant_id = ? AND deleted_at IS NULL",
    )
      .bind(agent.tenantId)
      .first<{ n: number }>();
    expect(previews?.n).toBe(0);
    // Nothing else arrived meanwhile.
    expect(receiver.received).toHaveLength(1);
  });
});
