// The release gate (docs/evals.md#the-release-gate): a release that raises a version's weight needs a completed run of
// every gate suite's current revision on that version's digest meeting the pass rate; forcing it is recorded.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agentResponse, releaseResponse } from "../../src/shared/api";
import { completedRun, createSuite } from "../helpers/evals";
import { api, expectError, json, publish, saveDraft, validArtifact } from "../helpers/tenants";
import { type LiveAgent, liveAgent } from "../helpers/threads";

const failing = z.object({
  failing: z.array(
    z.object({
      version: z.number(),
      suiteId: z.string(),
      reason: z.string(),
      failingCases: z.array(z.string()).optional(),
    }),
  ),
});

function release(agent: LiveAgent, body: Record<string, unknown>) {
  return api(`/v1/agents/${agent.agentId}/releases`, {
    method: "POST",
    key: agent.apiKey,
    body: { environment: "development", ...body },
  });
}

async function gateRefusal(res: Response) {
  const body = await json(
    res,
    409,
    z.object({
      error: z.object({ code: z.literal("conflict"), reason: z.literal("eval_gate"), details: failing }),
    }),
  );
  return body.error.details.failing;
}

describe("the release gate", () => {
  it("blocks a release raising a version without a passing run, and lets it through once a run passes", async () => {
    const agent = await liveAgent();
    const suite = await createSuite(agent, [
      {
        id: "greets",
        messages: [{ role: "user", text: "hello" }],
        expect: [{ type: "contains", text: "Hello there" }],
      },
    ]);
    const patched = await api(`/v1/agents/${agent.agentId}`, {
      method: "PATCH",
      key: agent.apiKey,
      body: { releaseGate: { suiteIds: [suite.id], minPassRate: 1 } },
    });
    expect((await json(patched, 200, agentResponse)).releaseGate).toEqual({
      suiteIds: [suite.id],
      minPassRate: 1,
    });
    const shown = await json(
      await api(`/v1/agents/${agent.agentId}`, { key: agent.apiKey }),
      200,
      agentResponse,
    );
    expect(shown.releaseGate).toEqual({ suiteIds: [suite.id], minPassRate: 1 });

    // Keeping version 1 at its active weight raises nothing: no run needed.
    expect((await release(agent, { allocations: [{ version: 1, weight: 10_000 }] })).status).toBe(201);

    await saveDraft(agent.apiKey, agent.agentId, 1, validArtifact({ instructions: "Greet people." }));
    await publish(agent.apiKey, agent.agentId, 2);
    const split = {
      allocations: [
        { version: 1, weight: 5_000 },
        { version: 2, weight: 5_000 },
      ],
    };
    expect(await gateRefusal(await release(agent, split))).toEqual([
      expect.objectContaining({ version: 2, suiteId: suite.id, reason: "no_completed_run" }),
    ]);

    const failed = await completedRun(agent, suite.id, { version: 2 });
    expect(failed.passRate).toBe(0);
    expect(await gateRefusal(await release(agent, split))).toEqual([
      expect.objectContaining({ version: 2, reason: "below_pass_rate", failingCases: ["greets"] }),
    ]);

    // The suite fixed: its new revision has no run yet, so the old run no longer counts.
    const fixed = await api(`/v1/agents/${agent.agentId}/eval-suites/${suite.id}`, {
      method: "PATCH",
      key: agent.apiKey,
      headers: { "If-Match": '"1"' },
      body: {
        cases: [
          {
            id: "greets",
            messages: [{ role: "user", text: "hello" }],
            expect: [{ type: "contains", text: "Echo: hello" }],
          },
        ],
      },
    });
    expect(fixed.status).toBe(200);
    expect(await gateRefusal(await release(agent, split))).toEqual([
      expect.objectContaining({ version: 2, reason: "no_completed_run" }),
    ]);
    const passed = await completedRun(agent, suite.id, { version: 2 });
    expect(passed).toMatchObject({ passRate: 1, suiteRevision: 2 });
    const created = await json(await release(agent, split), 201, releaseResponse);
    expect(created.gateOverrides).toBeUndefined();
  });

  it("goes past a failing gate only with force and a reason, recorded on the release for create and activate", async () => {
    const agent = await liveAgent();
    const suite = await createSuite(agent, [
      {
        id: "never",
        messages: [{ role: "user", text: "hi" }],
        expect: [{ type: "contains", text: "impossible" }],
      },
    ]);
    await api(`/v1/agents/${agent.agentId}`, {
      method: "PATCH",
      key: agent.apiKey,
      body: { releaseGate: { suiteIds: [suite.id], minPassRate: 0.5 } },
    });
    await saveDraft(agent.apiKey, agent.agentId, 1, validArtifact({ instructions: "Hotfix." }));
    await publish(agent.apiKey, agent.agentId, 2);
    const all = { allocations: [{ version: 2, weight: 10_000 }] };

    const noReason = await release(agent, { ...all, force: true });
    await expectError(noReason, 400, "bad_request");
    const forced = await json(
      await release(agent, { ...all, force: true, reason: "Hotfix for outage" }),
      201,
      releaseResponse,
    );
    expect(forced.gateOverrides).toEqual([
      expect.objectContaining({
        action: "create",
        reason: "Hotfix for outage",
        by: expect.any(String),
        at: expect.any(String),
      }),
    ]);
    expect(forced.gateOverrides?.[0]?.failing).toEqual([
      expect.objectContaining({ version: 2, reason: "no_completed_run" }),
    ]);

    // Activating it raises version 2 over its active weight (0): refused again unless forced.
    const activate = (body?: unknown) =>
      api(`/v1/agents/${agent.agentId}/releases/${forced.id}/activate`, {
        method: "POST",
        key: agent.apiKey,
        ...(body !== undefined ? { body } : {}),
      });
    expect(await gateRefusal(await activate())).toHaveLength(1);
    const active = await json(
      await activate({ force: true, reason: "Approved by on-call" }),
      200,
      releaseResponse,
    );
    expect(active.active).toBe(true);
    expect(active.gateOverrides?.map((o) => [o.action, o.reason])).toEqual([
      ["create", "Hotfix for outage"],
      ["activate", "Approved by on-call"],
    ]);
    const listed = await json(
      await api(`/v1/agents/${agent.agentId}/releases`, { key: agent.apiKey }),
      200,
      z.object({ items: z.array(releaseResponse) }),
    );
    expect(listed.items.find((r) => r.id === forced.id)?.gateOverrides).toHaveLength(2);
  });

  it("names only the agent's own suites", async () => {
    const agent = await liveAgent();
    const res = await api(`/v1/agents/${agent.agentId}`, {
      method: "PATCH",
      key: agent.apiKey,
      body: { releaseGate: { suiteIds: ["es_unknown"], minPassRate: 1 } },
    });
    await expectError(res, 400, "bad_request");
  });
});
