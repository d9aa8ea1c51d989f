// Per-thread opt-in upgrade (docs/api.md): a `version_change` entry moves the turns below it to another version of the
// agent, forks above it keep the old one; D1, the thread's info, the session views, eviction and export follow.
import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { threadExportSchema } from "../../src/storage/thread/thread-export";
import { fakeOpenAICompatible } from "../helpers/fake-providers";
import { drainThread, launchFor, secondAgent, threadStub } from "../helpers/projection";
import { api, createRelease, expectError, json, publish, saveDraft, validArtifact } from "../helpers/tenants";
import {
  clientMessageId,
  connect,
  type FrameReader,
  type LiveAgent,
  launch,
  liveAgent,
  ORIGIN,
} from "../helpers/threads";

const MODEL_URL = "https://llm.example.com/v1";

afterEach(() => {
  vi.restoreAllMocks();
});

function artifactV(n: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return validArtifact({
    name: `Support v${n}`,
    instructions: `You are version ${n}.`,
    model: { provider: "openai-compatible", model: `gpt-v${n}`, baseUrl: MODEL_URL },
    ...extra,
  });
}

/** Every model call of the thread object, answered "Sure." (or hanging, for `hang` calls) and recorded. */
function fakeModel(options: { hang?: boolean } = {}) {
  const model = fakeOpenAICompatible(
    Array.from({ length: 20 }, () =>
      options.hang
        ? { kind: "text" as const, deltas: ["Sure", "."], hangAfter: 1 }
        : { kind: "text" as const, deltas: ["Sure."] },
    ),
  );
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = new Request(input, init).url;
    if (url.startsWith(MODEL_URL)) return model.fetch(input, init);
    throw new Error(`unexpected outbound request to ${url}`);
  });
  const callSchema = z.object({
    model: z.string(),
    messages: z.array(z.object({ role: z.string(), content: z.unknown() })),
  });
  return {
    calls: () =>
      model.requests.map((r) => {
        const body = callSchema.parse(r.body);
        return { model: body.model, system: body.messages[0]?.content };
      }),
  };
}

/** A live agent on v1 with v2 published (not released). */
async function agentWithTwoVersions(v1: Record<string, unknown> = {}, v2: Record<string, unknown> = {}) {
  const agent = await liveAgent({ artifact: artifactV(1, v1) });
  await saveDraft(agent.apiKey, agent.agentId, 1, artifactV(2, v2));
  const published = await publish(agent.apiKey, agent.agentId, 2);
  expect(published.version).toBe(2);
  return { agent, v2Id: published.versionId };
}

const upgradeReply = z.object({
  threadId: z.string(),
  fromVersion: z.number(),
  toVersion: z.number(),
  entryId: z.string(),
});

function postUpgrade(agent: LiveAgent, threadId: string, body: unknown) {
  return api(`/v1/sessions/${threadId}/upgrade`, { method: "POST", key: agent.apiKey, body });
}

async function sendAndSettle(socket: FrameReader, frame: Record<string, unknown>) {
  const id = clientMessageId();
  socket.send({ clientMessageId: id, ...frame });
  const user = await socket.next("entry", (f) => f.entry.role === "user" && f.entry.clientMessageId === id);
  const run = await socket.next("run", (f) => f.status === "succeeded" || f.status === "failed");
  return { user: user.entry, run };
}

const threadInfo = z.object({ agent: z.object({ version: z.number() }), version: z.number() });
const sessionView = z.object({ agentVersion: z.number(), version: z.number(), threadId: z.string() });

async function storedCounts(agent: LiveAgent, threadId: string) {
  const stub = await threadStub(agent, threadId);
  return runInDurableObject(stub, (_instance, state) => ({
    entries: Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM entries").one().n),
    versions: Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM thread_versions").one().n),
  }));
}

