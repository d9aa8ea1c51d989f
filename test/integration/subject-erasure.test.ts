// Erasure by subject (docs/privacy.md): POST /v1/subject-erasures and DELETE /v1/me/threads erase every thread of the
// subject, answer a receipt that verifies against /.well-known/jwks.json (its subjectDigest an HMAC under the key of
// GET /v1/subject-digest-key), resume after a cut-off, and leave nothing. The subject never travels in a URL.
import { env, exports } from "cloudflare:workers";
import { compactVerify, createLocalJWKSet } from "jose";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { erasureCompleted, erasurePending, receiptPayloadSchema } from "../../src/shared/erasure-api";
import { webhookWithSecretResponse } from "../../src/shared/webhooks-api";
import { insertThread } from "../../src/storage/d1/thread-registry";
import { fetchWithEnv } from "../helpers/edge-gate";
import { type ErasedThread, expectNothingLeft, scanForErased } from "../helpers/erasure-scan";
import { fakeReceiver } from "../helpers/fake-receiver";
import { converse, launchFor, secondAgent, threadStub } from "../helpers/projection";
import { API, api, createApiKey, expectError, json } from "../helpers/tenants";
import { failErasure } from "../helpers/test-thread-agent";
import { type Launch, type LiveAgent, launch, launchRequest, liveAgent, ORIGIN } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

async function jwks() {
  const res = await exports.default.fetch(`${API}/.well-known/jwks.json`);
  expect(res.status).toBe(200);
  return createLocalJWKSet(z.object({ keys: z.array(z.any()) }).parse(await res.json()));
}

/** The receipt's payload, once its signature verified against the published keys. */
async function verifiedReceipt(receipt: string, kid = "r2") {
  const { payload, protectedHeader } = await compactVerify(receipt, await jwks());
  expect(protectedHeader).toMatchObject({ alg: "EdDSA", kid, typ: "erasure-receipt+jws" });
  return receiptPayloadSchema.parse(JSON.parse(new TextDecoder().decode(payload)));
}

function eraseSubject(
  agent: Pick<LiveAgent, "apiKey">,
  subject: string,
  extra: Record<string, unknown> = {},
) {
  return api("/v1/subject-erasures", { method: "POST", key: agent.apiKey, body: { subject, ...extra } });
}

