// Eval runs (docs/evals.md): every expectation type passing and failing on the deterministic local model, tool mocks
// in place of tool webhooks, identical transcript hashes for the same digest, and suites revisioned with If-Match.
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { suiteResponse } from "../../src/shared/evals-api";
import { completedRun, createSuite, readRun, startRun } from "../helpers/evals";
import { api, expectError, fieldPaths, json, saveDraft, validArtifact } from "../helpers/tenants";
import { liveAgent } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

afterEach(() => {
  vi.restoreAllMocks();
});

const TOOL_URL = "https://hooks.example.com/lookup_order";

/** An agent whose version 1 calls `lookup_order` on every first step, then says what it returned. */
async function toolAgent() {
  const agent = await liveAgent({
    artifact: {
      instructions: "Look orders up.",
      model: {
        provider: "local",
        model: "echo",
        local: { toolCall: { name: "lookup_order", input: { orderId: "A1" } } },
      },
      tools: [{ name: "lookup_order", description: "Finds an order.", url: TOOL_URL, signingSecret: "hook" }],
    },
  });
  return agent;
}

describe("eval runs on the local model", () => {
  it("judges contains, not_contains and regex on the reply, each passing and failing", async () => {
    const agent = await liveAgent();
    const suite = await createSuite(agent, [
      {
        id: "text",
        messages: [{ role: "user", text: "hello world" }],
        expect: [
          { type: "contains", text: "Echo: hello" },
          { type: "contains", text: "goodbye" },
          { type: "not_contains", text: "goodbye" },
          { type: "not_contains", text: "HELLO", caseSensitive: false },
          { type: "regex", pattern: "^Echo: h.llo w[a-z]+$" },
          { type: "regex", pattern: "[0-9]{3}" },
          { type: "json_schema", schema: { type: "object" } },
        ],
      },
      { id: "passing", messages: [{ role: "user", text: "hi" }], expect: [{ type: "contains", text: "hi" }] },
    ]);
    const run = await completedRun(agent, suite.id, { version: 1 });
    expect(run).toMatchObject({ status: "completed", total: 2, passed: 1, failed: 1, passRate: 0.5 });
    const text = run.cases.find((c) => c.caseId === "text")!;
    expect(text.passed).toBe(false);
    expect(text.failures.map((f) => [f.index, f.type])).toEqual([
      [1, "contains"],
      [3, "not_contains"],
      [5, "regex"],
      [6, "json_schema"],
    ]);
    expect(text.failures[0]?.seen).toBe("Echo: hello world");
    expect(text.transcript.messages).toEqual([
      { role: "user", text: "hello world" },
      { role: "assistant", text: "Echo: hello world" },
    ]);
    expect(run.cases.find((c) => c.caseId === "passing")).toMatchObject({ passed: true, failures: [] });
    expect(run.tokens.input).toBeGreaterThan(0);
    expect(run.suiteRevision).toBe(1);
  });

  it("answers tool calls from the case's mocks, judges tool_called and tool_not_called, and never calls the tool", async () => {
    const agent = await toolAgent();
    const spy = vi.spyOn(globalThis, "fetch");
    const suite = await createSuite(agent, [
      {
        id: "mocked",
        messages: [{ role: "user", text: "where is my order?" }],
        toolMocks: { lookup_order: { status: "shipped" } },
        expect: [
          {
            type: "tool_called",
            tool: "lookup_order",
            input: { type: "object", properties: { orderId: { const: "A1" } }, required: ["orderId"] },
          },
          { type: "tool_called", tool: "lookup_order", input: { properties: { orderId: { const: "B2" } } } },
          { type: "tool_called", tool: "refund" },
          { type: "tool_not_called", tool: "refund" },
          { type: "tool_not_called", tool: "lookup_order" },
          { type: "contains", text: "shipped" },
        ],
      },
      { id: "unmocked", messages: [{ role: "user", text: "where is my order?" }], expect: [] },
    ]);
    const run = await completedRun(agent, suite.id, { version: 1 });
    const mocked = run.cases.find((c) => c.caseId === "mocked")!;
    expect(mocked.failures.map((f) => [f.index, f.type])).toEqual([
      [1, "tool_called"],
      [2, "tool_called"],
      [4, "tool_not_called"],
    ]);
    expect(mocked.transcript.toolCalls).toEqual([
      { name: "lookup_order", input: { orderId: "A1" }, output: { status: "shipped" } },
    ]);
    // A tool without a mock fails the case; its webhook is never called.
    const unmocked = run.cases.find((c) => c.caseId === "unmocked")!;
    expect(unmocked.passed).toBe(false);
    expect(unmocked.failures).toEqual([
      expect.objectContaining({ index: -1, type: "tool_mock", seen: ["lookup_order"] }),
    ]);
    const toolCalls = spy.mock.calls.filter(([input]) =>
      String(input instanceof Request ? input.url : input).startsWith(TOOL_URL),
    );
    expect(toolCalls).toEqual([]);
  });

  it("hashes the same transcript for the same digest on the local model, run after run", async () => {
    const agent = await liveAgent();
    const suite = await createSuite(agent, [
      {
        id: "a",
        messages: [
          { role: "user", text: "first" },
          { role: "user", text: "second" },
        ],
        expect: [],
      },
      { id: "b", messages: [{ role: "user", text: "other" }], expect: [] },
    ]);
    const one = await completedRun(agent, suite.id, { version: 1 }, 2);
    const two = await completedRun(agent, suite.id, { version: 1 });
    expect(one.total).toBe(4);
    expect(one.artifactDigest).toBe(two.artifactDigest);
    const hashes = (run: typeof one, id: string) =>
      run.cases.filter((c) => c.caseId === id).map((c) => c.transcriptSha256);
    expect(new Set([...hashes(one, "a"), ...hashes(two, "a")]).size).toBe(1);
    expect(new Set([...hashes(one, "b"), ...hashes(two, "b")]).size).toBe(1);
    expect(hashes(one, "a")[0]).not.toBe(hashes(one, "b")[0]);
    expect(hashes(one, "a")[0]).toMatch(/^[0-9a-f]{64}$/);
    const listed = await json(
      await api(`/v1/agents/${agent.agentId}/eval-suites/${suite.id}/runs`, { key: agent.apiKey }),
      200,
      z.object({ items: z.array(z.looseObject({ id: z.string(), passRate: z.number().nullable() })) }),
    );
    expect(listed.items.map((r) => r.id)).toEqual([two.id, one.id]);
    expect(listed.items[0]).not.toHaveProperty("cases");
    const a = one.cases.find((c) => c.caseId === "a")!;
    expect(a.transcript.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });
});

describe("eval suites", () => {
  it("are revisioned with If-Match and refuse unbounded regular expressions", async () => {
    const agent = await liveAgent();
    const bad = await api(`/v1/agents/${agent.agentId}/eval-suites`, {
      method: "POST",
      key: agent.apiKey,
      body: {
        name: "bad",
        cases: [
          {
            id: "x",
            messages: [{ role: "user", text: "hi" }],
            expect: [
              { type: "regex", pattern: "(a+)+$" },
              { type: "regex", pattern: "(\\w)\\1" },
              { type: "regex", pattern: "(a|aa)*b" },
              { type: "regex", pattern: "^[a-z]+(-[a-z]{2})?$" },
            ],
          },
        ],
      },
    });
    expect(fieldPaths(await expectError(bad, 400, "bad_request"))).toEqual([
      "cases.0.expect.0.pattern",
      "cases.0.expect.1.pattern",
      "cases.0.expect.2.pattern",
    ]);

    const suite = await createSuite(agent, [
      { id: "one", messages: [{ role: "user", text: "hi" }], expect: [] },
    ]);
    const path = `/v1/agents/${agent.agentId}/eval-suites/${suite.id}`;
    const stale = await api(path, {
      method: "PATCH",
      key: agent.apiKey,
      body: { name: "x" },
      headers: { "If-Match": '"7"' },
    });
    await expectError(stale, 412, "precondition_failed");
    const changed = await api(path, {
      method: "PATCH",
      key: agent.apiKey,
      body: { name: "Renamed" },
      headers: { "If-Match": '"1"' },
    });
    expect(changed.headers.get("ETag")).toBe('"2"');
    expect(await json(changed, 200, suiteResponse)).toMatchObject({ name: "Renamed", revision: 2 });
    const listed = await json(
      await api(`/v1/agents/${agent.agentId}/eval-suites`, { key: agent.apiKey }),
      200,
      z.object({ items: z.array(suiteResponse) }),
    );
    expect(listed.items.map((s) => s.id)).toEqual([suite.id]);
    const gone = await api(path, { method: "DELETE", key: agent.apiKey, headers: { "If-Match": '"2"' } });
    expect(gone.status).toBe(204);
    await expectError(await api(path, { key: agent.apiKey }), 404, "not_found");
  });
});

describe("eval run targets and restarts", () => {
  it("runs a draft revision, and refuses a stale one with 412", async () => {
    const agent = await liveAgent();
    await saveDraft(
      agent.apiKey,
      agent.agentId,
      1,
      validArtifact({ model: { provider: "local", model: "lorem" } }),
    );
    const suite = await createSuite(agent, [
      {
        id: "echo",
        messages: [{ role: "user", text: "hi" }],
        expect: [{ type: "contains", text: "Echo: hi" }],
      },
    ]);
    const onDraft = await completedRun(agent, suite.id, { draftRevision: 2 });
    const onVersion = await completedRun(agent, suite.id, { version: 1 });
    expect(onDraft).toMatchObject({ target: { draftRevision: 2 }, passed: 0 });
    expect(onVersion).toMatchObject({ target: { version: 1 }, passed: 1 });
    expect(onDraft.artifactDigest).not.toBe(onVersion.artifactDigest);
    const stale = await api(`/v1/agents/${agent.agentId}/eval-suites/${suite.id}/runs`, {
      method: "POST",
      key: agent.apiKey,
      body: { target: { draftRevision: 1 } },
    });
    await expectError(stale, 412, "precondition_failed");
  });

  it("goes on where it stopped when its object dies mid-run, each case judged once", async () => {
    const agent = await liveAgent({
      artifact: { model: { provider: "local", model: "echo", local: { chunks: 4, chunkDelayMs: 100 } } },
    });
    const cases = Array.from({ length: 16 }, (_, i) => ({
      id: `c${i}`,
      messages: [{ role: "user", text: `question ${i}` }],
      expect: [{ type: "contains", text: `question ${i}` }],
    }));
    const suite = await createSuite(agent, cases);
    const runId = await startRun(agent, suite.id, { version: 1 });
    await waitFor(
      () => readRun(agent, suite.id, runId),
      (run) => run.cases.length >= 1,
      { what: "a first case judged", timeoutMs: 10_000 },
    );
    const runner = env.EVALS.get(env.EVALS.idFromName(agent.tenantId));
    // Every object dies at once, mid-case (as on a deploy or a crash): nothing held in memory survives.
    await abortAllDurableObjects();
    const after = await readRun(agent, suite.id, runId);
    expect(after.status).not.toBe("completed");
    // The object's stored jobs and its alarm are all a restart needs.
    await waitFor(
      async () => {
        await runDurableObjectAlarm(runner);
        return readRun(agent, suite.id, runId);
      },
      (run) => run.status === "completed",
      { what: "the run completed after the eviction", timeoutMs: 15_000, intervalMs: 100 },
    );
    const done = await readRun(agent, suite.id, runId);
    expect(done).toMatchObject({ total: 16, passed: 16, failed: 0 });
    expect(done.cases.map((c) => c.caseId).sort()).toEqual(cases.map((c) => c.id).sort());
  });
});
