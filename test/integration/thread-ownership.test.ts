// The thread object owns who may use it: its owner (recorded at launch), its erasure tombstone, and the one-time
// registry read of a thread launched before owners were recorded. The registry is no longer the authority.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { readToken } from "../helpers/edge-gate";
import { converse, launchFor, threadStub } from "../helpers/projection";
import { api, expectError } from "../helpers/tenants";
import { connect, type LiveAgent, launch, liveAgent, ORIGIN, upgradeRequest } from "../helpers/threads";
import { forgeToken } from "../helpers/tokens";
import { waitFor } from "../helpers/wait-for";

/** What the object itself holds about its owner and state. */
async function ownership(agent: LiveAgent, threadId: string) {
  return runInDurableObject(await threadStub(agent, threadId), (_i, state) => ({
    owner: state.storage.sql
      .exec("SELECT value FROM meta WHERE key = 'owner_subject'")
      .toArray()
      .map((row) => String(row.value))[0],
    erasedAt: state.storage.kv.get("thread_erased_at"),
    pinned: Number(state.storage.sql.exec("SELECT COUNT(*) AS n FROM pin").one().n),
  }));
}

const threadGet = (threadId: string, token: string) =>
  api(`/v1/threads/${threadId}`, { headers: { Authorization: `Bearer ${token}`, Origin: ORIGIN } });

describe("the thread's own facts", () => {
  it("records its owner at launch, before any connect, and refuses another subject's signed token", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const { claims } = readToken(session.token);
    expect(await ownership(agent, session.threadId)).toEqual({
      owner: claims.sub,
      erasedAt: undefined,
      pinned: 0,
    });
    const other = await forgeToken({ claims: { ...claims, sub: "vis_someone_else" } });
    await expectError(await threadGet(session.threadId, other), 401, "unauthenticated");
    const upgrade = await upgradeRequest(session.threadId, { token: other });
    expect(upgrade.status).toBe(401);
    // The owner's own token still works, and the refusal bound nothing.
    expect(await ownership(agent, session.threadId)).toMatchObject({ pinned: 0 });
    expect((await threadGet(session.threadId, session.token)).status).toBe(200);
  });

  it("keeps an erasure tombstone without subject or content that a restored registry row cannot undo", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const session = await launchFor(agent, "user-erased");
    await converse(session, ["something private"]);
    expect(
      (await api(`/v1/sessions/${session.threadId}`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);
    const after = await waitFor(
      () => ownership(agent, session.threadId),
      (state) => typeof state.erasedAt === "number",
      { what: "the erased thread's tombstone" },
    );
    expect(after).toEqual({ owner: undefined, erasedAt: expect.any(Number), pinned: 0 });

    // D1 restored from an older copy brings the registry row back live: the thread itself still says erased.
    await env.DB.prepare("UPDATE threads SET deleted_at = NULL, subject = ? WHERE tenant_id = ? AND id = ?")
      .bind("user-erased", agent.tenantId, session.threadId)
      .run();
    await expectError(
      await api(`/v1/threads/${session.threadId}`, { headers: { Authorization: `Bearer ${session.token}` } }),
      401,
      "unauthenticated",
    );
    const upgrade = await upgradeRequest(session.threadId, { token: session.token, origin: null });
    expect(upgrade.status).toBe(401);
    await expectError(
      await api("/v1/agent-sessions", {
        method: "POST",
        key: agent.apiKey,
        body: { agentId: agent.agentId, subject: "user-erased", threadId: session.threadId },
      }),
      404,
      "not_found",
    );
    expect(await ownership(agent, session.threadId)).toEqual({
      owner: undefined,
      erasedAt: after.erasedAt,
      pinned: 0,
    });
  });

  it("learns the owner of a thread launched before owners were recorded from the registry, once", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const first = await connect(session);
    first.ws.close();
    // As a thread bound by an earlier build: pinned, no owner recorded.
    await runInDurableObject(await threadStub(agent, session.threadId), (_i, state) => {
      state.storage.sql.exec("DELETE FROM meta WHERE key LIKE 'owner_%'");
    });
    const { claims } = readToken(session.token);
    const other = await forgeToken({ claims: { ...claims, sub: "vis_someone_else" } });
    await expectError(await threadGet(session.threadId, other), 401, "unauthenticated");
    expect((await ownership(agent, session.threadId)).owner).toBe(claims.sub);
    const again = await connect(session);
    again.ws.close();
  });
});