/** The tenant's digest key as the API hands it out. */
async function digestKey(agent: Pick<LiveAgent, "apiKey">): Promise<Uint8Array<ArrayBuffer>> {
  const res = await api("/v1/subject-digest-key", { key: agent.apiKey });
  expect(res.status).toBe(200);
  const body = z
    .strictObject({ algorithm: z.literal("HMAC-SHA-256"), key: z.string() })
    .parse(await res.json());
  const binary = atob(body.key.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

/** base64url(HMAC-SHA-256(key, subject)), computed here with WebCrypto, independently of the server's code. */
async function expectedDigest(key: Uint8Array<ArrayBuffer>, subject: string): Promise<string> {
  const hmac = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", hmac, new TextEncoder().encode(subject)));
  return btoa(String.fromCharCode(...mac))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** A thread of `subject` with one turn per text (the echo model answers each). */
async function conversation(agent: LiveAgent, subject: string, texts: string[]) {
  const session = await launchFor(agent, subject);
  await converse(session, texts);
  return { agent, session, texts };
}

const erased = (agent: Pick<LiveAgent, "tenantId" | "agentId">, threadId: string): ErasedThread => ({
  tenantId: agent.tenantId,
  agentId: agent.agentId,
  threadId,
});

async function sessionCount(agent: LiveAgent, subject: string): Promise<number> {
  const res = await api("/v1/sessions/search", { method: "POST", key: agent.apiKey, body: { subject } });
  return z.object({ items: z.array(z.unknown()) }).parse(await res.json()).items.length;
}

/** Registry rows for `count` threads of `subject` (objects never bound): large erasures without 500 launches. */
async function seedThreads(agent: LiveAgent, subject: string, count: number): Promise<string[]> {
  const ids = Array.from(
    { length: count },
    (_, n) => `thr_seed${String(n).padStart(4, "0")}_${crypto.randomUUID().slice(0, 8)}`,
  );
  const createdAt = new Date(Date.now() - 60_000).toISOString();
  for (const id of ids) {
    await insertThread(env.DB, {
      tenantId: agent.tenantId,
      id,
      agentId: agent.agentId,
      environment: "development",
      subject,
      subjectKind: "user",
      createdAt,
    });
  }
  return ids;
}

async function jobRow(tenantId: string) {
  return z
    .object({ id: z.string(), status: z.string(), done: z.number() })
    .parse(
      await env.DB.prepare("SELECT id, status, done FROM erasures WHERE tenant_id = ?")
        .bind(tenantId)
        .first(),
    );
}

describe("POST /v1/subject-erasures", () => {
  // Sized for a loaded 2-core machine: every erased thread is a call into its own object.
  it("erases the subject's threads across agents, with a receipt that verifies against the JWKS", {
    timeout: 90_000,
  }, async () => {
    const first = await liveAgent({ agent: { visibility: "private" } });
    const second = await secondAgent(first);
    const subject = `user-${crypto.randomUUID()}`;
    const texts = [`secret one ${crypto.randomUUID()}`, `secret two ${crypto.randomUUID()}`];
    const a = await conversation(first, subject, [texts[0]!]);
    const b = await conversation(second, subject, [texts[1]!]);
    const kept = await conversation(first, `other-${crypto.randomUUID()}`, ["keep this"]);
    await waitFor(
      () => sessionCount(first, subject),
      (n) => n === 2,
      { what: "both threads projected" },
    );
    const threads = [erased(first, a.session.threadId), erased(second, b.session.threadId)];
    // The scan finds what is there before the erasure: it is not blind.
    expect(
      (await scanForErased({ tenantId: first.tenantId, needles: [subject, ...texts], threads })).length,
    ).toBeGreaterThan(4);

    const res = await eraseSubject(first, subject);
    expect(res.status).toBe(200);
    const body = erasureCompleted.parse(await res.json());
    expect(body.id).toMatch(/^era_/);
    expect(new Set(body.threadIds)).toEqual(new Set([a.session.threadId, b.session.threadId]));
    const payload = await verifiedReceipt(body.receipt);
    // The receipt names the subject only as an HMAC under the tenant's own key, which the test recomputes.
    const digest = await expectedDigest(await digestKey(first), subject);
    expect(body.subjectDigest).toBe(digest);
    expect(payload).toEqual({
      id: body.id,
      tenantId: first.tenantId,
      scope: { kind: "subject" },
      threadIds: body.threadIds,
      erasedAt: body.erasedAt,
      subjectDigest: digest,
      attachments: [],
    });

    expect(await sessionCount(first, subject)).toBe(0);
    for (const threadId of body.threadIds) {
      for (const path of ["", "/messages", "/export"]) {
        await expectError(
          await api(`/v1/sessions/${threadId}${path}`, { key: first.apiKey }),
          404,
          "not_found",
        );
      }
    }
    await expectError(
      await api(`/v1/threads/${a.session.threadId}`, {
        headers: { Authorization: `Bearer ${a.session.token}` },
      }),
      401,
      "unauthenticated",
    );
    // Another subject's thread is untouched.
    expect((await api(`/v1/sessions/${kept.session.threadId}`, { key: first.apiKey })).status).toBe(200);

    // The kept receipt: ids only.
    const keptRes = await api(`/v1/erasures/${body.id}`, { key: first.apiKey });
    expect(keptRes.status).toBe(200);
    const keptText = await keptRes.text();
    expect(JSON.parse(keptText)).toEqual(body);
    expect(keptText).not.toContain(subject);

    // A repeat with nothing new to erase answers the same receipt.
    const again = erasureCompleted.parse(await (await eraseSubject(first, subject)).json());
    expect(again).toEqual(body);

    await expectNothingLeft({ tenantId: first.tenantId, needles: [subject, ...texts], threads });
  });

  it("with agentId erases only that agent's threads of the subject", async () => {
    const first = await liveAgent({ agent: { visibility: "private" } });
    const second = await secondAgent(first);
    const subject = `user-${crypto.randomUUID()}`;
    const gone = `billing secret ${crypto.randomUUID()}`;
    const a = await conversation(first, subject, ["stays with the first agent"]);
    const b = await conversation(second, subject, [gone]);

    const res = await eraseSubject(first, subject, { agentId: second.agentId });
    expect(res.status).toBe(200);
    const body = erasureCompleted.parse(await res.json());
    expect(body.threadIds).toEqual([b.session.threadId]);
    expect(body.scope).toEqual({ kind: "subject", agentId: second.agentId });
    expect((await verifiedReceipt(body.receipt)).scope).toEqual({ kind: "subject", agentId: second.agentId });
    expect((await api(`/v1/sessions/${a.session.threadId}`, { key: first.apiKey })).status).toBe(200);
    await expectError(
      await api(`/v1/sessions/${b.session.threadId}`, { key: first.apiKey }),
      404,
      "not_found",
    );

    // The subject still has a thread with the first agent, so only the erased text is searched for.
    await expectNothingLeft({
      tenantId: first.tenantId,
      needles: [gone],
      threads: [erased(second, b.session.threadId)],
    });
  });

  it("refuses a held subject or a held thread of it with 409 legal_hold, erasing nothing, until the hold is lifted", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const subject = `user-${crypto.randomUUID()}`;
    const text = `held secret ${crypto.randomUUID()}`;
    const a = await conversation(agent, subject, [text]);
    const b = await conversation(agent, subject, ["second thread"]);
    await waitFor(
      () => sessionCount(agent, subject),
      (n) => n === 2,
      { what: "both threads projected" },
    );
    const hold = (path: string, method: "PUT" | "DELETE") =>
      api(path, {
        method,
        key: agent.apiKey,
        ...(path === subjectHold
          ? { body: method === "PUT" ? { subject, reason: "Case 2026-17" } : { subject } }
          : method === "PUT"
            ? { body: { reason: "Case 2026-17" } }
            : {}),
      });
    const subjectHold = "/v1/subject-holds";
    const threadHold = `/v1/sessions/${b.session.threadId}/hold`;

    expect((await hold(subjectHold, "PUT")).status).toBe(200);
    const refusal = async () => {
      const res = await eraseSubject(agent, subject);
      expect(res.status).toBe(409);
      return z.object({ error: z.object({ code: z.string(), reason: z.string() }) }).parse(await res.json())
        .error;
    };
    expect(await refusal()).toEqual({ code: "conflict", reason: "legal_hold" });
    expect((await hold(subjectHold, "DELETE")).status).toBe(204);
    expect((await hold(threadHold, "PUT")).status).toBe(200);
    expect(await refusal()).toEqual({ code: "conflict", reason: "legal_hold" });
    // Nothing was erased, and no job was started: both threads are still there.
    expect(await sessionCount(agent, subject)).toBe(2);
    expect((await api(`/v1/sessions/${a.session.threadId}/messages`, { key: agent.apiKey })).status).toBe(
      200,
    );
    expect(
      (
        await env.DB.prepare("SELECT COUNT(*) AS n FROM erasures WHERE tenant_id = ?")
          .bind(agent.tenantId)
          .first()
      )?.n,
    ).toBe(0);

    expect((await hold(threadHold, "DELETE")).status).toBe(204);
    const res = await eraseSubject(agent, subject);
    expect(res.status).toBe(200);
    expect(new Set(erasureCompleted.parse(await res.json()).threadIds)).toEqual(
      new Set([a.session.threadId, b.session.threadId]),
    );
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [subject, text],
      threads: [erased(agent, a.session.threadId), erased(agent, b.session.threadId)],
    });
  });

  it("refuses bad input and other tenants, storing nothing; a read-only key may not erase", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const other = await liveAgent({ agent: { visibility: "private" } });
    const subject = `user-${crypto.randomUUID()}`;
    const text = `mine ${crypto.randomUUID()}`;
    const mine = await conversation(agent, subject, [text]);
    const reader = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");

    await expectError(await eraseSubject(reader, subject), 403, "forbidden");
    await expectError(await eraseSubject(agent, subject, { agentId: "agt_nothing" }), 404, "not_found");
    await expectError(await eraseSubject(agent, subject, { agentId: "a b" }), 400, "bad_request");
    await expectError(await eraseSubject(agent, subject, { other: 1 }), 400, "bad_request");
    await expectError(await eraseSubject(agent, "", {}), 400, "bad_request");
    await expectError(await eraseSubject(agent, "x".repeat(257), {}), 400, "bad_request");
    await expectError(
      await api("/v1/subject-erasures", {
        method: "POST",
        key: agent.apiKey,
        body: { agentId: agent.agentId },
      }),
      400,
      "bad_request",
    );
    await expectError(
      await api("/v1/subject-erasures", {
        method: "POST",
        key: agent.apiKey,
        body: JSON.stringify({ subject }),
        headers: { "Content-Type": "text/plain" },
      }),
      415,
      "unsupported_media_type",
    );
    await expectError(
      await api("/v1/subject-erasures", { method: "POST", body: { subject } }),
      401,
      "unauthenticated",
    );
    // Another tenant erasing the same subject id erases nothing of this tenant's.
    const foreign = erasureCompleted.parse(await (await eraseSubject(other, subject)).json());
    expect(foreign.threadIds).toEqual([]);
    expect((await api(`/v1/sessions/${mine.session.threadId}`, { key: agent.apiKey })).status).toBe(200);
    const none = await env.DB.prepare("SELECT COUNT(*) AS n FROM erasures WHERE tenant_id = ?")
      .bind(agent.tenantId)
      .first<{ n: number }>();
    expect(none?.n).toBe(0);

    const res = await eraseSubject(agent, subject);
    const body = erasureCompleted.parse(await res.json());
    // Receipts are the tenant's own.
    await expectError(await api(`/v1/erasures/${body.id}`, { key: other.apiKey }), 404, "not_found");
    await expectError(await api("/v1/erasures/era_nothing", { key: agent.apiKey }), 404, "not_found");
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [subject, text],
      threads: [erased(agent, mine.session.threadId)],
    });
  });

  it("answers the retired path forms 410 gone naming the new route, doing nothing", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const subject = `user-${crypto.randomUUID()}`;
    const text = `still here ${crypto.randomUUID()}`;
    const mine = await conversation(agent, subject, [text]);
    const path = `/v1/subjects/${encodeURIComponent(subject)}`;
    const retired = [
      { method: "DELETE", path, names: "POST /v1/subject-erasures" },
      { method: "PUT", path: `${path}/hold`, names: "PUT /v1/subject-holds", body: { reason: "Case 9" } },
      { method: "DELETE", path: `${path}/hold`, names: "DELETE /v1/subject-holds" },
    ];
    for (const { method, path: at, names, body } of retired) {
      for (const key of [agent.apiKey, undefined]) {
        const error = await expectError(
          await api(at, { method, ...(key !== undefined ? { key } : {}), ...(body ? { body } : {}) }),
          410,
          "gone",
        );
        expect(error.message).toContain(names);
        // The answer never echoes the subject it was sent in the path.
        expect(error.message).not.toContain(subject);
      }
    }
    // Nothing happened: the thread is there, no erasure job, no hold.
    expect((await api(`/v1/sessions/${mine.session.threadId}/messages`, { key: agent.apiKey })).status).toBe(
      200,
    );
    const counts = await env.DB.prepare(
      `SELECT (SELECT COUNT(*) FROM erasures WHERE tenant_id = ?1) AS jobs,
         (SELECT COUNT(*) FROM legal_holds WHERE tenant_id = ?1) AS holds`,
    )
      .bind(agent.tenantId)
      .first();
    expect(counts).toEqual({ jobs: 0, holds: 0 });
  });

  it("places and lifts a subject hold with the subject in the body; refuses bad bodies storing nothing", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const subject = `user-${crypto.randomUUID()}`;
    const holds = (method: "PUT" | "DELETE", body: unknown, key = agent.apiKey) =>
      api("/v1/subject-holds", { method, key, body });
    const reader = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");
    for (const body of [
      { reason: "no subject" },
      { subject, reason: "" },
      { subject: "", reason: "x" },
      { subject, reason: "x".repeat(501) },
      { subject, note: "not a field" },
    ]) {
      await expectError(await holds("PUT", body), 400, "bad_request");
    }
    await expectError(await holds("PUT", { subject, reason: "Case 1" }, reader.apiKey), 403, "forbidden");
    await expectError(await holds("DELETE", { subject }), 404, "not_found");
    const none = await env.DB.prepare("SELECT COUNT(*) AS n FROM legal_holds WHERE tenant_id = ?")
      .bind(agent.tenantId)
      .first<{ n: number }>();
    expect(none?.n).toBe(0);

    const placed = await holds("PUT", { subject, reason: "Case 1" });
    expect(placed.status).toBe(200);
    expect(await placed.json()).toMatchObject({ scope: "subject", target: subject, reason: "Case 1" });
    await expectError(await holds("DELETE", { subject }, reader.apiKey), 403, "forbidden");
    await expectError(await holds("DELETE", {}), 400, "bad_request");
    expect((await holds("DELETE", { subject })).status).toBe(204);
    await expectError(await holds("DELETE", { subject }), 404, "not_found");
  });

  it("gives each tenant its own stable digest key; the kept receipt carries the same digest", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const other = await liveAgent({ agent: { visibility: "private" } });
    const reader = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "read");
    const key = await digestKey(agent);
    expect(key.byteLength).toBe(32);
    expect(await digestKey(reader)).toEqual(key);
    expect(await digestKey(other)).not.toEqual(key);
    await expectError(await api("/v1/subject-digest-key"), 401, "unauthenticated");

    const subject = `user-${crypto.randomUUID()}`;
    await conversation(agent, subject, [`digested ${crypto.randomUUID()}`]);
    const body = erasureCompleted.parse(await (await eraseSubject(agent, subject)).json());
    expect(body.subjectDigest).toBe(await expectedDigest(key, subject));
    // Another subject's digest differs; another tenant's key gives another digest for the same subject.
    expect(body.subjectDigest).not.toBe(await expectedDigest(key, `${subject}x`));
    expect(body.subjectDigest).not.toBe(await expectedDigest(await digestKey(other), subject));
    const kept = erasureCompleted.parse(
      await (await api(`/v1/erasures/${body.id}`, { key: agent.apiKey })).json(),
    );
    expect(kept.subjectDigest).toBe(body.subjectDigest);
    expect((await verifiedReceipt(kept.receipt)).subjectDigest).toBe(body.subjectDigest);
  });

  it("sends session.erased with ids only, and the events object keeps no body of the erased threads", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const receiver = fakeReceiver(200);
    const hook = json(
      await api("/v1/webhooks", {
        method: "POST",
        key: agent.apiKey,
        body: { url: receiver.url, events: ["thread.created", "run.succeeded", "session.erased"] },
      }),
      201,
      webhookWithSecretResponse,
    );
    const { secret } = await hook;
    const subject = `user-${crypto.randomUUID()}`;
    const text = `evented ${crypto.randomUUID()}`;
    const one = await conversation(agent, subject, [text]);
    const two = await conversation(agent, subject, ["another"]);
    const res = await eraseSubject(agent, subject);
    expect(res.status).toBe(200);

    const webhook = new Webhook(secret);
    const received = await waitFor(
      () =>
        receiver.received.map((r) =>
          z.object({ type: z.string(), data: z.record(z.string(), z.unknown()) }).parse(
            webhook.verify(r.body, {
              "webhook-id": r.id,
              "webhook-timestamp": r.timestamp,
              "webhook-signature": r.signature,
            }),
          ),
        ),
      (events) => events.filter((e) => e.type === "session.erased").length === 2,
      { what: "two session.erased deliveries" },
    );
    for (const event of received.filter((e) => e.type === "session.erased")) {
      expect(Object.keys(event.data).sort()).toEqual(["agentId", "environment", "threadId"]);
      expect([one.session.threadId, two.session.threadId]).toContain(event.data.threadId);
    }
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [subject, text],
      threads: [erased(agent, one.session.threadId), erased(agent, two.session.threadId)],
    });
  });

  // Sized for a loaded 2-core machine: every erased thread is a call into its own object.
  it("resumes a job cut off midway: the second call finishes it with the same receipt id", {
    timeout: 90_000,
  }, async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const subject = `user-${crypto.randomUUID()}`;
    const text = `cut off ${crypto.randomUUID()}`;
    const real = await conversation(agent, subject, [text]);
    const seeded = await seedThreads(agent, subject, 119);
    // The 76th thread's object fails (after the first batch of 50 is done): the Worker stops there.
    const victim = seeded[74]!;
    await failErasure(await threadStub(agent, victim), true);

    await expectError(await eraseSubject(agent, subject), 502, "upstream_unavailable");
    const pending = await jobRow(agent.tenantId);
    expect(pending).toMatchObject({ status: "pending", done: 50 });
    const midway = erasurePending.parse(
      await (await api(`/v1/erasures/${pending.id}`, { key: agent.apiKey })).json(),
    );
    expect(midway.remaining).toBe(70);

    await failErasure(await threadStub(agent, victim), false);
    const res = await eraseSubject(agent, subject);
    expect(res.status).toBe(200);
    const body = erasureCompleted.parse(await res.json());
    expect(body.id).toBe(pending.id);
    expect(body.threadIds).toHaveLength(120);
    expect(new Set(body.threadIds)).toEqual(new Set([real.session.threadId, ...seeded]));
    expect((await verifiedReceipt(body.receipt)).id).toBe(pending.id);
    const live = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM threads WHERE tenant_id = ? AND (deleted_at IS NULL OR subject != '')",
    )
      .bind(agent.tenantId)
      .first<{ n: number }>();
    expect(live?.n).toBe(0);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [subject, text],
      threads: body.threadIds.map((id) => erased(agent, id)),
    });
  });

  it("erases 500 threads over two calls (202 with remaining, then 200), the same job throughout", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const subject = `user-${crypto.randomUUID()}`;
    const text = `many ${crypto.randomUUID()}`;
    const real = await conversation(agent, subject, [text]);
    const seeded = await seedThreads(agent, subject, 499);
    const first = await eraseSubject(agent, subject);
    expect(first.status).toBe(202);
    const partial = erasurePending.parse(await first.json());
    expect(partial.remaining).toBe(200);
    const res = await eraseSubject(agent, subject);
    expect(res.status).toBe(200);
    const body = erasureCompleted.parse(await res.json());
    expect(body.id).toBe(partial.id);
    expect(body.threadIds).toHaveLength(500);
    expect((await verifiedReceipt(body.receipt)).threadIds).toHaveLength(500);
    expect(await sessionCount(agent, subject)).toBe(0);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [subject, text],
      threads: [real.session.threadId, ...seeded].map((id) => erased(agent, id)),
    });
  }, 180_000);
});

