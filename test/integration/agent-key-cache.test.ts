// Launches read agents through the isolate cache; a PATCH through the API must take effect on the very next launch.
import { describe, expect, it } from "vitest";
import { api, expectError } from "../helpers/tenants";
import { launch, launchRequest, liveAgent } from "../helpers/threads";

async function patchAgent(agent: { agentId: string; apiKey: string }, body: Record<string, unknown>) {
  const res = await api(`/v1/agents/${agent.agentId}`, { method: "PATCH", key: agent.apiKey, body });
  expect(res.status).toBe(200);
  return (await res.json()) as { publicKey: string; status: string };
}

describe("agent key cache and agent changes", () => {
  it("refuses a key at once after its agent is disabled, although the agent was just read", async () => {
    const agent = await liveAgent();
    await launch(agent.publicKey);
    expect((await patchAgent(agent, { status: "disabled" })).status).toBe("disabled");
    await expectError(await launchRequest({ agentKey: agent.publicKey }), 401, "unauthenticated");

    await patchAgent(agent, { status: "active" });
    await launch(agent.publicKey);
  });

  it("refuses the old key and accepts the new one at once after a rotation", async () => {
    const agent = await liveAgent();
    await launch(agent.publicKey);
    const { publicKey } = await patchAgent(agent, { rotatePublicKey: true });
    expect(publicKey).not.toBe(agent.publicKey);
    await expectError(await launchRequest({ agentKey: agent.publicKey }), 401, "unauthenticated");
    await launch(publicKey);
  });

  it("applies a new origin list at once", async () => {
    const agent = await liveAgent();
    await launch(agent.publicKey);
    await patchAgent(agent, { allowedOrigins: ["https://elsewhere.test"] });
    await expectError(await launchRequest({ agentKey: agent.publicKey }), 403, "forbidden");
  });
});
