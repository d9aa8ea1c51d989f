// A tenant the operator disables: its keys, launches, tokens and open sockets are cut off, and all work again after.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SOCKET_ACTIVITY_REFRESH_MS } from "../../src/auth/socket-activity";
import { tenantQuota } from "../../src/auth/tenant-quota";
import type { ThreadAgent } from "../../src/objects/thread-agent";
import { disconnectTenant } from "../../src/services/tenant-disconnect";
import { threadObjectName } from "../../src/thread/contract";
import {
  allThreadRows,
  bodyWithoutRequestId,
  privateLaunchRequest,
  tenantFootprint,
  threadObjects,
} from "../helpers/edge-gate";
import { api, createApiKey, createTenant, expectError, operatorHeaders } from "../helpers/tenants";
import { inTestQuota } from "../helpers/test-tenant-quota";
import { inTestThread } from "../helpers/test-thread-agent";
import {
  connect,
  type Launch,
  type LiveAgent,
  launch,
  launchRequest,
  liveAgent,
  ORIGIN,
  upgradeRequest,
} from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

async function setStatus(tenantId: string, status: "active" | "disabled"): Promise<void> {
  const res = await api(`/v1/operator/tenants/${tenantId}`, {
    method: "PATCH",
    headers: operatorHeaders(),
    body: { status },
  });
  expect(res.status, await res.text()).toBe(200);
}

function threadGet(session: Launch) {
  return api(`/v1/threads/${session.threadId}`, {
    headers: { Authorization: `Bearer ${session.token}`, Origin: ORIGIN },
  });
}

async function threadStub(agent: LiveAgent, threadId: string) {
  const name = await threadObjectName(env.DO_NAME_KEY, {
    tenantId: agent.tenantId,
    environment: "development",
    agentId: agent.agentId,
    threadId,
  });
  return env.THREAD.get(env.THREAD.idFromName(name));
}