describe("POST /v1/sessions/:threadId/upgrade", () => {
  it("runs turns below the change on the new version, keeps forks above it on the old one, and D1 and the views follow the leaf", async () => {
    const { agent, v2Id } = await agentWithTwoVersions();
    const model = fakeModel();
    const session = await launchFor(agent, "alice");
    const socket = await connect(session);
    const first = await sendAndSettle(socket, { type: "send", text: "first question" });

    const res = await postUpgrade(agent, session.threadId, { version: 2 });
    const reply = await json(res, 200, upgradeReply);
    expect(reply).toMatchObject({ threadId: session.threadId, fromVersion: 1, toVersion: 2 });
    const change = await socket.next("entry", (f) => f.entry.kind === "version_change");
    expect(change.entry).toMatchObject({
      id: reply.entryId,
      versionChange: { fromVersion: 1, toVersion: 2 },
    });

    await sendAndSettle(socket, { type: "send", text: "second question" });
    // The thread's info and the session views report the leaf's version; the pin stays v1.
    const info = await json(
      await api(`/v1/threads/${session.threadId}`, {
        headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      }),
      200,
      threadInfo,
    );
    expect(info).toMatchObject({ agent: { version: 1 }, version: 2 });
    const stub = await threadStub(agent, session.threadId);
    await drainThread(stub);
    const view = await json(
      await api(`/v1/sessions/${session.threadId}`, { key: agent.apiKey }),
      200,
      sessionView,
    );
    expect(view).toMatchObject({ agentVersion: 1, version: 2 });
    const list = await json(
      await api(`/v1/sessions?agentId=${agent.agentId}`, { key: agent.apiKey }),
      200,
      z.object({ items: z.array(sessionView) }),
    );
    expect(list.items.find((s) => s.threadId === session.threadId)?.version).toBe(2);

    // Editing the first question forks above the change: that branch stays on v1.
    await sendAndSettle(socket, { type: "edit", entryId: first.user.id, text: "first, reworded" });
    expect(model.calls()).toEqual([
      { model: "gpt-v1", system: "You are version 1." },
      { model: "gpt-v2", system: "You are version 2." },
      { model: "gpt-v1", system: "You are version 1." },
    ]);
    const after = await json(
      await api(`/v1/threads/${session.threadId}`, {
        headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      }),
      200,
      threadInfo,
    );
    expect(after.version).toBe(1);

    // D1: each message carries the version that produced it; each run the version it ran on.
    await drainThread(stub);
    const { results } = await env.DB.prepare(
      `SELECT kind, role, content, agent_version FROM agent_messages WHERE tenant_id = ? AND session_id = ?
       ORDER BY seq`,
    )
      .bind(agent.tenantId, session.threadId)
      .all();
    expect(results.map((r) => [r.kind, r.role, r.agent_version])).toEqual([
      ["message", "user", 1],
      ["message", "assistant", 1],
      ["version_change", null, 2],
      ["message", "user", 2],
      ["message", "assistant", 2],
      ["message", "user", 1],
      ["message", "assistant", 1],
    ]);
    const messages = await json(
      await api(`/v1/sessions/${session.threadId}/messages`, { key: agent.apiKey }),
      200,
      z.object({ items: z.array(z.object({ kind: z.string(), version: z.number().nullable() })) }),
    );
    expect(messages.items.map((m) => m.version)).toEqual([1, 1, 2, 2, 2, 1, 1]);
    const runs = await env.DB.prepare(
      "SELECT version_id FROM agent_runs WHERE tenant_id = ? AND session_id = ? ORDER BY created_at",
    )
      .bind(agent.tenantId, session.threadId)
      .all();
    const v1Id = (runs.results[0] as { version_id: string }).version_id;
    expect(runs.results.map((r) => r.version_id)).toEqual([v1Id, v2Id, v1Id]);
    expect(v1Id).not.toBe(v2Id);
    const view2 = await json(
      await api(`/v1/sessions/${session.threadId}`, { key: agent.apiKey }),
      200,
      sessionView,
    );
    expect(view2.version).toBe(1);
    socket.ws.close();
  });

  it("refuses unknown versions, the leaf's own version, a live run, a handoff and an erased thread, storing nothing", async () => {
    const { agent } = await agentWithTwoVersions();
    fakeModel({ hang: true });
    const session = await launchFor(agent, "bob");
    const socket = await connect(session);
    const before = await storedCounts(agent, session.threadId);

    await expectError(await postUpgrade(agent, session.threadId, { version: 99 }), 404, "not_found");
    await expectError(await postUpgrade(agent, session.threadId, { version: 1 }), 409, "conflict");
    await expectError(await postUpgrade(agent, session.threadId, { version: "2" }), 400, "bad_request");
    await expectError(
      await postUpgrade(agent, session.threadId, { version: 2, extra: 1 }),
      400,
      "bad_request",
    );
    // Another agent's version 3 is not this agent's: the thread's own agent has none past 2.
    const other = await secondAgent(agent);
    await saveDraft(agent.apiKey, other.agentId, 1, artifactV(2));
    await publish(agent.apiKey, other.agentId, 2);
    await saveDraft(agent.apiKey, other.agentId, 2, artifactV(3));
    expect((await publish(agent.apiKey, other.agentId, 3)).version).toBe(3);
    await expectError(await postUpgrade(agent, session.threadId, { version: 3 }), 404, "not_found");
    // Another tenant's key: not found.
    const stranger = await liveAgent();
    await expectError(
      await api(`/v1/sessions/${session.threadId}/upgrade`, {
        method: "POST",
        key: stranger.apiKey,
        body: { version: 2 },
      }),
      404,
      "not_found",
    );

    // A reply in flight.
    socket.send({ type: "send", clientMessageId: clientMessageId(), text: "slow" });
    const running = await socket.next("run", (f) => f.status === "running");
    const during = await storedCounts(agent, session.threadId);
    await expectError(await postUpgrade(agent, session.threadId, { version: 2 }), 409, "conflict");
    expect(await storedCounts(agent, session.threadId)).toEqual(during);
    socket.send({ type: "cancel", runId: running.runId });
    await socket.next("run", (f) => f.runId === running.runId && f.status === "aborted");

    // A handoff.
    const settled = await storedCounts(agent, session.threadId);
    const started = await api(`/v1/sessions/${session.threadId}/handoff`, {
      method: "POST",
      key: agent.apiKey,
      body: { action: "start" },
    });
    expect(started.status).toBe(200);
    const inHandoff = await storedCounts(agent, session.threadId);
    expect(inHandoff.entries).toBe(settled.entries + 1);
    await expectError(await postUpgrade(agent, session.threadId, { version: 2 }), 409, "conflict");
    expect(await storedCounts(agent, session.threadId)).toEqual(inHandoff);
    expect(before.versions).toBe(0);
    expect(inHandoff.versions).toBe(0);

    // Erased.
    socket.ws.close();
    expect(
      (await api(`/v1/sessions/${session.threadId}`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);
    await expectError(await postUpgrade(agent, session.threadId, { version: 2 }), 404, "not_found");
  });

  it("keeps the change across an eviction and in history, export and the next turn, and re-verifies the stored artifact", async () => {
    const { agent } = await agentWithTwoVersions();
    const model = fakeModel();
    const session = await launchFor(agent, "carol");
    const socket = await connect(session);
    await sendAndSettle(socket, { type: "send", text: "before" });
    const upgraded = await json(
      await postUpgrade(agent, session.threadId, { version: 2 }),
      200,
      upgradeReply,
    );
    socket.ws.close();

    const stub = await threadStub(agent, session.threadId);
    await evictDurableObject(stub);
    const again = await connect(session);
    expect(again.all("ready")[0]?.agent).toEqual({ name: "Support v2", version: 2 });
    again.send({ type: "history" });
    const history = await again.next("history");
    expect(history.items.map((e) => e.kind)).toEqual(["message", "message", "version_change"]);
    await sendAndSettle(again, { type: "send", text: "after" });
    expect(model.calls().map((c) => c.model)).toEqual(["gpt-v1", "gpt-v2"]);

    const page = await json(
      await api(`/v1/threads/${session.threadId}/entries`, {
        headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      }),
      200,
      z.object({ items: z.array(z.object({ id: z.string(), kind: z.string() })) }),
    );
    expect(page.items.map((e) => e.kind)).toEqual([
      "message",
      "message",
      "version_change",
      "message",
      "message",
    ]);

    const exported = threadExportSchema.parse(
      await (await api(`/v1/sessions/${session.threadId}/export`, { key: agent.apiKey })).json(),
    );
    expect(exported.agent.version).toBe(1);
    const change = exported.entries.find((e) => e.kind === "version_change");
    expect(change).toMatchObject({
      id: upgraded.entryId,
      version: 2,
      body: { fromVersion: 1, toVersion: 2 },
    });
    expect(exported.entries.map((e) => e.version)).toEqual([1, 1, 2, 2, 2]);

    // A stored upgrade target that no longer matches its digest is never run.
    again.ws.close();
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec(
        "UPDATE thread_versions SET artifact_json = json_set(artifact_json, '$.instructions', 'tampered')",
      );
    });
    await evictDurableObject(stub);
    const third = await connect(session);
    const tampered = await sendAndSettle(third, { type: "send", text: "tampered?" });
    expect(tampered.run).toMatchObject({ status: "failed", error: { code: "internal" } });
    expect(model.calls()).toHaveLength(2);
    third.ws.close();
  });
});