describe("DELETE /v1/me/threads", () => {
  /** A public launch resuming (or starting) with the visitor's token. */
  const visitorLaunch = (agent: LiveAgent, visitorToken: string, threadId?: string) =>
    launchRequest({
      agentKey: agent.publicKey,
      visitorToken,
      ...(threadId !== undefined ? { threadId } : {}),
    });

  const deleteMine = (token: string) =>
    api("/v1/me/threads", {
      method: "DELETE",
      headers: { Authorization: `Bearer ${token}`, Origin: ORIGIN },
    });

  it("erases a visitor's threads with this agent and revokes the visitor", async () => {
    const agent = await liveAgent();
    const first = await launch(agent.publicKey);
    const visitorToken = first.visitorToken!;
    const second: Launch = await json(await visitorLaunch(agent, visitorToken), 201, z.any());
    const texts = [`visitor one ${crypto.randomUUID()}`, `visitor two ${crypto.randomUUID()}`];
    await converse(first, [texts[0]!]);
    await converse(second, [texts[1]!]);
    const visitorId = z
      .object({ sub: z.string() })
      .parse(JSON.parse(atob(visitorToken.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")))).sub;

    const res = await deleteMine(second.token);
    expect(res.status).toBe(200);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe(ORIGIN);
    const body = erasureCompleted.parse(await res.json());
    expect(new Set(body.threadIds)).toEqual(new Set([first.threadId, second.threadId]));
    // The token's own thread goes last, so the same token could repeat a call that answered 202.
    expect(body.threadIds.at(-1)).toBe(second.threadId);
    expect(await verifiedReceipt(body.receipt)).toMatchObject({
      scope: { kind: "me", agentId: agent.agentId },
      subjectDigest: await expectedDigest(await digestKey(agent), visitorId),
    });

    // The visitor token no longer launches, and its erased threads no longer resume (the thread object's tombstone
    // answers, without asking D1); the old launch tokens are refused.
    await expectError(await visitorLaunch(agent, visitorToken), 401, "unauthenticated");
    await expectError(await visitorLaunch(agent, visitorToken, first.threadId), 404, "not_found");
    await expectError(await deleteMine(first.token), 401, "unauthenticated");
    // A fresh visitor starts afresh.
    expect((await launch(agent.publicKey)).visitorToken).toBeDefined();

    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [visitorId, ...texts],
      threads: [erased(agent, first.threadId), erased(agent, second.threadId)],
    });
  });

  it("refused by a legal hold (409), changes nothing: the visitor is not revoked, its threads stay", async () => {
    const agent = await liveAgent();
    const first = await launch(agent.publicKey);
    const visitorToken = first.visitorToken!;
    const text = `held visitor ${crypto.randomUUID()}`;
    await converse(first, [text]);
    const threadHold = `/v1/sessions/${first.threadId}/hold`;
    expect(
      (await api(threadHold, { method: "PUT", key: agent.apiKey, body: { reason: "Case 2026-40" } })).status,
    ).toBe(200);

    const refused = await deleteMine(first.token);
    expect(refused.status).toBe(409);
    expect(
      z.object({ error: z.object({ code: z.string(), reason: z.string() }) }).parse(await refused.json())
        .error,
    ).toEqual({ code: "conflict", reason: "legal_hold" });
    // The visitor token still launches (a new thread, and the held one resumes), and the thread still answers.
    expect((await visitorLaunch(agent, visitorToken)).status).toBe(201);
    expect((await visitorLaunch(agent, visitorToken, first.threadId)).status).toBe(201);
    expect((await api(`/v1/sessions/${first.threadId}/messages`, { key: agent.apiKey })).status).toBe(200);
    const revoked = await env.DB.prepare("SELECT COUNT(*) AS n FROM revoked_visitors WHERE tenant_id = ?")
      .bind(agent.tenantId)
      .first<{ n: number }>();
    expect(revoked?.n).toBe(0);

    // Lifted, the same request erases and revokes.
    expect((await api(threadHold, { method: "DELETE", key: agent.apiKey })).status).toBe(204);
    expect((await deleteMine(first.token)).status).toBe(200);
    await expectError(await visitorLaunch(agent, visitorToken), 401, "unauthenticated");
  });

  it("erases a signed-in user's threads with the token's agent only", async () => {
    const first = await liveAgent({ agent: { visibility: "private" } });
    const second = await secondAgent(first);
    const subject = `user-${crypto.randomUUID()}`;
    const gone = `my own ${crypto.randomUUID()}`;
    const mine = await conversation(first, subject, [gone]);
    const elsewhere = await conversation(second, subject, ["with the other agent"]);

    const res = await deleteMine(mine.session.token);
    expect(res.status).toBe(200);
    const body = erasureCompleted.parse(await res.json());
    expect(body.threadIds).toEqual([mine.session.threadId]);
    expect(body.scope).toEqual({ kind: "me", agentId: first.agentId });
    expect((await verifiedReceipt(body.receipt)).threadIds).toEqual([mine.session.threadId]);
    expect((await api(`/v1/sessions/${elsewhere.session.threadId}`, { key: first.apiKey })).status).toBe(200);
    // The backend may launch the user again: users are the tenant's to admit, only visitors are revoked.
    expect((await launchFor(first, subject)).threadId).not.toBe(mine.session.threadId);

    await expectNothingLeft({
      tenantId: first.tenantId,
      needles: [gone],
      threads: [erased(first, mine.session.threadId)],
    });
  });

  it("refuses a request without a valid launch token, erasing nothing", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    await expectError(await api("/v1/me/threads", { method: "DELETE" }), 401, "unauthenticated");
    await expectError(await deleteMine(`${session.token}x`), 401, "unauthenticated");
    const res = await api(`/v1/threads/${session.threadId}`, {
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
    });
    expect(res.status).toBe(200);
  });
});

