// The thread's HTTP routes refuse a launch token whose standing is gone, as open sockets do: a revoked minting `sk_`
// key, a disabled agent or a revoked visitor answer 403 forbidden within the standing cache's bound, nothing started.
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LAUNCH_STANDING_TTL_MS, requireLaunchStanding } from "../../src/auth/launch-standing";
import { type LaunchClaims, verifyLaunchToken } from "../../src/auth/launch-token";
import { visitorHash } from "../../src/auth/visitor-revocation";
import { threadClaimsFrom } from "../../src/thread/contract";
import { privateLaunchRequest } from "../helpers/edge-gate";
import { threadStub } from "../helpers/projection";
import { API, api, createApiKey, expectError, json } from "../helpers/tenants";
import {
  clientMessageId,
  type Launch,
  type LiveAgent,
  launch,
  launchResponse,
  liveAgent,
  ORIGIN,
} from "../helpers/threads";

const threadInfo = z.object({ threadId: z.string() });

/** A thread HTTP request with the launch token; `origin` for a public agent's page. */
function threadRequest(
  session: Launch,
  path = "",
  init: { method?: string; body?: unknown; origin?: string } = {},
): Promise<Response> {
  return exports.default.fetch(`${API}/v1/threads/${session.threadId}${path}`, {
    method: init.method ?? "GET",
    headers: {
      Authorization: `Bearer ${session.token}`,
      ...(init.origin !== undefined ? { Origin: init.origin } : {}),
      ...(init.body !== undefined ? { "Content-Type": "application/json" } : {}),
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
}

async function claimsOf(session: Launch): Promise<LaunchClaims> {
  const verified = await verifyLaunchToken(env, session.token);
  if (!verified.ok) throw new Error("the launch token does not verify");
  return verified.claims;
}

/** The thread's entries as its object holds them, read past the edge. */
async function storedEntries(agent: LiveAgent, session: Launch): Promise<unknown[]> {
  const stub = await threadStub(agent, session.threadId);
  const page = await stub.threadEntries(threadClaimsFrom(await claimsOf(session)), {});
  if (!page.ok) throw new Error(`entries unreadable: ${page.code}`);
  return page.value.items;
}

/** Another isolate's standing cache, one TTL later: the test clock at which a change elsewhere must be seen. */
async function oneTtlLater(session: Launch): Promise<void> {
  await requireLaunchStanding(env, await claimsOf(session), Date.now() + LAUNCH_STANDING_TTL_MS).catch(
    () => {},
  );
}

async function privateSession(agent: LiveAgent, apiKey: string, subject: string): Promise<Launch> {
  return json(await privateLaunchRequest(apiKey, { agentId: agent.agentId, subject }), 201, launchResponse);
}

describe("launch tokens on the thread's HTTP routes", () => {
  it("keeps the bound the docs state: a standing is read again at most 5 s after it was read", () => {
    expect(LAUNCH_STANDING_TTL_MS).toBeLessThanOrEqual(5_000);
  });

  it("answers from this isolate's cache for one TTL, then reads again: a change elsewhere is seen within it", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const claims = await claimsOf(session);
    const t0 = Date.now();
    await requireLaunchStanding(env, claims, t0);
    await env.DB.prepare("UPDATE agents SET status = 'disabled' WHERE tenant_id = ? AND id = ?")
      .bind(agent.tenantId, agent.agentId)
      .run();
    await requireLaunchStanding(env, claims, t0 + LAUNCH_STANDING_TTL_MS - 1);
    await expect(requireLaunchStanding(env, claims, t0 + LAUNCH_STANDING_TTL_MS)).rejects.toMatchObject({
      code: "forbidden",
      message: "This agent is disabled.",
    });
  });

  it("refuses a revoked key's token at once (GET, entries, POST messages with no run), and keeps a live key's", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const tenant = { tenantId: agent.tenantId, apiKey: agent.apiKey };
    const minting = await createApiKey(tenant, "admin");
    const session = await privateSession(agent, minting.apiKey, "user-revoked-key");
    const other = await privateSession(agent, agent.apiKey, "user-live-key");
    expect(await json(await threadRequest(session), 200, threadInfo)).toMatchObject({
      threadId: session.threadId,
    });
    expect((await threadRequest(other)).status).toBe(200);

    expect((await api(`/v1/api-keys/${minting.id}`, { method: "DELETE", key: agent.apiKey })).status).toBe(
      204,
    );

    const refused = await expectError(await threadRequest(session), 403, "forbidden");
    expect(refused.message).toBe(
      "The API key that launched this thread was revoked; launch again with a live key.",
    );
    await expectError(await threadRequest(session, "/entries"), 403, "forbidden");
    const message = { clientMessageId: clientMessageId(), text: "still there?" };
    await expectError(
      await threadRequest(session, "/messages", { method: "POST", body: message }),
      403,
      "forbidden",
    );
    const sse = await exports.default.fetch(`${API}/v1/threads/${session.threadId}/messages`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${session.token}`,
        Accept: "text/event-stream",
        "Content-Type": "application/json",
      },
      body: JSON.stringify({ clientMessageId: clientMessageId(), text: "streamed?" }),
    });
    await expectError(sse, 403, "forbidden");
    expect(await storedEntries(agent, session)).toEqual([]);

    // A launch by a key still live reads and writes on.
    expect((await threadRequest(other)).status).toBe(200);
    const sent = await threadRequest(other, "/messages", {
      method: "POST",
      body: { clientMessageId: clientMessageId(), text: "hello" },
    });
    expect(sent.status).toBe(201);
  });

  it("refuses a key revoked in another isolate once one cache TTL has passed", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const minting = await createApiKey({ tenantId: agent.tenantId, apiKey: agent.apiKey }, "admin");
    const session = await privateSession(agent, minting.apiKey, "user-elsewhere");
    expect((await threadRequest(session)).status).toBe(200);
    // Revoked in D1 directly: this isolate is not told.
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE tenant_id = ? AND id = ?")
      .bind(new Date().toISOString(), agent.tenantId, minting.id)
      .run();
    await oneTtlLater(session);
    await expectError(await threadRequest(session), 403, "forbidden");
  });

  it("refuses a public token once its agent is disabled elsewhere, while the gate's own cache still says active", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    expect((await threadRequest(session, "", { origin: ORIGIN })).status).toBe(200);
    await env.DB.prepare("UPDATE agents SET status = 'disabled' WHERE tenant_id = ? AND id = ?")
      .bind(agent.tenantId, agent.agentId)
      .run();
    await oneTtlLater(session);
    const refused = await expectError(await threadRequest(session, "", { origin: ORIGIN }), 403, "forbidden");
    expect(refused.message).toBe("This agent is disabled.");
    await expectError(
      await threadRequest(session, "/messages", {
        method: "POST",
        origin: ORIGIN,
        body: { clientMessageId: clientMessageId(), text: "anyone?" },
      }),
      403,
      "forbidden",
    );
    expect(await storedEntries(agent, session)).toEqual([]);
  });

  it("refuses a revoked visitor's token; another visitor of the agent goes on", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    const bystander = await launch(agent.publicKey);
    expect((await threadRequest(session, "", { origin: ORIGIN })).status).toBe(200);
    const claims = await claimsOf(session);
    const now = new Date();
    await env.DB.prepare(
      "INSERT INTO revoked_visitors (tenant_id, visitor_hash, revoked_at, expires_at) VALUES (?, ?, ?, ?)",
    )
      .bind(
        agent.tenantId,
        await visitorHash(env, agent.tenantId, claims.sub),
        now.toISOString(),
        new Date(now.getTime() + 3_600_000).toISOString(),
      )
      .run();
    await oneTtlLater(session);
    const refused = await expectError(await threadRequest(session, "", { origin: ORIGIN }), 403, "forbidden");
    expect(refused.message).toBe("This visitor's access was revoked; launch again.");
    expect((await threadRequest(bystander, "", { origin: ORIGIN })).status).toBe(200);
  });
});
