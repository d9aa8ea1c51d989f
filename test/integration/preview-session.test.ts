// Preview threads (docs/api.md): `POST /v1/agents/:id/draft/preview-session` opens a real thread on a draft revision (or
// a published version), whose token works only from the deployment's own origin; previews stay out of session lists
// (unless asked for), usage, analytics, webhooks and launches, and the scheduled job erases them after a day.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tenantEvents } from "../../src/events/tenant-events";
import { expirePreviews } from "../../src/jobs/previews";
import { PREVIEW_TTL_MS } from "../../src/services/preview-session";
import { previewSessionResponse } from "../../src/shared/launch-api";
import { expectNothingLeft, scanForErased } from "../helpers/erasure-scan";
import { fakeReceiver } from "../helpers/fake-receiver";
import { drainThread, launchFor, threadStub } from "../helpers/projection";
import {
  API,
  api,
  createApiKey,
  expectError,
  fieldPaths,
  json,
  saveDraft,
  type TestTenant,
  validArtifact,
} from "../helpers/tenants";
import { inTestEvents } from "../helpers/test-tenant-events";
import {
  clientMessageId,
  connect,
  type FrameReader,
  type LiveAgent,
  liveAgent,
  upgradeRequest,
} from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const OWN_ORIGIN = new URL(API).origin;

function previewRequest(agent: Pick<LiveAgent, "apiKey" | "agentId">, body: unknown, key = agent.apiKey) {
  return api(`/v1/agents/${agent.agentId}/draft/preview-session`, { method: "POST", key, body });
}

async function preview(agent: LiveAgent, body: Record<string, unknown>) {
  return json(await previewRequest(agent, body), 201, previewSessionResponse);
}

/** A live agent (version 1 "Support" released) with draft revision 2 named "Support draft". */
async function agentWithDraft(): Promise<LiveAgent> {
  const agent = await liveAgent();
  await saveDraft(agent.apiKey, agent.agentId, 1, validArtifact({ name: "Support draft" }));
  return agent;
}

async function turn(socket: FrameReader, text: string) {
  const id = clientMessageId();
  socket.send({ type: "send", clientMessageId: id, text });
  await socket.next("entry", (f) => f.entry.role === "user" && f.entry.clientMessageId === id);
  return socket.next("run", (f) => f.status === "succeeded" || f.status === "failed");
}

const sessionList = z.object({
  items: z.array(z.object({ threadId: z.string(), preview: z.literal(true).optional() })),
});

async function listed(agent: LiveAgent, query = "") {
  const res = await api(`/v1/sessions?agentId=${agent.agentId}${query}`, { key: agent.apiKey });
  return (await json(res, 200, sessionList)).items;
}

