// Legal hold (docs/privacy.md): a held thread is kept from erasure (409 legal_hold) and from retention until it is lifted.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runRetentionJob } from "../../src/jobs/retention";
import { findHold } from "../../src/storage/d1/legal-holds";
import { expectNothingLeft } from "../helpers/erasure-scan";
import {
  converse,
  drainThread,
  launchFor,
  projectedEntries,
  threadEntries,
  threadStub,
} from "../helpers/projection";
import { api, createApiKey, expectError, json } from "../helpers/tenants";
import { inTestThread } from "../helpers/test-thread-agent";
import { type LiveAgent, liveAgent } from "../helpers/threads";

const DAY_MS = 86_400_000;

const hold = z.object({ reason: z.string(), since: z.string(), scope: z.enum(["thread", "subject"]) });
const session = z.object({ threadId: z.string(), hold: hold.nullable() });
const sessionList = z.object({ items: z.array(session) });
const holdItem = z.object({
  scope: z.enum(["thread", "subject"]),
  target: z.string(),
  reason: z.string(),
  since: z.string(),
});
const holdList = z.object({ items: z.array(holdItem), nextCursor: z.string().optional() });
const reasonOf = async (res: Response) =>
  z.object({ error: z.object({ code: z.string(), reason: z.string().optional() }) }).parse(await res.json())
    .error;

async function conversation(agent: LiveAgent, subject: string, text: string) {
  const launched = await launchFor(agent, subject);
  await converse(launched, [text]);
  const stub = await threadStub(agent, launched.threadId);
  await drainThread(stub);
  return { threadId: launched.threadId, stub };
}

const putSubjectHold = (agent: LiveAgent, subject: string, reason: string) =>
  api("/v1/subject-holds", { method: "PUT", key: agent.apiKey, body: { subject, reason } });
const liftSubjectHold = (agent: LiveAgent, subject: string) =>
  api("/v1/subject-holds", { method: "DELETE", key: agent.apiKey, body: { subject } });

const putThreadHold = (agent: LiveAgent, threadId: string, body: unknown, key = agent.apiKey) =>
  api(`/v1/sessions/${threadId}/hold`, { method: "PUT", key, body });

