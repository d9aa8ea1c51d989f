// An open socket and its token refreshes last only while what its launch checked still stands: a disabled agent or
// tenant, a revoked minting `sk_` key, a revoked visitor stop refreshes and close live sockets 4403: at once when the
// change goes through the API, within the standing recheck (with its retry) when nothing told the thread.
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { verifyLaunchToken } from "../../src/auth/launch-token";
import { SOCKET_STANDING_BOUND_MS, SOCKET_STANDING_RECHECK_MS } from "../../src/auth/socket-activity";
import { tenantQuota } from "../../src/auth/tenant-quota";
import { visitorHash } from "../../src/auth/visitor-revocation";
import type { ThreadAgent } from "../../src/objects/thread-agent";
import { THREAD_SETTINGS } from "../../src/thread/object/thread-settings";
import { privateLaunchRequest, readToken } from "../helpers/edge-gate";
import { threadStub } from "../helpers/projection";
import { api, createApiKey, json } from "../helpers/tenants";
import { inTestQuota } from "../helpers/test-tenant-quota";
import { inTestThread } from "../helpers/test-thread-agent";
import {
  connect,
  FrameReader,
  type Launch,
  type LiveAgent,
  launch,
  launchResponse,
  liveAgent,
  upgradeRequest,
} from "../helpers/threads";
import { waitFor } from "../helpers/wait-for";

/**
 * The thread's socket alarm once its standing recheck is due: the clock moves on by the recheck period and the socket
 * pings at that time (so it is not closed as idle), then the alarm runs.
 */
async function sweep(agent: LiveAgent, threadId: string, ws: FrameReader): Promise<void> {
  const stub = await threadStub(agent, threadId);
  await inTestThread(stub, (instance) => instance.clock.advance(SOCKET_STANDING_RECHECK_MS));
  ws.send({ type: "ping" });
  await ws.next("pong");
  await runInDurableObject(stub, (instance: ThreadAgent) => instance.sweepIdleConnections());
}

/** Sends `refresh` and expects the socket closed 4403 with `reason`, no token given. */
async function refreshRefused(ws: FrameReader, reason: string): Promise<void> {
  ws.send({ type: "refresh" });
  expect(await ws.waitClosed()).toEqual({ code: 4403, reason });
  expect(ws.all("token")).toEqual([]);
}

/** A backend (private) launch minted with `apiKey`. */
async function privateLaunch(agent: LiveAgent, apiKey: string, subject: string): Promise<Launch> {
  const res = await privateLaunchRequest(apiKey, { agentId: agent.agentId, subject });
  return json(res, 201, launchResponse);
}

/** An upgrade with `session`'s token: refused, or accepted and closed 4403 before it could be used. */
async function noNewSocket(session: Launch, reason: string): Promise<void> {
  const res = await upgradeRequest(session.threadId, { token: session.token });
  if (res.status !== 101) {
    expect(res.status).toBe(403);
    return;
  }
  const ws = res.webSocket!;
  ws.accept();
  const reader = new FrameReader(ws);
  expect(await reader.waitClosed()).toEqual({ code: 4403, reason });
  expect(reader.all("token")).toEqual([]);
}

/** Disables the agent in D1 directly: nothing tells its threads, so only their own checks can notice. */
async function disableInD1(agent: { tenantId: string; agentId: string }): Promise<void> {
  await env.DB.prepare("UPDATE agents SET status = 'disabled' WHERE tenant_id = ? AND id = ?")
    .bind(agent.tenantId, agent.agentId)
    .run();
}

/** Waits until every one of the threads has marked itself active in D1 (a round reaches only marked threads). */
async function activityMarked(tenantId: string, threadIds: string[]): Promise<void> {
  for (const threadId of threadIds) {
    await waitFor(
      () =>
        env.DB.prepare("SELECT active_at FROM threads WHERE tenant_id = ? AND id = ?")
          .bind(tenantId, threadId)
          .first<{ active_at: string | null }>(),
      (row) => row?.active_at !== null && row?.active_at !== undefined,
      { what: "the thread's activity mark" },
    );
  }
}