describe('upgrades: "offer"', () => {
  it("offers the active release's newer version in ready, and the visitor accepts only that one", async () => {
    const { agent } = await agentWithTwoVersions({ upgrades: "offer" });
    const model = fakeModel();
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    expect(socket.all("ready")[0]).not.toHaveProperty("upgrade");
    await sendAndSettle(socket, { type: "send", text: "hello" });
    socket.ws.close();

    // v2 is released to everyone: the v1 thread is offered it on its next hello.
    const release = await createRelease(agent.apiKey, agent.agentId, [{ version: 2, weight: 10_000 }]);
    expect(
      (
        await api(`/v1/agents/${agent.agentId}/releases/${release.id}/activate`, {
          method: "POST",
          key: agent.apiKey,
        })
      ).status,
    ).toBe(200);
    const offered = await connect(session);
    expect(offered.all("ready")[0]).toMatchObject({ agent: { version: 1 }, upgrade: { version: 2 } });

    const before = await storedCounts(agent, session.threadId);
    offered.send({ type: "upgrade", version: 1 });
    expect(await offered.next("error")).toMatchObject({ code: "forbidden" });
    offered.send({ type: "upgrade", version: 3 });
    expect(await offered.next("error")).toMatchObject({ code: "forbidden" });
    expect(await storedCounts(agent, session.threadId)).toEqual(before);

    offered.send({ type: "upgrade", version: 2 });
    const change = await offered.next("entry", (f) => f.entry.kind === "version_change");
    expect(change.entry.versionChange).toEqual({ fromVersion: 1, toVersion: 2 });
    await sendAndSettle(offered, { type: "send", text: "on v2?" });
    expect(model.calls().map((c) => c.model)).toEqual(["gpt-v1", "gpt-v2"]);
    offered.ws.close();

    // On v2 (which does not offer), nothing more is offered.
    const after = await connect(session);
    expect(after.all("ready")[0]).toMatchObject({ agent: { name: "Support v2", version: 2 } });
    expect(after.all("ready")[0]).not.toHaveProperty("upgrade");
    after.ws.close();
  });

  it("offers nothing when the thread's version does not opt in", async () => {
    const { agent } = await agentWithTwoVersions();
    fakeModel();
    const release = await createRelease(agent.apiKey, agent.agentId, [{ version: 1, weight: 10_000 }]);
    expect(release.id).toBeTruthy();
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    socket.ws.close();
    const v2 = await createRelease(agent.apiKey, agent.agentId, [{ version: 2, weight: 10_000 }]);
    await api(`/v1/agents/${agent.agentId}/releases/${v2.id}/activate`, {
      method: "POST",
      key: agent.apiKey,
    });
    const again = await connect(session);
    expect(again.all("ready")[0]).not.toHaveProperty("upgrade");
    again.send({ type: "upgrade", version: 2 });
    expect(await again.next("error")).toMatchObject({ code: "forbidden" });
    again.ws.close();
  });
});
