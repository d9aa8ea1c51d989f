// The thread object owns who may use it: its owner (recorded from the first request proving it, src/auth/owner-proof.ts),
// its erasure tombstone, and the one-time registry read of a thread resumed before its first request or launched
// before owners were recorded. The registry is no longer the authority.
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
  it("records its owner from the first request with the launch's token, and never admits another subject", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const { claims } = readToken(session.token);
    // Before the thread's first request: another subject's correctly signed token, the launch's proof kept, is refused
    // on HTTP and on the upgrade, and records nothing.
    const other = await forgeToken({ claims: { ...claims, sub: "vis_someone_else" } });
    await expectError(await threadGet(session.threadId, other), 401, "unauthenticated");
    expect((await upgradeRequest(session.threadId, { token: other })).status).toBe(401);
    expect(await ownership(agent, session.threadId)).toEqual({
      owner: undefined,
      erasedAt: undefined,
      pinned: 0,
    });
    // The same claims reaching the object directly: it checks the proof itself.
    const stub = await threadStub(agent, session.threadId);
    const direct = {
      tenantId: agent.tenantId,
      environment: "development" as const,
      agentId: agent.agentId,
      threadId: session.threadId,
      sub: "vis_someone_else",
      subjectKind: "visitor" as const,
      ownerProof: String(claims.ownerProof),
    };
    expect(await stub.threadInfo(direct)).toMatchObject({ ok: false, code: "unauthenticated" });
    expect(await ownership(agent, session.threadId)).toMatchObject({ owner: undefined, pinned: 0 });

    // The owner's own token works and makes its subject the owner.
    expect((await threadGet(session.threadId, session.token)).status).toBe(200);
    expect(await ownership(agent, session.threadId)).toEqual({
      owner: claims.sub,
      erasedAt: undefined,
      pinned: 1,
    });
    // From then on no other subject gets in, with or without a proof.
    const { ownerProof: _proof, ...unproven } = claims;
    for (const token of [other, await forgeToken({ claims: { ...unproven, sub: "vis_someone_else" } })]) {
      await expectError(await threadGet(session.threadId, token), 401, "unauthenticated");
    }
    expect((await threadGet(session.threadId, session.token)).status).toBe(200);
  });

  it("learns a thread's owner from the registry when it is resumed before its first request", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const { claims } = readToken(session.token);
    // A resume launch's token carries no proof: the object, never reached yet, asks the registry once.
    const { ownerProof: _proof, ...unproven } = claims;
    const other = await forgeToken({ claims: { ...unproven, sub: "vis_someone_else" } });
    await expectError(await threadGet(session.threadId, other), 401, "unauthenticated");
    expect(await ownership(agent, session.threadId)).toEqual({
      owner: claims.sub,
      erasedAt: undefined,
      pinned: 0,
    });
    const resumed = await launch(agent.publicKey, {
      threadId: session.threadId,
      visitorToken: session.visitorToken,
    });
    expect(resumed.threadId).toBe(session.threadId);
    const again = await connect(resumed);
    again.ws.close();
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
    // Its tokens carry no owner proof either.
    const { ownerProof: _proof, ...claims } = readToken(session.token).claims;
    const other = await forgeToken({ claims: { ...claims, sub: "vis_someone_else" } });
    await expectError(await threadGet(session.threadId, other), 401, "unauthenticated");
    expect((await ownership(agent, session.threadId)).owner).toBe(claims.sub);
    const again = await connect(session);
    again.ws.close();
  });
});
