// Tenant admin: agents; its tenant middleware also guards the drafts, versions and releases mounted below it.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { invalidateGateAgent } from "../auth/gate-agent-cache";
import { invalidateLaunchStanding } from "../auth/launch-standing";
import type { AgentEntity, AgentPatch } from "../control/deployment-store";
import { base32 } from "../control/ids";
import { fromDatabase, unwrap } from "../errors";
import type { AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { loadAgent } from "../http/load-agent";
import { operation } from "../http/openapi";
import { forgetUnknownOrigins } from "../http/origin-lookup";
import { deploymentStore } from "../http/store";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import { invalidateAgentKeys, invalidateLaunchAgent } from "../services/launch/agent-key-cache";
import { changeReleaseGate } from "../services/release-gate";
import { recheckTenantSockets } from "../services/tenant-disconnect";
import type { AgentResponse } from "../shared/api";
import { agentResponse, createAgentRequest, listResponse, patchAgentRequest } from "../shared/api";
import type { ReleaseGate } from "../shared/evals-api";
import { pageQuery } from "../shared/sessions-api";
import { getReleaseGate } from "../storage/d1/release-gates";

/** `pk_` + 128 random bits: selects an agent, grants nothing. */
export function newPublicKey(): string {
  return `pk_${base32(crypto.getRandomValues(new Uint8Array(16)))}`;
}

export function agentView(agent: AgentEntity): AgentResponse {
  return {
    id: agent.id,
    slug: agent.slug,
    name: agent.name,
    status: agent.status,
    visibility: agent.visibility,
    allowedOrigins: agent.allowedOrigins,
    publicKey: agent.publicKey,
    retention: agent.retention,
    createdAt: agent.createdAt,
    updatedAt: agent.updatedAt,
  };
}

/** The agent's release gate (docs/evals.md#the-release-gate), on the one-agent views, only when it has one. */
const withGate = (view: AgentResponse, gate: ReleaseGate | null): AgentResponse =>
  gate === null ? view : { ...view, releaseGate: gate };

export const agents = new Hono<AppEnv>()
  .use("*", tenantAuth, requireAdminForWrites)
  .post(
    "/",
    describeRoute(
      operation({
        tag: "Agents",
        summary: "Create an agent",
        auth: "tenantKey",
        body: createAgentRequest,
        response: { status: 201, schema: agentResponse },
        errors: [409],
      }),
    ),
    async (c) => {
      const input = await readJson(c, createAgentRequest);
      const agent = unwrap(
        await deploymentStore(c).createAgent(c.get("tenant").tenantId, {
          ...input,
          publicKey: newPublicKey(),
        }),
      );
      forgetUnknownOrigins();
      return c.json(agentView(agent), 201);
    },
  )
  .get(
    "/",
    describeRoute(
      operation({
        tag: "Agents",
        summary: "List agents",
        auth: "tenantKey",
        query: pageQuery,
        response: { status: 200, schema: listResponse(agentResponse) },
        errors: [400],
      }),
    ),
    async (c) => {
      const page = await readPage(c, "agents");
      const result = await deploymentStore(c).listAgents(c.get("tenant").tenantId, page);
      return c.json(await pageBody(c, "agents", result.items.map(agentView), result.next));
    },
  )
  .get(
    "/:agentId",
    describeRoute(
      operation({
        tag: "Agents",
        summary: "Get an agent",
        auth: "tenantKey",
        response: { status: 200, schema: agentResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const agent = await loadAgent(c);
      const releaseGate = await fromDatabase(getReleaseGate(c.env.DB, agent.tenantId, agent.id));
      return c.json(withGate(agentView(agent), releaseGate));
    },
  )
  .patch(
    "/:agentId",
    describeRoute(
      operation({
        tag: "Agents",
        summary:
          "Change an agent (name, status, visibility, origins, retention, release gate, rotate its public key)",
        auth: "tenantKey",
        body: patchAgentRequest,
        response: { status: 200, schema: agentResponse },
        errors: [404, 409],
      }),
    ),
    async (c) => {
      const input = await readJson(c, patchAgentRequest);
      const agent = await loadAgent(c);
      const { rotatePublicKey, releaseGate, ...fields } = input;
      if (releaseGate !== undefined) await changeReleaseGate(c.env, agent, releaseGate);
      const gate = await fromDatabase(getReleaseGate(c.env.DB, agent.tenantId, agent.id));
      const patch: AgentPatch = rotatePublicKey ? { ...fields, publicKey: newPublicKey() } : fields;
      if (Object.keys(patch).length === 0) return c.json(withGate(agentView(agent), gate));
      const updated = unwrap(await deploymentStore(c).updateAgent(agent.tenantId, agent.id, patch));
      invalidateAgentKeys(agent.publicKey, updated.publicKey);
      invalidateLaunchAgent(agent.tenantId, agent.id);
      invalidateGateAgent(agent.tenantId, agent.id);
      invalidateLaunchStanding(agent.tenantId);
      forgetUnknownOrigins();
      // Its open sockets close 4403 within the minute: the round is recorded before this answers (docs/security.md).
      if (patch.status === "disabled")
        await recheckTenantSockets(c.env, agent.tenantId, { agentId: agent.id });
      return c.json(withGate(agentView(updated), gate));
    },
  );
