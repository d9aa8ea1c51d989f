// Retention set on the agent (docs/privacy.md): all of its threads, existing ones included, the shorter of it and the version's.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runRetentionJob } from "../../src/jobs/retention";
import { expectNothingLeft } from "../helpers/erasure-scan";
import {
  converse,
  drainThread,
  launchFor,
  projectedEntries,
  threadEntries,
  threadStub,
} from "../helpers/projection";
import { api, expectError, json } from "../helpers/tenants";
import { inTestThread } from "../helpers/test-thread-agent";
import { liveAgent } from "../helpers/threads";

const DAY_MS = 86_400_000;
const agentView = z.object({ id: z.string(), retention: z.object({ maxAgeDays: z.number() }).nullable() });

describe("PATCH /v1/agents/:id {retention}", () => {
  it("shows the retention, refuses bad values storing nothing, and null clears it", async () => {
    const agent = await liveAgent();
    const path = `/v1/agents/${agent.agentId}`;
    expect((await json(await api(path, { key: agent.apiKey }), 200, agentView)).retention).toBeNull();
    for (const retention of [{ maxAgeDays: 0 }, { maxAgeDays: 1.5 }, { maxAgeDays: 9999 }, { days: 3 }, 7]) {
      await expectError(
        await api(path, { method: "PATCH", key: agent.apiKey, body: { retention } }),
        400,
        "bad_request",
      );
    }
    expect((await json(await api(path, { key: agent.apiKey }), 200, agentView)).retention).toBeNull();
    const set = await api(path, {
      method: "PATCH",
      key: agent.apiKey,
      body: { retention: { maxAgeDays: 7 } },
    });
    expect((await json(set, 200, agentView)).retention).toEqual({ maxAgeDays: 7 });
    const renamed = await api(path, { method: "PATCH", key: agent.apiKey, body: { name: "Renamed" } });
    expect((await json(renamed, 200, agentView)).retention).toEqual({ maxAgeDays: 7 });
    const listed = z.object({ items: z.array(agentView) });
    expect(
      (await json(await api("/v1/agents", { key: agent.apiKey }), 200, listed)).items[0]?.retention,
    ).toEqual({
      maxAgeDays: 7,
    });
    const cleared = await api(path, { method: "PATCH", key: agent.apiKey, body: { retention: null } });
    expect((await json(cleared, 200, agentView)).retention).toBeNull();
  });

  it("erases an existing thread older than the agent's age even though its version keeps it longer", async () => {
    const agent = await liveAgent({
      agent: { visibility: "private" },
      artifact: { limits: { retention: { maxAgeDays: 365 } } },
    });
    const session = await launchFor(agent, "user-1");
    await converse(session, ["a conversation from before the policy"]);
    const stub = await threadStub(agent, session.threadId);
    await drainThread(stub);

    // Ten days on, the version's year keeps it.
    await inTestThread(stub, (instance) => instance.clock.advance(10 * DAY_MS));
    await runRetentionJob(env, Date.now() + 10 * DAY_MS);
    expect((await threadEntries(stub)).length).toBe(2);
    expect((await projectedEntries(agent.tenantId, session.threadId)).length).toBe(2);

    const patched = await api(`/v1/agents/${agent.agentId}`, {
      method: "PATCH",
      key: agent.apiKey,
      body: { retention: { maxAgeDays: 3 } },
    });
    expect(patched.status).toBe(200);
    // The next day's pass applies the agent's three days.
    await inTestThread(stub, (instance) => instance.clock.advance(DAY_MS));
    const run = await runRetentionJob(env, Date.now() + 11 * DAY_MS);
    expect(run.affected.map((s) => s.threadId)).toContain(session.threadId);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual([]);
    expect(await threadEntries(stub)).toEqual([]);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: ["a conversation from before the policy"],
      threads: [{ tenantId: agent.tenantId, agentId: agent.agentId, threadId: session.threadId }],
    });
  });

  it("covers threads whose version has no retention at all", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const session = await launchFor(agent, "user-2");
    await converse(session, ["no policy in this version"]);
    const stub = await threadStub(agent, session.threadId);
    await drainThread(stub);
    expect(
      (
        await api(`/v1/agents/${agent.agentId}`, {
          method: "PATCH",
          key: agent.apiKey,
          body: { retention: { maxAgeDays: 2 } },
        })
      ).status,
    ).toBe(200);

    // Not old enough yet: nothing goes.
    const early = await runRetentionJob(env, Date.now() + DAY_MS);
    expect(early.affected.map((s) => s.threadId)).not.toContain(session.threadId);
    expect((await projectedEntries(agent.tenantId, session.threadId)).length).toBe(2);

    await inTestThread(stub, (instance) => instance.clock.advance(5 * DAY_MS));
    const run = await runRetentionJob(env, Date.now() + 5 * DAY_MS);
    expect(run.affected.map((s) => s.threadId)).toContain(session.threadId);
    expect(await projectedEntries(agent.tenantId, session.threadId)).toEqual([]);
    expect(await threadEntries(stub)).toEqual([]);
    // The thread's own daily pass applies the agent's age too (a new message it holds is young, so it stays).
    const resumed = await launchFor(agent, "user-2", session.threadId);
    await converse(resumed, ["fresh"]);
    await inTestThread(stub, (instance) => instance.dailyMaintenance());
    expect((await threadEntries(stub)).map((e) => e.text)).toContain("fresh");
    await inTestThread(stub, (instance) => instance.clock.advance(3 * DAY_MS));
    await inTestThread(stub, (instance) => instance.dailyMaintenance());
    expect(await threadEntries(stub)).toEqual([]);
    await drainThread(stub);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: ["no policy in this version", "Echo: fresh"],
      threads: [{ tenantId: agent.tenantId, agentId: agent.agentId, threadId: session.threadId }],
    });
  });
});
