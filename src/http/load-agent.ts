// Resolves `:agentId` within the caller's tenant; another tenant's agent is simply not found.
import type { AgentEntity } from "../control/deployment-store";
import { errors } from "../errors";
import type { AppContext } from "./context";
import { deploymentStore } from "./store";

const AGENT_ID = /^[A-Za-z0-9_-]{1,128}$/;

export async function loadAgent(c: AppContext): Promise<AgentEntity> {
  const agentId = c.req.param("agentId") ?? "";
  if (!AGENT_ID.test(agentId)) throw errors.notFound("Agent");
  const agent = await deploymentStore(c).getAgent(c.get("tenant").tenantId, agentId);
  if (agent === null) throw errors.notFound("Agent");
  return agent;
}
