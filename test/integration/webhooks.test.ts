// Event webhooks (docs/webhooks.md): endpoints and secrets, signed deliveries verified by the reference `standardwebhooks`
// library, retries with the same webhook-id, the delivery log, redelivery, tenancy and the URL policy.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { REDELIVERY_LIMIT, tenantEvents } from "../../src/events/tenant-events";
import { deliveryResponse, webhookResponse, webhookWithSecretResponse } from "../../src/shared/webhooks-api";
import { recordThreadEvent } from "../../src/storage/thread/thread-events";
import { fetchWithEnv } from "../helpers/edge-gate";
import { type FakeReceiver, fakeReceiver, verified } from "../helpers/fake-receiver";
import { threadStub } from "../helpers/projection";
import { api, createApiKey, createTenant, expectError, fieldPaths, json } from "../helpers/tenants";
import { inTestEvents } from "../helpers/test-tenant-events";
import { clientMessageId, type LiveAgent, launch, liveAgent, ORIGIN } from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

const eventSchema = z.object({
  id: z.string().startsWith("evt_"),
  type: z.string(),
  createdAt: z.string(),
  tenantId: z.string(),
  data: z.record(z.string(), z.unknown()),
});
type Event = z.infer<typeof eventSchema>;
const deliveryList = z.object({ items: z.array(deliveryResponse), nextCursor: z.string().optional() });

async function register(
  apiKey: string,
  url: string,
  events: string[] = ["thread.created", "run.succeeded", "run.failed"],
) {
  const res = await api("/v1/webhooks", { method: "POST", key: apiKey, body: { url, events } });
  return json(res, 201, webhookWithSecretResponse);
}

/** One turn over HTTP, answered once its run ended. */
async function runTurn(agent: LiveAgent, text = "hello") {
  const session = await launch(agent.publicKey);
  const res = await api(`/v1/threads/${session.threadId}/messages`, {
    method: "POST",
    headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
    body: { clientMessageId: clientMessageId(), text },
  });
  const reply = await json(
    res,
    201,
    z.object({
      run: z.object({ id: z.string(), status: z.string() }),
      entries: z.array(z.object({ id: z.string() })),
    }),
  );
  return { threadId: session.threadId, run: reply.run, entries: reply.entries };
}

/** The verified events a receiver accepted (2xx), in arrival order. */
function deliveredEvents(secret: string, receiver: FakeReceiver): Event[] {
  return receiver.received
    .filter((r) => r.answered >= 200 && r.answered < 300)
    .map((r) => eventSchema.parse(verified(secret, r)));
}

async function deliveries(apiKey: string, webhookId: string, query = "") {
  return json(await api(`/v1/webhooks/${webhookId}/deliveries${query}`, { key: apiKey }), 200, deliveryList);
}

