// The staleness bound of the edge caches, on a test-controlled clock: a change made in another isolate (written to
// D1 directly, so this isolate is not told) is seen within the TTL; the isolate that made a change sees it at once;
// while D1 cannot be read the last answer stands in for a bounded time, then the gate says it cannot tell.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  GATE_AGENT_TTL_MS,
  GATE_STALE_IF_ERROR_MS,
  GATE_UNAVAILABLE,
  gateAgentCached,
  invalidateGateAgent,
} from "../../src/auth/gate-agent-cache";
import { AGENT_KEY_TTL_MS, findLaunchAgentCached } from "../../src/services/launch/agent-key-cache";
import { D1DeploymentStore } from "../../src/storage/d1/d1-deployment-store";
import { failingD1 } from "../helpers/d1-proxy";
import { api, expectError } from "../helpers/tenants";
import { connect, launch, liveAgent, upgradeRequest } from "../helpers/threads";

/** A change another isolate made: straight to D1, no invalidation here. */
const elsewhere = (sql: string, ...values: unknown[]) =>
  env.DB.prepare(sql)
    .bind(...values)
    .run();

const statusOf = async (tenantId: string, agentId: string, now: number) => {
  const found = await gateAgentCached(env.DB, tenantId, agentId, now);
  return found === null || found === GATE_UNAVAILABLE ? found : found.agent.status;
};

describe("gate agent cache", () => {
  it("sees an agent disabled in another isolate within the TTL, not before", async () => {
    const agent = await liveAgent();
    const t0 = Date.now();
    expect(await statusOf(agent.tenantId, agent.agentId, t0)).toBe("active");
    await elsewhere(
      "UPDATE agents SET status = 'disabled' WHERE tenant_id = ? AND id = ?",
      agent.tenantId,
      agent.agentId,
    );
    expect(await statusOf(agent.tenantId, agent.agentId, t0 + GATE_AGENT_TTL_MS - 1)).toBe("active");
    expect(await statusOf(agent.tenantId, agent.agentId, t0 + GATE_AGENT_TTL_MS)).toBe("disabled");
  });

  it("sees a tenant disabled in another isolate within the TTL", async () => {
    const agent = await liveAgent();
    const t0 = Date.now();
    const read = async (now: number) => {
      const found = await gateAgentCached(env.DB, agent.tenantId, agent.agentId, now);
      return found === null || found === GATE_UNAVAILABLE ? found : found.tenantStatus;
    };
    expect(await read(t0)).toBe("active");
    await elsewhere("UPDATE tenants SET status = 'disabled' WHERE id = ?", agent.tenantId);
    expect(await read(t0 + GATE_AGENT_TTL_MS - 1)).toBe("active");
    expect(await read(t0 + GATE_AGENT_TTL_MS)).toBe("disabled");
    await elsewhere("UPDATE tenants SET status = 'active' WHERE id = ?", agent.tenantId);
  });

  it("refuses a socket at once in the isolate that disabled the agent, and after re-enabling accepts it", async () => {
    const agent = await liveAgent();
    const session = await launch(agent.publicKey);
    (await connect(session)).ws.close();
    const patch = (status: string) =>
      api(`/v1/agents/${agent.agentId}`, { method: "PATCH", key: agent.apiKey, body: { status } });
    expect((await patch("disabled")).status).toBe(200);
    await expectError(await upgradeRequest(session.threadId, { token: session.token }), 403, "forbidden");
    expect((await patch("active")).status).toBe(200);
    (await connect(session)).ws.close();
  });

  it("while D1 fails, answers with the last value for a bounded time, then says it cannot tell", async () => {
    const agent = await liveAgent();
    invalidateGateAgent(agent.tenantId, agent.agentId);
    const t0 = Date.now();
    expect(await statusOf(agent.tenantId, agent.agentId, t0)).toBe("active");
    const down = failingD1();
    const afterTtl = await gateAgentCached(down, agent.tenantId, agent.agentId, t0 + GATE_AGENT_TTL_MS + 1);
    expect(afterTtl === null || afterTtl === GATE_UNAVAILABLE ? afterTtl : afterTtl.agent.status).toBe(
      "active",
    );
    expect(await gateAgentCached(down, agent.tenantId, agent.agentId, t0 + GATE_STALE_IF_ERROR_MS)).toBe(
      GATE_UNAVAILABLE,
    );
    // D1 back: the next read is fresh again.
    expect(await statusOf(agent.tenantId, agent.agentId, t0 + GATE_STALE_IF_ERROR_MS + 1)).toBe("active");
  });

  it("stops launching with a key rotated in another isolate within the TTL", async () => {
    const agent = await liveAgent();
    const store = new D1DeploymentStore(env.DB);
    const t0 = Date.now();
    const found = (now: number) => findLaunchAgentCached(store, agent.publicKey, "development", now);
    expect((await found(t0))?.agent.id).toBe(agent.agentId);
    await elsewhere(
      "UPDATE agents SET public_key = ? WHERE tenant_id = ? AND id = ?",
      `pk_rotated${crypto.randomUUID().replaceAll("-", "")}`,
      agent.tenantId,
      agent.agentId,
    );
    expect((await found(t0 + AGENT_KEY_TTL_MS - 1))?.agent.id).toBe(agent.agentId);
    expect(await found(t0 + AGENT_KEY_TTL_MS)).toBeNull();
  });
});
