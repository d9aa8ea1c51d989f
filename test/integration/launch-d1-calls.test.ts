// A warm launch's D1 calls: a browser's new thread writes its registry row and reads nothing; a backend's also reads
// its `sk_` key, which is checked exactly (docs/decisions.md, "Launch latency"). The caches that make it so still
// follow an agent's changes at once in the isolate that made them.
import { describe, expect, it } from "vitest";
import { countingD1, fetchWithDb } from "../helpers/d1-proxy";
import { privateLaunchRequest } from "../helpers/edge-gate";
import { api, expectError, json } from "../helpers/tenants";
import { freshIp, launchResponse, liveAgent, ORIGIN } from "../helpers/threads";

const publicLaunch = (agentKey: string): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": "application/json", Origin: ORIGIN, "CF-Connecting-IP": freshIp() },
  body: JSON.stringify({ agentKey }),
});

const backendLaunch = (apiKey: string, agentId: string): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": "application/json", Authorization: `Bearer ${apiKey}` },
  body: JSON.stringify({ agentId, subject: "alice" }),
});

describe("D1 calls on the launch path", () => {
  it("a browser's repeat launch in a warm isolate writes the registry row and reads nothing", async () => {
    const agent = await liveAgent();
    const d1 = countingD1();
    const first = await fetchWithDb(d1.db, "/v1/agent-sessions", publicLaunch(agent.publicKey));
    await json(first, 201, launchResponse);
    d1.reset();
    const again = await fetchWithDb(d1.db, "/v1/agent-sessions", publicLaunch(agent.publicKey));
    // The presentation is still answered: from the isolate's caches.
    expect(await again.clone().json()).toHaveProperty("presentation");
    await json(again, 201, launchResponse);
    expect(d1.calls).toEqual(["prepare:INSERT"]);
  });

  it("a backend's repeat launch by agent id reads only its API key", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const d1 = countingD1();
    await json(
      await fetchWithDb(d1.db, "/v1/agent-sessions", backendLaunch(agent.apiKey, agent.agentId)),
      201,
      launchResponse,
    );
    d1.reset();
    await json(
      await fetchWithDb(d1.db, "/v1/agent-sessions", backendLaunch(agent.apiKey, agent.agentId)),
      201,
      launchResponse,
    );
    expect(d1.calls).toEqual(["prepare:SELECT", "prepare:INSERT"]);
  });

  it("refuses a backend's launch of an agent disabled in this isolate at once, though its look-up is cached", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const launchIt = () => privateLaunchRequest(agent.apiKey, { agentId: agent.agentId, subject: "alice" });
    expect((await launchIt()).status).toBe(201);
    const patched = await api(`/v1/agents/${agent.agentId}`, {
      method: "PATCH",
      key: agent.apiKey,
      body: { status: "disabled" },
    });
    expect(patched.status).toBe(200);
    await expectError(await launchIt(), 401, "unauthenticated");
  });
});