describe("event webhooks", () => {
  it("delivers thread.created and run.succeeded, signed, after two 500s on the third attempt with the same webhook-id", async () => {
    const agent = await liveAgent();
    const receiver = fakeReceiver(500, 500, 200);
    const hook = await register(agent.apiKey, receiver.url, ["thread.created", "run.succeeded"]);
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/);

    const turn = await runTurn(agent);
    expect(turn.run.status).toBe("succeeded");

    // thread.created goes first (its lane is the thread) and takes the three attempts; run.succeeded follows it.
    await waitFor(
      () => deliveredEvents(hook.secret, receiver).length,
      (n) => n === 2,
      {
        what: "two delivered events",
      },
    );
    const attempts = receiver.received;
    expect(attempts.map((r) => r.answered)).toEqual([500, 500, 200, 200]);
    expect(new Set(attempts.slice(0, 3).map((r) => r.id)).size).toBe(1);
    for (const r of attempts) expect(verified(hook.secret, r)).toBeTruthy();
    expect(attempts[0]?.userAgent).toMatch(/^agent-threads-webhooks\//);
    expect(attempts[0]?.redirect).toBe("manual");

    const [created, succeeded] = deliveredEvents(hook.secret, receiver);
    expect(created).toMatchObject({
      id: attempts[0]?.id,
      type: "thread.created",
      tenantId: agent.tenantId,
      data: { threadId: turn.threadId, agentId: agent.agentId, version: 1 },
    });
    const reply = turn.entries.at(-1);
    expect(succeeded).toMatchObject({
      type: "run.succeeded",
      tenantId: agent.tenantId,
      data: {
        threadId: turn.threadId,
        agentId: agent.agentId,
        version: 1,
        runId: turn.run.id,
        status: "succeeded",
        entryId: reply?.id,
        usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) },
      },
    });

    // The delivery log, newest first: run.succeeded once, thread.created after three attempts.
    const log = await deliveries(agent.apiKey, hook.id);
    expect(log.items.map((d) => [d.eventType, d.status, d.attempts, d.lastStatusCode])).toEqual([
      ["run.succeeded", "succeeded", 1, 200],
      ["thread.created", "succeeded", 3, 200],
    ]);
    expect(log.items[1]?.eventId).toBe(created?.id);
    expect(log.items[1]?.nextAttemptAt).toBeUndefined();
  });

  it("fails a delivery answered 400 without retrying it, and redelivers it on request (202) with the same webhook-id", async () => {
    const agent = await liveAgent();
    const receiver = fakeReceiver(400, 200);
    const hook = await register(agent.apiKey, receiver.url, ["thread.created"]);
    await launch(agent.publicKey).then(async (session) => {
      await api(`/v1/threads/${session.threadId}/messages`, {
        method: "POST",
        headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
        body: { clientMessageId: clientMessageId(), text: "hi" },
      });
    });

    const failed = await waitFor(
      () => deliveries(agent.apiKey, hook.id),
      (log) => log.items[0]?.status === "failed",
      { what: "a failed delivery" },
    );
    expect(failed.items).toHaveLength(1);
    expect(failed.items[0]).toMatchObject({ status: "failed", attempts: 1, lastStatusCode: 400 });
    // Nothing is scheduled for a 400: it is never sent again by itself (the log below still shows it failed once).
    expect(failed.items[0]?.nextAttemptAt).toBeUndefined();
    expect(receiver.received).toHaveLength(1);

    const deliveryId = failed.items[0]?.id ?? "";
    const res = await api(`/v1/webhooks/${hook.id}/deliveries/${deliveryId}/redeliver`, {
      method: "POST",
      key: agent.apiKey,
    });
    expect(res.status).toBe(202);
    const again = await waitFor(
      () => deliveries(agent.apiKey, hook.id),
      (log) => log.items[0]?.status === "succeeded",
      { what: "the redelivery" },
    );
    expect(again.items.map((d) => [d.status, d.attempts, d.eventId])).toEqual([
      ["succeeded", 1, failed.items[0]?.eventId],
      ["failed", 1, failed.items[0]?.eventId],
    ]);
    expect(receiver.received.map((r) => r.id)).toEqual([receiver.received[0]?.id, receiver.received[0]?.id]);
    expect(verified(hook.secret, receiver.received[1]!)).toMatchObject({ type: "thread.created" });

    await expectError(
      await api(`/v1/webhooks/${hook.id}/deliveries/dlv_aaaaaaaaaaaaaaaaaaaaaaaaaa/redeliver`, {
        method: "POST",
        key: agent.apiKey,
      }),
      404,
      "not_found",
    );
  });

  it("redelivers one event to one endpoint at most 10 times an hour: the next is 429 with Retry-After, sending nothing", async () => {
    const agent = await liveAgent();
    const receiver = fakeReceiver(200);
    const hook = await register(agent.apiKey, receiver.url, ["thread.created"]);
    await launch(agent.publicKey).then((session) =>
      api(`/v1/threads/${session.threadId}/messages`, {
        method: "POST",
        headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
        body: { clientMessageId: clientMessageId(), text: "hi" },
      }),
    );
    const first = await waitFor(
      () => deliveries(agent.apiKey, hook.id),
      (log) => log.items[0]?.status === "succeeded",
      { what: "the first delivery" },
    );
    const original = first.items[0]?.id ?? "";
    const redeliver = (deliveryId: string) =>
      api(`/v1/webhooks/${hook.id}/deliveries/${deliveryId}/redeliver`, {
        method: "POST",
        key: agent.apiKey,
      });

    const made: string[] = [];
    for (let i = 0; i < REDELIVERY_LIMIT.max; i++) {
      made.push((await json(await redeliver(original), 202, z.object({ id: z.string() }))).id);
    }
    await waitFor(
      () => deliveries(agent.apiKey, hook.id),
      (log) => log.items.length === 11 && log.items.every((d) => d.status === "succeeded"),
      { what: "ten redeliveries sent" },
    );
    expect(receiver.received).toHaveLength(11);

    // The eleventh, of the delivery or of one of its redeliveries (the same event), is refused and sends nothing.
    for (const deliveryId of [original, made[9] ?? ""]) {
      const refused = await redeliver(deliveryId);
      const retryAfter = Number(refused.headers.get("Retry-After"));
      await expectError(refused, 429, "rate_limited");
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(3600);
    }
    expect((await deliveries(agent.apiKey, hook.id)).items).toHaveLength(11);
    expect(receiver.received).toHaveLength(11);

    // An hour on, the allowance is back.
    await inTestEvents(tenantEvents(env, agent.tenantId), (events) => events.clock.advance(3_600_000));
    expect((await redeliver(original)).status).toBe(202);
    await waitFor(
      () => Promise.resolve(receiver.received.length),
      (n) => n === 12,
      { what: "the redelivery after an hour" },
    );
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(1);
  });

  it("retries network errors and keeps a thread's events in order while its receiver is down", async () => {
    const agent = await liveAgent();
    const receiver = fakeReceiver("network_error", "network_error", 503, 200);
    const hook = await register(agent.apiKey, receiver.url, ["thread.created", "run.succeeded"]);
    const turn = await runTurn(agent, "first");
    await waitFor(
      () => deliveredEvents(hook.secret, receiver).length,
      (n) => n === 2,
      {
        what: "both events",
        timeoutMs: 8_000,
      },
    );
    expect(receiver.received.map((r) => r.answered)).toEqual([0, 0, 503, 200, 200]);
    // Nothing of the thread arrived out of order: run.succeeded only after thread.created was delivered.
    expect(deliveredEvents(hook.secret, receiver).map((e) => e.type)).toEqual([
      "thread.created",
      "run.succeeded",
    ]);
    expect(deliveredEvents(hook.secret, receiver)[1]?.data.runId).toBe(turn.run.id);
  });

  it("reports run.failed with the run's error", async () => {
    const agent = await liveAgent({
      artifact: { model: { provider: "local", model: "echo", local: { failAfterChunks: 0 } } },
    });
    const receiver = fakeReceiver(200);
    const hook = await register(agent.apiKey, receiver.url, ["run.failed"]);
    const turn = await runTurn(agent);
    expect(turn.run.status).toBe("failed");
    const [event] = await waitFor(
      () => deliveredEvents(hook.secret, receiver),
      (e) => e.length === 1,
      {
        what: "run.failed",
      },
    );
    expect(event).toMatchObject({
      type: "run.failed",
      data: {
        threadId: turn.threadId,
        runId: turn.run.id,
        status: "failed",
        error: { code: expect.any(String) },
      },
    });
  });

  it("takes subscriptions to the approval and client tool events and delivers what the thread recorded", async () => {
    const agent = await liveAgent();
    const receiver = fakeReceiver(200);
    const hook = await register(agent.apiKey, receiver.url, [
      "approval.requested",
      "approval.decided",
      "tool.requested",
    ]);
    expect(hook.events).toEqual(["approval.requested", "approval.decided", "tool.requested"]);
    const session = await launch(agent.publicKey);
    const send = (text: string) =>
      api(`/v1/threads/${session.threadId}/messages`, {
        method: "POST",
        headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
        body: { clientMessageId: clientMessageId(), text },
      });
    expect((await send("first")).status).toBe(201);
    const base = { threadId: session.threadId, agentId: agent.agentId, version: 1, runId: "run_1" };
    const recorded = [
      {
        type: "approval.requested" as const,
        data: {
          ...base,
          approvalId: "apr_1",
          toolCallId: "call_1",
          toolName: "refund",
          input: { amount: 20 },
          by: "tenant",
          expiresAt: "2026-12-05T11:00:00.000Z",
        },
      },
      {
        type: "approval.decided" as const,
        data: {
          ...base,
          approvalId: "apr_1",
          toolCallId: "call_1",
          toolName: "refund",
          decision: "deny",
          decidedBy: "tenant",
          reason: null,
        },
      },
      {
        type: "tool.requested" as const,
        data: { ...base, toolCallId: "call_2", toolName: "pick_date", expiresAt: "2026-12-05T10:01:00.000Z" },
      },
    ];
    await runInDurableObject(await threadStub(agent, session.threadId), (_i, state) => {
      state.storage.transactionSync(() => {
        for (const event of recorded) recordThreadEvent(state.storage, event, Date.now());
      });
    });
    // The next turn forwards what is waiting; the endpoint hears only the types it subscribed to.
    expect((await send("second")).status).toBe(201);
    const events = await waitFor(
      () => deliveredEvents(hook.secret, receiver),
      (e) => e.length === 3,
      { what: "the three approval and tool events" },
    );
    expect(events.map((e) => ({ type: e.type, data: e.data }))).toEqual(recorded);
    const log = await deliveries(agent.apiKey, hook.id);
    expect(log.items.map((d) => d.eventType).sort()).toEqual([
      "approval.decided",
      "approval.requested",
      "tool.requested",
    ]);
  });

  it("delivers message.feedback and handoff.requested the thread recorded", async () => {
    const agent = await liveAgent({
      artifact: {
        handoff: { enabled: true },
        model: {
          provider: "local",
          model: "echo",
          local: { toolCall: { name: "request_handoff", input: { reason: "Wants a person." } } },
        },
      },
    });
    const receiver = fakeReceiver(200);
    const hook = await register(agent.apiKey, receiver.url, ["message.feedback", "handoff.requested"]);
    const session = await launch(agent.publicKey);
    const turn = await api(`/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      body: { clientMessageId: clientMessageId(), text: "a person please" },
    });
    const reply = await json(
      turn,
      201,
      z.object({
        run: z.object({ id: z.string() }),
        entries: z.array(z.object({ id: z.string(), role: z.string() })),
      }),
    );
    const assistant = reply.entries.find((e) => e.role === "assistant");
    const rated = await api(`/v1/threads/${session.threadId}/entries/${assistant?.id}/feedback`, {
      method: "POST",
      headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
      body: { rating: "down", comment: "too slow" },
    });
    expect(rated.status).toBe(200);
    const events = await waitFor(
      () => deliveredEvents(hook.secret, receiver),
      (e) => e.length === 2,
      {
        what: "handoff.requested and message.feedback",
      },
    );
    expect(events.map((e) => e.type)).toEqual(["handoff.requested", "message.feedback"]);
    expect(events[0]?.data).toMatchObject({
      threadId: session.threadId,
      runId: reply.run.id,
      reason: "Wants a person.",
    });
    expect(events[1]?.data).toMatchObject({
      threadId: session.threadId,
      agentId: agent.agentId,
      version: 1,
      entryId: assistant?.id,
      rating: "down",
    });
  });

  it("delivers while D1 is down: neither the projection nor the endpoint list holds events back", async () => {
    const agent = await liveAgent();
    const receiver = fakeReceiver(200);
    const hook = await register(agent.apiKey, receiver.url, ["thread.created", "run.succeeded"]);
    const session = await launch(agent.publicKey);
    await env.DB.exec("ALTER TABLE agent_messages RENAME TO agent_messages_offline");
    await env.DB.exec("ALTER TABLE webhook_endpoints RENAME TO webhook_endpoints_offline");
    try {
      const res = await api(`/v1/threads/${session.threadId}/messages`, {
        method: "POST",
        headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
        body: { clientMessageId: clientMessageId(), text: "while D1 is down" },
      });
      expect(res.status).toBe(201);
      const events = await waitFor(
        () => deliveredEvents(hook.secret, receiver),
        (e) => e.length === 2,
        {
          what: "both events with D1 down",
        },
      );
      expect(events.map((e) => e.type)).toEqual(["thread.created", "run.succeeded"]);
      // The projection is still waiting for D1: nothing of the turn reached it.
      const projected = await env.DB.prepare(
        "SELECT COUNT(*) AS n FROM agent_messages_offline WHERE tenant_id = ?",
      )
        .bind(agent.tenantId)
        .first();
      expect(projected).toEqual({ n: 0 });
    } finally {
      await env.DB.exec("ALTER TABLE webhook_endpoints_offline RENAME TO webhook_endpoints");
      await env.DB.exec("ALTER TABLE agent_messages_offline RENAME TO agent_messages");
    }
  });

  it("sends session.erased (ids only) after an erasure", async () => {
    const agent = await liveAgent();
    const receiver = fakeReceiver(200);
    const hook = await register(agent.apiKey, receiver.url, ["session.erased"]);
    const turn = await runTurn(agent);
    expect((await api(`/v1/sessions/${turn.threadId}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );
    const [event] = await waitFor(
      () => deliveredEvents(hook.secret, receiver),
      (e) => e.length === 1,
      {
        what: "session.erased",
      },
    );
    expect(event).toMatchObject({
      type: "session.erased",
      tenantId: agent.tenantId,
      data: { threadId: turn.threadId, agentId: agent.agentId },
    });
    expect(JSON.stringify(event)).not.toContain("hello");
  });

  it("after an erasure, fails the thread's undelivered events and no longer redelivers them", async () => {
    const agent = await liveAgent();
    const down = fakeReceiver("network_error");
    const hook = await register(agent.apiKey, down.url, ["thread.created", "run.succeeded"]);
    const turn = await runTurn(agent);
    await waitFor(
      () => down.received.length,
      (n) => n >= 1,
      { what: "a first failed attempt" },
    );
    expect((await api(`/v1/sessions/${turn.threadId}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );
    const log = await waitFor(
      () => deliveries(agent.apiKey, hook.id),
      (l) => l.items.length === 2 && l.items.every((d) => d.status === "failed"),
      { what: "both deliveries failed" },
    );
    const res = await api(`/v1/webhooks/${hook.id}/deliveries/${log.items[0]?.id}/redeliver`, {
      method: "POST",
      key: agent.apiKey,
    });
    await expectError(res, 404, "not_found");
  });
});

describe("webhook endpoints", () => {
  it("creates, lists, reads, updates, rotates and deletes; the secret is shown only on create and rotate", async () => {
    const tenant = await createTenant();
    const created = await register(tenant.apiKey, "https://crm.example.com/hooks", ["thread.created"]);
    expect(created).toMatchObject({ url: "https://crm.example.com/hooks", events: ["thread.created"] });

    const list = await json(
      await api("/v1/webhooks", { key: tenant.apiKey }),
      200,
      z.object({ items: z.array(webhookResponse) }),
    );
    expect(list.items.map((w) => w.id)).toEqual([created.id]);
    const one = await api(`/v1/webhooks/${created.id}`, { key: tenant.apiKey });
    const oneText = await one.text();
    expect(one.status).toBe(200);
    expect(oneText).not.toContain(created.secret);
    expect(oneText).not.toContain("secret");

    // D1 holds no plaintext secret.
    const row = await env.DB.prepare("SELECT * FROM webhook_endpoints WHERE tenant_id = ? AND id = ?")
      .bind(tenant.tenantId, created.id)
      .first();
    expect(JSON.stringify(row)).not.toContain(created.secret.slice("whsec_".length, 20));

    const patched = await json(
      await api(`/v1/webhooks/${created.id}`, {
        method: "PATCH",
        key: tenant.apiKey,
        body: { events: ["run.succeeded", "run.failed"], description: "CRM" },
      }),
      200,
      webhookResponse,
    );
    expect(patched).toMatchObject({ events: ["run.succeeded", "run.failed"], description: "CRM" });

    const rotated = await json(
      await api(`/v1/webhooks/${created.id}/rotate-secret`, { method: "POST", key: tenant.apiKey }),
      200,
      webhookWithSecretResponse,
    );
    expect(rotated.secret).not.toBe(created.secret);

    expect((await api(`/v1/webhooks/${created.id}`, { method: "DELETE", key: tenant.apiKey })).status).toBe(
      204,
    );
    await expectError(await api(`/v1/webhooks/${created.id}`, { key: tenant.apiKey }), 404, "not_found");
  });

  it("signs with the rotated secret from then on", async () => {
    const agent = await liveAgent();
    const receiver = fakeReceiver(200);
    const hook = await register(agent.apiKey, receiver.url, ["thread.created"]);
    const rotated = await json(
      await api(`/v1/webhooks/${hook.id}/rotate-secret`, { method: "POST", key: agent.apiKey }),
      200,
      webhookWithSecretResponse,
    );
    await runTurn(agent);
    await waitFor(
      () => receiver.received.length,
      (n) => n === 1,
      { what: "one delivery" },
    );
    expect(verified(rotated.secret, receiver.received[0]!)).toMatchObject({ type: "thread.created" });
    expect(() => verified(hook.secret, receiver.received[0]!)).toThrow();
  });

  it("answers 404 for another tenant's webhook and its deliveries, leaving it unchanged", async () => {
    const owner = await createTenant();
    const other = await createTenant();
    const hook = await register(owner.apiKey, "https://crm.example.com/a", ["thread.created"]);
    for (const [method, path] of [
      ["GET", `/v1/webhooks/${hook.id}`],
      ["PATCH", `/v1/webhooks/${hook.id}`],
      ["DELETE", `/v1/webhooks/${hook.id}`],
      ["POST", `/v1/webhooks/${hook.id}/rotate-secret`],
      ["GET", `/v1/webhooks/${hook.id}/deliveries`],
    ] as const) {
      const body = method === "PATCH" ? { description: "mine now" } : undefined;
      await expectError(await api(path, { method, key: other.apiKey, body }), 404, "not_found");
    }
    const list = await json(
      await api("/v1/webhooks", { key: other.apiKey }),
      200,
      z.object({ items: z.array(z.unknown()) }),
    );
    expect(list.items).toEqual([]);
    const still = await json(
      await api(`/v1/webhooks/${hook.id}`, { key: owner.apiKey }),
      200,
      webhookResponse,
    );
    expect(still.description).toBeNull();
  });

  it("refuses a read-only key's writes (403) and bad bodies (400), storing nothing", async () => {
    const tenant = await createTenant();
    const read = await createApiKey(tenant, "read");
    await expectError(
      await api("/v1/webhooks", {
        method: "POST",
        key: read.apiKey,
        body: { url: "https://crm.example.com/x", events: ["thread.created"] },
      }),
      403,
      "forbidden",
    );
    for (const body of [
      { url: "https://crm.example.com/x", events: [] },
      { url: "https://crm.example.com/x", events: ["thread.deleted"] },
      { url: "https://crm.example.com/x", events: ["thread.created", "thread.created"] },
      { url: "https://crm.example.com/x" },
      { url: "https://crm.example.com/x", events: ["thread.created"], secret: "whsec_mine" },
    ]) {
      await expectError(
        await api("/v1/webhooks", { method: "POST", key: tenant.apiKey, body }),
        400,
        "bad_request",
      );
    }
    const count = await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_endpoints WHERE tenant_id = ?")
      .bind(tenant.tenantId)
      .first();
    expect(count).toEqual({ n: 0 });
  });

  it.each([
    "http://crm.example.com/hooks",
    "https://127.0.0.1/hooks",
    "https://169.254.169.254/latest",
    "https://[::1]/hooks",
    "https://10.0.0.5/hooks",
    "https://api.test/hooks",
  ])("refuses %s in every environment", async (url) => {
    const tenant = await createTenant();
    for (const ENVIRONMENT of ["development", "production"]) {
      const res = await fetchWithEnv({ ENVIRONMENT }, "/v1/webhooks", {
        method: "POST",
        headers: { Authorization: `Bearer ${tenant.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({ url, events: ["thread.created"] }),
      });
      expect(fieldPaths(await expectError(res, 400, "bad_request"))).toEqual(["url"]);
    }
  });

  it("admits a local plain-http receiver only in development; staging and production refuse it", async () => {
    const tenant = await createTenant();
    const post = (ENVIRONMENT: string, url: string) =>
      fetchWithEnv({ ENVIRONMENT }, "/v1/webhooks", {
        method: "POST",
        headers: { Authorization: `Bearer ${tenant.apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({ url, events: ["thread.created"] }),
      });
    for (const url of ["http://127.0.0.1:8788/hooks", "http://localhost:9999/"]) {
      for (const ENVIRONMENT of ["staging", "production"]) {
        expect(fieldPaths(await expectError(await post(ENVIRONMENT, url), 400, "bad_request"))).toEqual([
          "url",
        ]);
      }
      expect((await post("development", url)).status).toBe(201);
    }
    // Only loopback: another private address stays refused over plain http in development too.
    await expectError(await post("development", "http://192.168.1.10:8080/"), 400, "bad_request");
  });

  it("keeps the events object to its tenant", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const stub = tenantEvents(env, a.tenantId);
    expect((await stub.endpointsChanged(a.tenantId)).ok).toBe(true);
    expect(await stub.endpointsChanged(b.tenantId)).toMatchObject({ ok: false, code: "forbidden" });
  });
});