describe("legal hold on a thread", () => {
  it("refuses erasure with 409 legal_hold and erases nothing; lifting it lets the erasure through", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const t = await conversation(agent, "user-held", "keep this for the lawyers");

    const placed = await json(
      await putThreadHold(agent, t.threadId, { reason: "Litigation 2026-17" }),
      200,
      holdItem,
    );
    expect(placed).toMatchObject({ scope: "thread", target: t.threadId, reason: "Litigation 2026-17" });

    const refused = await api(`/v1/sessions/${t.threadId}`, { method: "DELETE", key: agent.apiKey });
    expect(refused.status).toBe(409);
    expect(await reasonOf(refused)).toEqual({ code: "conflict", reason: "legal_hold" });
    // Nothing went: the D1 copy, the thread object's entries, and the session view.
    expect((await projectedEntries(agent.tenantId, t.threadId)).map((e) => e.text)).toContain(
      "keep this for the lawyers",
    );
    expect((await threadEntries(t.stub)).map((e) => e.text)).toContain("keep this for the lawyers");
    const view = await json(await api(`/v1/sessions/${t.threadId}`, { key: agent.apiKey }), 200, session);
    expect(view.hold).toEqual({ reason: "Litigation 2026-17", since: placed.since, scope: "thread" });

    expect(
      (await api(`/v1/sessions/${t.threadId}/hold`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);
    const afterLift = await json(
      await api(`/v1/sessions/${t.threadId}`, { key: agent.apiKey }),
      200,
      session,
    );
    expect(afterLift.hold).toBeNull();
    expect((await api(`/v1/sessions/${t.threadId}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );
    expect(await projectedEntries(agent.tenantId, t.threadId)).toEqual([]);
    expect((await api(`/v1/sessions/${t.threadId}`, { key: agent.apiKey })).status).toBe(404);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: ["user-held", "keep this for the lawyers"],
      threads: [{ tenantId: agent.tenantId, agentId: agent.agentId, threadId: t.threadId }],
    });
  });

  it("keeps a held thread from the retention job and the thread's own pass; lifted, retention removes it", async () => {
    const agent = await liveAgent({
      agent: { visibility: "private" },
      artifact: { limits: { retention: { maxAgeDays: 1 } } },
    });
    const t = await conversation(agent, "user-ret", "an old but held conversation");
    expect((await putThreadHold(agent, t.threadId, { reason: "Regulator request" })).status).toBe(200);

    await inTestThread(t.stub, (instance) => instance.clock.advance(3 * DAY_MS));
    const held = await runRetentionJob(env, Date.now() + 3 * DAY_MS);
    expect(held.affected.map((s) => s.threadId)).not.toContain(t.threadId);
    // The thread's own daily pass skips it too.
    await inTestThread(t.stub, (instance) => instance.dailyMaintenance());
    expect((await threadEntries(t.stub)).map((e) => e.text)).toContain("an old but held conversation");
    expect((await projectedEntries(agent.tenantId, t.threadId)).length).toBeGreaterThan(0);

    expect(
      (await api(`/v1/sessions/${t.threadId}/hold`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);
    const lifted = await runRetentionJob(env, Date.now() + 3 * DAY_MS);
    expect(lifted.affected.map((s) => s.threadId)).toContain(t.threadId);
    expect(await threadEntries(t.stub)).toEqual([]);
    await drainThread(t.stub);
    expect(await projectedEntries(agent.tenantId, t.threadId)).toEqual([]);
    // Retention removes the text everywhere (the thread and its subject remain).
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: ["an old but held conversation"],
      threads: [{ tenantId: agent.tenantId, agentId: agent.agentId, threadId: t.threadId }],
    });
  });

  it("refuses a hold without a reason, with a reason over 500 characters, or with unknown fields, and stores nothing", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const t = await conversation(agent, "user-bad", "hello");
    for (const body of [
      {},
      { reason: "" },
      { reason: "   " },
      { reason: "x".repeat(501) },
      { reason: "ok", x: 1 },
    ]) {
      await expectError(await putThreadHold(agent, t.threadId, body), 400, "bad_request");
    }
    expect(await findHold(env.DB, agent.tenantId, t.threadId)).toBeNull();
    const list = await json(await api("/v1/holds", { key: agent.apiKey }), 200, holdList);
    expect(list.items).toEqual([]);
    // A read-only key may not place one.
    const { apiKey: readKey } = await createApiKey(
      { tenantId: agent.tenantId, apiKey: agent.apiKey },
      "read",
    );
    await expectError(await putThreadHold(agent, t.threadId, { reason: "x" }, readKey), 403, "forbidden");
    expect(await findHold(env.DB, agent.tenantId, t.threadId)).toBeNull();
  });

  it("is tenant-scoped: another tenant can neither hold, see nor lift it", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const other = await liveAgent({ agent: { visibility: "private" } });
    const t = await conversation(agent, "user-iso", "mine");
    await expectError(await putThreadHold(other, t.threadId, { reason: "not yours" }), 404, "not_found");
    expect(await findHold(env.DB, agent.tenantId, t.threadId)).toBeNull();
    expect((await putThreadHold(agent, t.threadId, { reason: "ours" })).status).toBe(200);
    await expectError(
      await api(`/v1/sessions/${t.threadId}/hold`, { method: "DELETE", key: other.apiKey }),
      404,
      "not_found",
    );
    expect((await json(await api("/v1/holds", { key: other.apiKey }), 200, holdList)).items).toEqual([]);
    expect((await json(await api("/v1/holds", { key: agent.apiKey }), 200, holdList)).items).toHaveLength(1);
    // A subject hold in the other tenant on the same subject id covers nothing here.
    expect(
      (
        await api("/v1/subject-holds", {
          method: "PUT",
          key: other.apiKey,
          body: { subject: "user-iso", reason: "theirs" },
        })
      ).status,
    ).toBe(200);
    expect(
      (await api(`/v1/sessions/${t.threadId}/hold`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);
    expect((await api(`/v1/sessions/${t.threadId}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );
  });
});

describe("legal hold on a subject", () => {
  it("takes a subject hold without a reason, and a release that sends one", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const held = await conversation(agent, "user-noreason", "held without a reason");
    const placed = await json(
      await api("/v1/subject-holds", {
        method: "PUT",
        key: agent.apiKey,
        body: { subject: "user-noreason" },
      }),
      200,
      holdItem,
    );
    expect(placed).toMatchObject({ scope: "subject", target: "user-noreason", reason: "" });
    await expectError(
      await api(`/v1/sessions/${held.threadId}`, { method: "DELETE", key: agent.apiKey }),
      409,
      "conflict",
    );
    const lifted = await api("/v1/subject-holds", {
      method: "DELETE",
      key: agent.apiKey,
      body: { subject: "user-noreason", reason: "Matter closed" },
    });
    expect(lifted.status).toBe(204);
    expect((await api(`/v1/sessions/${held.threadId}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );
  });

  it("covers every thread of the subject, in the views and against erasure, until lifted", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const a = await conversation(agent, "user-subj", "first thread");
    const b = await conversation(agent, "user-subj", "second thread");
    const free = await conversation(agent, "user-free", "not held");

    const placed = await json(
      await api("/v1/subject-holds", {
        method: "PUT",
        key: agent.apiKey,
        body: { subject: "user-subj", reason: "Employment dispute" },
      }),
      200,
      holdItem,
    );
    expect(placed).toMatchObject({ scope: "subject", target: "user-subj" });

    const list = await json(await api("/v1/sessions", { key: agent.apiKey }), 200, sessionList);
    const byId = new Map(list.items.map((s) => [s.threadId, s.hold]));
    expect(byId.get(a.threadId)).toEqual({
      reason: "Employment dispute",
      since: placed.since,
      scope: "subject",
    });
    expect(byId.get(b.threadId)).toEqual({
      reason: "Employment dispute",
      since: placed.since,
      scope: "subject",
    });
    expect(byId.get(free.threadId)).toBeNull();

    for (const t of [a, b]) {
      const refused = await api(`/v1/sessions/${t.threadId}`, { method: "DELETE", key: agent.apiKey });
      expect(refused.status).toBe(409);
      expect((await reasonOf(refused)).reason).toBe("legal_hold");
    }
    expect((await api(`/v1/sessions/${free.threadId}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );
    expect((await projectedEntries(agent.tenantId, a.threadId)).length).toBeGreaterThan(0);

    // A thread hold too: lifting the subject's leaves that one held.
    expect((await putThreadHold(agent, a.threadId, { reason: "Own hold" })).status).toBe(200);
    const holds = await json(await api("/v1/holds?limit=1", { key: agent.apiKey }), 200, holdList);
    expect(holds.items).toHaveLength(1);
    expect(holds.nextCursor).toBeDefined();
    const rest = await json(
      await api(`/v1/holds?limit=1&cursor=${encodeURIComponent(holds.nextCursor ?? "")}`, {
        key: agent.apiKey,
      }),
      200,
      holdList,
    );
    expect([...holds.items, ...rest.items].map((h) => h.scope).sort()).toEqual(["subject", "thread"]);

    expect((await liftSubjectHold(agent, "user-subj")).status).toBe(204);
    await expectError(await liftSubjectHold(agent, "user-subj"), 404, "not_found");
    expect((await api(`/v1/sessions/${a.threadId}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      409,
    );
    expect((await api(`/v1/sessions/${b.threadId}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );
  });

  // Both halves of retention must match a subject hold by subject: the D1 job's filter (held subjects against the
  // session's user id, for sessions scheduled by the version's policy and for those found by the agent's own age) and
  // the thread object's own daily pass (which asks D1 whether the thread's subject is held).
  for (const setting of ["the version's retention", "only the agent's retention"] as const) {
    it(`keeps a held subject's threads from the retention job and the thread's own pass, with ${setting}`, async () => {
      const agent = await liveAgent({
        agent: { visibility: "private" },
        ...(setting === "the version's retention"
          ? { artifact: { limits: { retention: { maxAgeDays: 1 } } } }
          : {}),
      });
      if (setting === "only the agent's retention") {
        const patched = await api(`/v1/agents/${agent.agentId}`, {
          method: "PATCH",
          key: agent.apiKey,
          body: { retention: { maxAgeDays: 1 } },
        });
        expect(patched.status).toBe(200);
      }
      const subject = `user-${crypto.randomUUID()}`;
      const text = `held by subject ${crypto.randomUUID()}`;
      const t = await conversation(agent, subject, text);
      expect((await putSubjectHold(agent, subject, "Subject access dispute")).status).toBe(200);

      await inTestThread(t.stub, (instance) => instance.clock.advance(3 * DAY_MS));
      const held = await runRetentionJob(env, Date.now() + 3 * DAY_MS);
      expect(held.affected.map((s) => s.threadId)).not.toContain(t.threadId);
      expect((await projectedEntries(agent.tenantId, t.threadId)).map((e) => e.text)).toContain(text);
      // The thread's own daily pass asks D1 and skips it too; its drain then has nothing to delete.
      await inTestThread(t.stub, (instance) => instance.dailyMaintenance());
      expect((await threadEntries(t.stub)).map((e) => e.text)).toContain(text);
      await drainThread(t.stub);
      expect((await projectedEntries(agent.tenantId, t.threadId)).map((e) => e.text)).toContain(text);

      expect((await liftSubjectHold(agent, subject)).status).toBe(204);
      const lifted = await runRetentionJob(env, Date.now() + 3 * DAY_MS);
      expect(lifted.affected.map((s) => s.threadId)).toContain(t.threadId);
      expect(await threadEntries(t.stub)).toEqual([]);
      await drainThread(t.stub);
      expect(await projectedEntries(agent.tenantId, t.threadId)).toEqual([]);
      await expectNothingLeft({
        tenantId: agent.tenantId,
        needles: [text],
        threads: [{ tenantId: agent.tenantId, agentId: agent.agentId, threadId: t.threadId }],
      });
    });
  }
});
