// Refresh without relaunch: a connected socket asks its thread for a new launch token (`refresh` → `token`), minted
// after the thread admitted the socket's claims again: no launch, no launch quota, no new registry row.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { verifyLaunchToken } from "../../src/auth/launch-token";
import { tenantQuota } from "../../src/auth/tenant-quota";
import { allThreadRows, readToken } from "../helpers/edge-gate";
import { api, expectError } from "../helpers/tenants";
import { connect, launch, liveAgent, ORIGIN } from "../helpers/threads";

describe("token refresh on the socket", () => {
  it("answers refresh with a new token for the same thread, subject and origin, costing no launch", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const ws = await connect(session);
    const launches = await tenantQuota(env, agent.tenantId).usage("launches");
    const rows = await allThreadRows();

    ws.send({ type: "refresh" });
    const frame = await ws.next("token");
    expect(Date.parse(frame.expiresAt)).toBeGreaterThan(Date.now());
    const verified = await verifyLaunchToken(env, frame.token);
    if (!verified.ok) expect.fail(`refreshed token refused: ${verified.reason}`);
    const before = readToken(session.token).claims;
    expect(verified.claims).toMatchObject({
      tenantId: agent.tenantId,
      agentId: agent.agentId,
      threadId: session.threadId,
      sub: before.sub,
      origin: ORIGIN,
      subjectKind: "visitor",
    });
    expect(verified.claims.jti).not.toBe(before.jti);
    expect(await tenantQuota(env, agent.tenantId).usage("launches")).toBe(launches);
    expect(await allThreadRows()).toBe(rows);

    // The new token opens the thread over HTTP and on a second socket; it still works only from its origin.
    const headers = { Authorization: `Bearer ${frame.token}`, Origin: ORIGIN };
    expect((await api(`/v1/threads/${session.threadId}`, { headers })).status).toBe(200);
    const second = await connect({ threadId: session.threadId, token: frame.token });
    second.ws.close();
    await expectError(
      await api(`/v1/threads/${session.threadId}`, {
        headers: { ...headers, Origin: "https://elsewhere.example.com" },
      }),
      403,
      "forbidden",
    );
    ws.ws.close();
  });

  it("refuses a refresh frame with extra fields as malformed, and keeps the socket", async () => {
    const agent = await liveAgent();
    const ws = await connect(await launch(agent.publicKey));
    ws.send({ type: "refresh", threadId: "thr_other" });
    const error = await ws.next("error");
    expect(error.code).toBe("bad_request");
    expect(ws.all("token")).toEqual([]);
    ws.send({ type: "ping" });
    await ws.next("pong");
    ws.ws.close();
  });
});