describe("GET /.well-known/jwks.json", () => {
  const keysOf = async (res: Response) =>
    z
      .object({ keys: z.array(z.object({ kid: z.string(), kty: z.string(), crv: z.string() })) })
      .parse(await res.json());

  it("publishes every receipt key that is not retired; a receipt signed before a rotation still verifies", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const subject = `user-${crypto.randomUUID()}`;
    const thread = await conversation(agent, subject, [`rotated ${crypto.randomUUID()}`]);
    const r1 = "dGVzdC1yZWNlaXB0LWtleS1vbmUtMDEyMzQ1Njc4OWFiY2RlZg";
    const r2 = "dGVzdC1yZWNlaXB0LWtleS10d28tMDEyMzQ1Njc4OWFiY2RlZg";
    // Signed while r1 was current.
    const before = { RECEIPT_SIGNING_KEYS: JSON.stringify({ current: "r1", keys: { r1 } }) };
    const res = await fetchWithEnv(before, "/v1/subject-erasures", {
      method: "POST",
      headers: { Authorization: `Bearer ${agent.apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ subject }),
    });
    expect(res.status).toBe(200);
    const { receipt } = erasureCompleted.parse(await res.json());
    expect(JSON.parse(atob(receipt.split(".")[0]!.replace(/-/g, "+").replace(/_/g, "/")))).toMatchObject({
      kid: "r1",
    });

    // Today's keys (r2 current, r1 kept) still verify it; a retired r1 is no longer published.
    expect((await verifiedReceipt(receipt, "r1")).threadIds).toEqual([thread.session.threadId]);
    const published = await keysOf(await exports.default.fetch(`${API}/.well-known/jwks.json`));
    expect(published.keys.map((k) => [k.kid, k.kty, k.crv])).toEqual([
      ["r1", "OKP", "Ed25519"],
      ["r2", "OKP", "Ed25519"],
    ]);
    const retired = {
      RECEIPT_SIGNING_KEYS: JSON.stringify({ current: "r2", keys: { r1, r2 }, retired: ["r1"] }),
    };
    const after = await keysOf(await fetchWithEnv(retired, "/.well-known/jwks.json"));
    expect(after.keys.map((k) => k.kid)).toEqual(["r2"]);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [subject, ...thread.texts],
      threads: [erased(agent, thread.session.threadId)],
    });
  });
});