describe("POST /v1/agents/:agentId/draft/preview-session", () => {
  it("talks to the draft revision from the console's origin, and the thread is marked as a preview", async () => {
    const agent = await agentWithDraft();
    const session = await preview(agent, { draftRevision: 2 });
    expect(session).toMatchObject({ preview: true, protocol: "agent.v1" });
    expect(Date.parse(session.previewExpiresAt) - Date.now()).toBeGreaterThan(PREVIEW_TTL_MS - 60_000);
    expect(session.websocketUrl).toBe(`ws://api.test/v1/threads/${session.threadId}/ws`);

    const socket = await connect(session, { origin: OWN_ORIGIN });
    const run = await turn(socket, "hello draft");
    expect(run.status).toBe("succeeded");
    // The ready frame of a fresh socket names the draft's artifact, not the released version's.
    const again = await upgradeRequest(session.threadId, { token: session.token, origin: OWN_ORIGIN });
    expect(again.status).toBe(101);
    const ws = again.webSocket!;
    ws.accept();
    const ready = new Promise<Record<string, unknown>>((resolve) =>
      ws.addEventListener("message", (event) => resolve(JSON.parse(String(event.data)))),
    );
    ws.send(JSON.stringify({ type: "hello", protocol: 1 }));
    expect(await ready).toMatchObject({ type: "ready", agent: { name: "Support draft", version: 0 } });
    ws.close();

    await drainThread(await threadStub(agent, session.threadId));
    const previews = await listed(agent, "&preview=true");
    expect(previews).toEqual([expect.objectContaining({ threadId: session.threadId, preview: true })]);
    expect((await listed(agent)).map((s) => s.threadId)).not.toContain(session.threadId);
    const view = await json(
      await api(`/v1/sessions/${session.threadId}`, { key: agent.apiKey }),
      200,
      z.object({ preview: z.literal(true), agentVersion: z.number() }),
    );
    expect(view.agentVersion).toBe(0);
    // Search leaves previews out too, unless asked for them.
    const found = await json(
      await api("/v1/sessions/search", {
        method: "POST",
        key: agent.apiKey,
        body: { q: "draft", agentId: agent.agentId },
      }),
      200,
      sessionList,
    );
    expect(found.items).toEqual([]);
    const foundPreviews = await json(
      await api("/v1/sessions/search", {
        method: "POST",
        key: agent.apiKey,
        body: { q: "draft", preview: true, agentId: agent.agentId },
      }),
      200,
      sessionList,
    );
    expect(foundPreviews.items.map((s) => s.threadId)).toEqual([session.threadId]);
  });

  it("refuses the token from any other origin, the agent's allowed ones included, and without one", async () => {
    const agent = await agentWithDraft();
    const session = await preview(agent, { draftRevision: 2 });
    for (const origin of ["https://shop.example.com", "https://evil.example", null]) {
      const res = await upgradeRequest(session.threadId, { token: session.token, origin });
      expect(res.status, String(origin)).toBe(403);
    }
  });

  it("previews a published version, and refreshes the token of its own preview thread only", async () => {
    const agent = await agentWithDraft();
    const session = await preview(agent, { version: 1 });
    const socket = await connect(session, { origin: OWN_ORIGIN });
    expect((await turn(socket, "hi")).status).toBe("succeeded");

    const refreshed = await preview(agent, { version: 1, threadId: session.threadId });
    expect(refreshed.threadId).toBe(session.threadId);
    expect(refreshed.token).not.toBe(session.token);
    expect(refreshed.previewExpiresAt).toBe(session.previewExpiresAt);
    // Another target, or a thread that is not a preview: not found, nothing created.
    await expectError(
      await previewRequest(agent, { draftRevision: 2, threadId: session.threadId }),
      404,
      "not_found",
    );
    const ordinary = await launchFor(agent, "alice");
    await expectError(
      await previewRequest(agent, { version: 1, threadId: ordinary.threadId }),
      404,
      "not_found",
    );
  });

  it("answers a stale revision 412, an invalid draft 400 at its fields, unknown targets 404, a read-only key 403", async () => {
    const agent = await agentWithDraft();
    await expectError(await previewRequest(agent, { draftRevision: 1 }), 412, "precondition_failed");
    await expectError(await previewRequest(agent, { version: 9 }), 404, "not_found");
    await expectError(await previewRequest(agent, { draftRevision: 2, version: 1 }), 400, "bad_request");
    await expectError(await previewRequest(agent, {}), 400, "bad_request");
    await expectError(
      await previewRequest({ ...agent, agentId: "agt_missing" }, { draftRevision: 2 }),
      404,
      "not_found",
    );

    await saveDraft(agent.apiKey, agent.agentId, 2, {
      schemaVersion: 1,
      name: "",
      model: { provider: "local" },
    });
    const invalid = await expectError(await previewRequest(agent, { draftRevision: 3 }), 400, "bad_request");
    expect(fieldPaths(invalid)).toEqual(expect.arrayContaining(["name"]));

    const tenant: TestTenant = { tenantId: agent.tenantId, apiKey: agent.apiKey };
    const read = await createApiKey(tenant, "read");
    await expectError(await previewRequest(agent, { draftRevision: 3 }, read.apiKey), 403, "forbidden");
    expect(await listed(agent, "&preview=true")).toEqual([]);
  });

  it("is no session to a launch: naming a preview thread in a backend launch is not found", async () => {
    const agent = await agentWithDraft();
    const session = await preview(agent, { draftRevision: 2 });
    const res = await api("/v1/agent-sessions", {
      method: "POST",
      key: agent.apiKey,
      body: { agentId: agent.agentId, subject: "console:anyone", threadId: session.threadId },
    });
    await expectError(res, 404, "not_found");
  });

  it("counts in no usage or analytics, announces nothing, and refuses an upgrade", async () => {
    const agent = await agentWithDraft();
    const receiver = fakeReceiver();
    const hook = await api("/v1/webhooks", {
      method: "POST",
      key: agent.apiKey,
      body: { url: receiver.url, events: ["thread.created", "run.succeeded"] },
    });
    expect(hook.status).toBe(201);
    const session = await preview(agent, { draftRevision: 2 });
    const socket = await connect(session, { origin: OWN_ORIGIN });
    expect((await turn(socket, "one")).status).toBe("succeeded");
    expect((await turn(socket, "two")).status).toBe("succeeded");
    const stub = await threadStub(agent, session.threadId);
    await drainThread(stub);
    // The thread forwards its events (run.succeeded, …) to its tenant's events object: a preview's are dropped.
    await runInDurableObject(stub, (instance) =>
      (instance as unknown as { forwardEvents(): Promise<void> }).forwardEvents(),
    );
    const events = () =>
      inTestEvents(tenantEvents(env, agent.tenantId), (_i, state) =>
        Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM events").one().n),
      );
    expect(await events()).toBe(0);
    // An ordinary thread's turn does reach it, so the count above can tell.
    const ordinary = await launchFor(agent, "alice");
    expect((await turn(await connect(ordinary), "hello")).status).toBe("succeeded");
    const ordinaryStub = await threadStub(agent, ordinary.threadId);
    await runInDurableObject(ordinaryStub, (instance) =>
      (instance as unknown as { forwardEvents(): Promise<void> }).forwardEvents(),
    );
    expect(await events()).toBeGreaterThan(0);
    await drainThread(ordinaryStub);

    const day = new Date().toISOString().slice(0, 10);
    const usage = await json(
      await api(`/v1/usage?agentId=${agent.agentId}&from=${day}&to=${day}`, { key: agent.apiKey }),
      200,
      z.object({ items: z.array(z.object({ runs: z.number() })) }),
    );
    // The ordinary thread's one turn, none of the preview's two.
    expect(usage.items.reduce((n, d) => n + d.runs, 0)).toBe(1);
    const analytics = await json(
      await api(`/v1/analytics?agentId=${agent.agentId}&from=${day}&to=${day}&groupBy=day`, {
        key: agent.apiKey,
      }),
      200,
      z.object({ items: z.array(z.object({ turns: z.number(), threads: z.number() })) }),
    );
    expect(analytics.items.reduce((n, d) => n + d.turns, 0)).toBe(1);
    expect(analytics.items.reduce((n, d) => n + d.threads, 0)).toBe(1);

    const upgrade = await api(`/v1/sessions/${session.threadId}/upgrade`, {
      method: "POST",
      key: agent.apiKey,
      body: { version: 1 },
    });
    await expectError(upgrade, 409, "conflict");
  });

  it("is erased by the scheduled job a day later: tokens refused, rows and storage gone", async () => {
    const agent = await agentWithDraft();
    const session = await preview(agent, { draftRevision: 2 });
    const socket = await connect(session, { origin: OWN_ORIGIN });
    expect((await turn(socket, "remember me")).status).toBe("succeeded");
    await drainThread(await threadStub(agent, session.threadId));
    expect(await listed(agent, "&preview=true")).toHaveLength(1);

    expect(await expirePreviews(env, Date.now())).toBe(0);
    expect(await expirePreviews(env, Date.now() + PREVIEW_TTL_MS + 1000)).toBeGreaterThanOrEqual(1);

    expect(await listed(agent, "&preview=true")).toEqual([]);
    const messages = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM agent_messages WHERE tenant_id = ? AND session_id = ?",
    )
      .bind(agent.tenantId, session.threadId)
      .first<{ n: number }>();
    expect(messages?.n).toBe(0);
    const previews = await env.DB.prepare("SELECT COUNT(*) AS n FROM thread_previews WHERE tenant_id = ?")
      .bind(agent.tenantId)
      .first<{ n: number }>();
    expect(previews?.n).toBe(0);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: ["remember me", "console:"],
      threads: [{ tenantId: agent.tenantId, agentId: agent.agentId, threadId: session.threadId }],
    });
    const res = await upgradeRequest(session.threadId, { token: session.token, origin: OWN_ORIGIN });
    expect(res.status).not.toBe(101);
    await expectError(
      await previewRequest(agent, { draftRevision: 2, threadId: session.threadId }),
      404,
      "not_found",
    );
  });

  it("is kept past its day while under a legal hold, and erased by the next run once the hold is lifted", async () => {
    const agent = await agentWithDraft();
    const session = await preview(agent, { draftRevision: 2 });
    const socket = await connect(session, { origin: OWN_ORIGIN });
    const text = `held preview ${crypto.randomUUID()}`;
    expect((await turn(socket, text)).status).toBe("succeeded");
    const stub = await threadStub(agent, session.threadId);
    await drainThread(stub);
    const hold = `/v1/sessions/${session.threadId}/hold`;
    expect((await api(hold, { method: "PUT", key: agent.apiKey, body: { reason: "Audit 7" } })).status).toBe(
      200,
    );

    // A day and more later (the job's clock), the hold keeps everything: D1 rows, preview row, the object's text.
    const later = Date.now() + PREVIEW_TTL_MS + 60_000;
    await expirePreviews(env, later);
    const counts = async () =>
      z.object({ messages: z.number(), previews: z.number() }).parse(
        await env.DB.prepare(
          `SELECT (SELECT COUNT(*) FROM agent_messages WHERE tenant_id = ?1 AND session_id = ?2) AS messages,
             (SELECT COUNT(*) FROM thread_previews WHERE tenant_id = ?1 AND thread_id = ?2) AS previews`,
        )
          .bind(agent.tenantId, session.threadId)
          .first(),
      );
    expect((await counts()).previews).toBe(1);
    expect((await counts()).messages).toBeGreaterThan(0);
    expect(await listed(agent, "&preview=true")).toHaveLength(1);
    const kept = await runInDurableObject(stub, (_instance, state) =>
      JSON.stringify(state.storage.sql.exec("SELECT body_json FROM entries").toArray()),
    );
    expect(kept).toContain(text);

    expect((await api(hold, { method: "DELETE", key: agent.apiKey })).status).toBe(204);
    await expirePreviews(env, later);
    expect(await counts()).toEqual({ messages: 0, previews: 0 });
    socket.ws.close();
    // The erased object resets itself just after answering: the scan reads it once it is back.
    await waitFor(
      () =>
        scanForErased({
          tenantId: agent.tenantId,
          needles: [text],
          threads: [{ tenantId: agent.tenantId, agentId: agent.agentId, threadId: session.threadId }],
        }),
      (found) => found.length === 0,
      { what: "nothing of the held preview left once lifted and expired" },
    );
  });
});