describe("a disabled tenant", () => {
  it("has every sk_ key refused with the same 401 as a revoked key, private launches included", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const other = await createTenant();
    const revoked = await createApiKey(other, "admin");
    await api(`/v1/api-keys/${revoked.id}`, { method: "DELETE", key: other.apiKey });
    const revokedAnswer = await bodyWithoutRequestId(await api("/v1/agents", { key: revoked.apiKey }));

    await setStatus(agent.tenantId, "disabled");
    const answer = await api("/v1/agents", { key: agent.apiKey });
    expect(await bodyWithoutRequestId(answer)).toEqual(revokedAnswer);

    const before = await tenantFootprint(agent.tenantId);
    const res = await privateLaunchRequest(agent.apiKey, { agentId: agent.agentId, subject: "alice" });
    await expectError(res, 401, "unauthenticated");
    expect(await tenantFootprint(agent.tenantId)).toEqual(before);
  });

  it("has its public launches refused with 403 forbidden, storing nothing and consuming no quota", async () => {
    const agent = await liveAgent();
    await setStatus(agent.tenantId, "disabled");
    const before = await tenantFootprint(agent.tenantId);
    const rows = await allThreadRows();
    await expectError(await launchRequest({ agentKey: agent.publicKey }), 403, "forbidden");
    expect(await tenantFootprint(agent.tenantId)).toEqual(before);
    expect(await allThreadRows()).toBe(rows);
  });

  it("refuses a visitor's token refresh for its existing thread with 403, though a refresh takes no quota", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    await setStatus(agent.tenantId, "disabled");
    const before = await tenantFootprint(agent.tenantId);
    const refresh = await launchRequest({
      agentKey: agent.publicKey,
      threadId: session.threadId,
      visitorToken: session.visitorToken,
    });
    await expectError(refresh, 403, "forbidden");
    expect(await tenantFootprint(agent.tenantId)).toEqual(before);
  });

  it("refuses a launch token minted before it was disabled: 403 at the upgrade and on thread HTTP, no object", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    await setStatus(agent.tenantId, "disabled");
    const objects = await threadObjects();
    const res = await upgradeRequest(session.threadId, { token: session.token });
    expect(res.webSocket).toBeNull();
    await expectError(res, 403, "forbidden");
    await expectError(await threadGet(session), 403, "forbidden");
    expect(await threadObjects()).toBe(objects);
  });

  it("has every open socket of its threads closed with 4403 once the PATCH answers; other tenants' stay", async () => {
    const agent = await liveAgent();
    const first = await launch(agent.publicKey);
    const second = await launch(agent.publicKey);
    const sockets = [await connect(first), await connect(first), await connect(second)];
    const bystander = await liveAgent();
    const theirs = await connect(await launch(bystander.publicKey));

    await setStatus(agent.tenantId, "disabled");
    for (const socket of sockets) expect((await socket.waitClosed()).code).toBe(4403);

    theirs.send({ type: "ping" });
    await theirs.next("pong");
    expect(theirs.closed).toBeNull();
    theirs.ws.close();
  });

  it("wakes only threads that had a socket within the activity window", async () => {
    const agent = await liveAgent();
    const connected = await launch(agent.publicKey);
    const socket = await connect(connected);
    await launch(agent.publicKey); // never connected: no object, no activity mark
    await waitFor(
      () =>
        env.DB.prepare("SELECT active_at FROM threads WHERE tenant_id = ? AND id = ?")
          .bind(agent.tenantId, connected.threadId)
          .first<{ active_at: string | null }>(),
      (row) => row?.active_at !== null,
      { what: "the connected thread's activity mark" },
    );
    // Disabled in D1 directly, so the only disconnect is the one this test runs.
    await env.DB.prepare("UPDATE tenants SET status = 'disabled' WHERE id = ?").bind(agent.tenantId).run();
    const objects = await threadObjects();

    await disconnectTenant(env, agent.tenantId);
    expect((await socket.waitClosed()).code).toBe(4403);
    // The round is over (its object has no alarm left) and woke no other thread.
    await waitFor(
      () => inTestQuota(tenantQuota(env, agent.tenantId), (_instance, state) => state.storage.getAlarm()),
      (alarm) => alarm === null,
      { what: "the disconnect round finished" },
    );
    expect(await threadObjects()).toBe(objects);
  });

  it("closes a socket the disconnect missed when the thread next renews its activity mark", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const socket = await connect(session);
    // No PATCH, so no disconnect: only the thread's own check can close the socket.
    await env.DB.prepare("UPDATE tenants SET status = 'disabled' WHERE id = ?").bind(agent.tenantId).run();
    const thread = await threadStub(agent, session.threadId);
    await inTestThread(thread, (instance) => instance.clock.advance(SOCKET_ACTIVITY_REFRESH_MS));
    socket.send({ type: "ping" }); // active at the moved clock, so the sweep does not close it as idle
    await socket.next("pong");
    await runInDurableObject(thread, (instance: ThreadAgent) => instance.sweepIdleConnections());
    expect((await socket.waitClosed()).code).toBe(4403);
  });

  it("stops its disconnect round part way when it is enabled again: the sockets not yet reached stay", async () => {
    const agent = await liveAgent();
    const sessions = [await launch(agent.publicKey), await launch(agent.publicKey)];
    const sockets = [await connect(sessions[0]!), await connect(sessions[1]!)];
    for (const session of sessions) {
      await waitFor(
        () =>
          env.DB.prepare("SELECT active_at FROM threads WHERE tenant_id = ? AND id = ?")
            .bind(agent.tenantId, session.threadId)
            .first<{ active_at: string | null }>(),
        (row) => typeof row?.active_at === "string",
        { what: "the thread's activity mark" },
      );
    }
    const quota = tenantQuota(env, agent.tenantId);
    // One thread a batch; the round pauses after its first batch, as one still under way.
    await inTestQuota(quota, (instance) => {
      instance.socketRounds.batch = 1;
      instance.socketRounds.alarmsLeft = 1;
    });
    await setStatus(agent.tenantId, "disabled");
    await waitFor(
      () => inTestQuota(quota, (instance) => instance.socketRounds.held),
      (held) => held,
      { what: "the round paused after its first batch" },
    );
    const rest = await waitFor(
      async () => sockets.filter((ws) => ws.closed === null),
      (open) => open.length === 1,
      { what: "the first batch's socket closed" },
    );

    await setStatus(agent.tenantId, "active");
    await inTestQuota(quota, (instance) => {
      instance.socketRounds.alarmsLeft = null;
    });
    expect(await runDurableObjectAlarm(quota)).toBe(true);
    expect(await inTestQuota(quota, (_instance, state) => state.storage.getAlarm())).toBeNull();
    rest[0]!.send({ type: "ping" });
    await rest[0]!.next("pong");
    expect(rest[0]!.closed).toBeNull();
    rest[0]!.ws.close();
  });

  it("works again once enabled: its keys, launches, new sockets and tokens minted before", async () => {
    const agent = await liveAgent();
    const earlier = await launch(agent.publicKey);
    await setStatus(agent.tenantId, "disabled");
    await expectError(await api("/v1/agents", { key: agent.apiKey }), 401, "unauthenticated");

    await setStatus(agent.tenantId, "active");
    expect((await api("/v1/agents", { key: agent.apiKey })).status).toBe(200);
    const fresh = await launch(agent.publicKey);
    const socket = await connect(fresh);
    const old = await connect(earlier);
    expect((await threadGet(earlier)).status).toBe(200);
    socket.ws.close();
    old.ws.close();
  });
});