/** Disables the agent through the API. */
async function disableByApi(agent: LiveAgent): Promise<void> {
  const res = await api(`/v1/agents/${agent.agentId}`, {
    method: "PATCH",
    key: agent.apiKey,
    body: { status: "disabled" },
  });
  expect(res.status).toBe(200);
}

describe("open sockets and refreshes re-check what a launch checks", () => {
  it("re-reads every 5 minutes while sockets are open, retrying a failed read well within the bound", () => {
    expect(SOCKET_STANDING_RECHECK_MS).toBe(300_000);
    expect(SOCKET_STANDING_BOUND_MS).toBe(360_000);
    expect(SOCKET_STANDING_RECHECK_MS + THREAD_SETTINGS.socketRetrySeconds * 1000).toBeLessThanOrEqual(
      SOCKET_STANDING_BOUND_MS,
    );
  });

  it("a disabled agent: the PATCH closes its live sockets 4403; other agents' stay", async () => {
    const agent = await liveAgent();
    const first = await connect(await launch(agent.publicKey));
    const second = await connect(await launch(agent.publicKey));
    const bystander = await liveAgent({ tenant: { tenantId: agent.tenantId, apiKey: agent.apiKey } });
    const theirs = await connect(await launch(bystander.publicKey));

    const res = await api(`/v1/agents/${agent.agentId}`, {
      method: "PATCH",
      key: agent.apiKey,
      body: { status: "disabled" },
    });
    expect(res.status).toBe(200);
    for (const ws of [first, second])
      expect(await ws.waitClosed()).toEqual({ code: 4403, reason: "agent disabled" });

    theirs.send({ type: "refresh" });
    await theirs.next("token");
    expect(theirs.closed).toBeNull();
    theirs.ws.close();
  });

  it("a disabled agent: a refresh is refused and its socket closed 4403, with no fan-out at all", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    // Changed in D1 directly: nothing asks the thread, only the refresh's own check can tell.
    await disableInD1(agent);
    await refreshRefused(ws, "agent disabled");
  });

  it("a disabled agent: the socket alarm closes a socket nothing else told once its recheck is due", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    await disableInD1(agent);
    await sweep(agent, session.threadId, ws);
    expect(await ws.waitClosed()).toEqual({ code: 4403, reason: "agent disabled" });
  });

  it("a disabled tenant: a refresh is refused and its socket closed 4403", async () => {
    const agent = await liveAgent();
    const ws = await connect(await launch(agent.publicKey));
    await env.DB.prepare("UPDATE tenants SET status = 'disabled' WHERE id = ?").bind(agent.tenantId).run();
    await refreshRefused(ws, "tenant disabled");
  });

  it("a revoked minting key: the DELETE closes the key's sockets 4403, refreshes stop and no new socket opens", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const tenant = { tenantId: agent.tenantId, apiKey: agent.apiKey };
    const minting = await createApiKey(tenant, "admin");
    const session = await privateLaunch(agent, minting.apiKey, "user-revoked-key");
    const other = await privateLaunch(agent, agent.apiKey, "user-other-key");
    expect(readToken(session.token).claims.apiKeyId).toBe(minting.id);
    const ws = await connect(session);
    // A refreshed token names the same key.
    ws.send({ type: "refresh" });
    const refreshed = await verifyLaunchToken(env, (await ws.next("token")).token);
    expect(refreshed.ok && refreshed.claims.apiKeyId).toBe(minting.id);
    const bystander = await connect(other);

    expect((await api(`/v1/api-keys/${minting.id}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );
    expect(await ws.waitClosed()).toEqual({ code: 4403, reason: "api key revoked" });
    await noNewSocket(session, "api key revoked");

    // Sockets of launches minted by another key go on.
    bystander.send({ type: "refresh" });
    await bystander.next("token");
    expect(bystander.closed).toBeNull();
    bystander.ws.close();
  });

  it("a revoked minting key: a refresh is refused and its socket closed 4403, with no fan-out at all", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const minting = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "admin");
    const session = await privateLaunch(agent, minting.apiKey, "user-revoked-quietly");
    const ws = await connect(session);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE tenant_id = ? AND id = ?")
      .bind(new Date().toISOString(), agent.tenantId, minting.id)
      .run();
    await refreshRefused(ws, "api key revoked");
    await noNewSocket(session, "api key revoked");
  });

  it("a revoked visitor: a refresh is refused and its socket closed 4403", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const sub = String(readToken(session.token).claims.sub);
    const hash = await visitorHash(env, agent.tenantId, sub);
    const now = new Date();
    await env.DB.prepare(
      "INSERT INTO revoked_visitors (tenant_id, visitor_hash, revoked_at, expires_at) VALUES (?, ?, ?, ?)",
    )
      .bind(agent.tenantId, hash, now.toISOString(), new Date(now.getTime() + 3_600_000).toISOString())
      .run();
    await refreshRefused(ws, "visitor revoked");
  });
});

describe("a change made through the API reaches open sockets durably", () => {
  it("a recheck round survives its quota object dying between two batches and still closes the socket 4403", async () => {
    const agent = await liveAgent();
    const sessions = [await launch(agent.publicKey), await launch(agent.publicKey)];
    const sockets = [await connect(sessions[0]!), await connect(sessions[1]!)];
    await activityMarked(
      agent.tenantId,
      sessions.map((s) => s.threadId),
    );
    const quota = tenantQuota(env, agent.tenantId);
    // One thread a batch, and the object stops after its first batch, its work and its alarm left in storage.
    await inTestQuota(quota, (instance) => {
      instance.socketRounds.batch = 1;
      instance.socketRounds.alarmsLeft = 1;
    });

    await disableByApi(agent);
    await waitFor(
      () => inTestQuota(quota, (instance) => instance.socketRounds.held),
      (held) => held,
      { what: "the round stopped after its first batch" },
    );
    await waitFor(
      async () => sockets.filter((ws) => ws.closed !== null).length,
      (n) => n > 0,
      { what: "the first batch's socket closed" },
    );
    const first = sockets.findIndex((ws) => ws.closed !== null);
    const rest = sockets.filter((ws) => ws.closed === null);
    expect(sockets[first]!.closed).toEqual({ code: 4403, reason: "agent disabled" });
    expect(rest).toHaveLength(1);

    // The quota object dies (a deploy, a crash): what it held in memory is gone, its storage is not.
    await runInDurableObject(quota, (_instance, state) => state.abort("dies between batches (test)")).catch(
      () => undefined,
    );
    await waitFor(
      async () => {
        // A fresh stub: the old one broke with the object it reached.
        await runDurableObjectAlarm(tenantQuota(env, agent.tenantId));
        return rest[0]!.closed;
      },
      (closed) => closed !== null,
      { what: "the rest of the round after the restart" },
    );
    expect(rest[0]!.closed).toEqual({ code: 4403, reason: "agent disabled" });
    // The restart went on from the stored cursor: the first batch's thread was not asked again.
    const asked = await inTestThread(
      await threadStub(agent, sessions[first]!.threadId),
      (instance) => instance.rechecks.asked,
    );
    expect(asked).toBe(1);
  });

  it("a thread whose first ask failed is asked again, and its socket closes 4403", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    await activityMarked(agent.tenantId, [session.threadId]);
    const thread = await threadStub(agent, session.threadId);
    await inTestThread(thread, (instance) => {
      instance.rechecks.failNext = 1;
    });

    await disableByApi(agent);
    expect(await ws.waitClosed(10_000)).toEqual({ code: 4403, reason: "agent disabled" });
    expect(await inTestThread(thread, (instance) => instance.rechecks.asked)).toBe(2);
  });
});
