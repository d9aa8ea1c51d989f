// Seeds the bench tenant and its public agent (local model, 20 chunks, no delay) into the product Worker.
import { AdminClient, OperatorClient } from "agent-threads/client";
import { describeClientError } from "../../scripts/lib/http-client.mjs";

export const BENCH_CHUNKS = 20;

/** Returns `{apiKey, tenantId, agentId, publicKey, origin}`. */
export async function seedBenchAgent(baseUrl, operatorToken) {
  try {
    return await seed(baseUrl, operatorToken);
  } catch (error) {
    throw new Error(`Seeding the bench agent failed: ${describeClientError(error)}`);
  }
}

async function seed(baseUrl, operatorToken) {
  const tenant = await new OperatorClient({ baseUrl, operatorToken }).createTenant("Bench");
  const admin = new AdminClient({ baseUrl, apiKey: tenant.apiKey });
  const origin = baseUrl;
  const agent = await admin.agents.create({
    slug: "bench",
    name: "Bench agent",
    visibility: "public",
    allowedOrigins: [origin],
  });
  const draft = await admin.drafts.put(
    agent.id,
    {
      schemaVersion: 1,
      name: "Bench agent",
      instructions: "Echo the visitor.",
      model: { provider: "local", model: "echo", local: { chunks: BENCH_CHUNKS, chunkDelayMs: 0 } },
      // 20 turns per thread in well under a minute is the load itself, not abuse.
      limits: { maxSendsPerMinute: 1000 },
    },
    0,
  );
  const version = await admin.versions.publish(agent.id, draft.revision);
  const release = await admin.releases.create(agent.id, {
    environment: "development",
    allocations: [{ version: version.version, weight: 10_000 }],
  });
  await admin.releases.activate(agent.id, release.id);
  return {
    apiKey: tenant.apiKey,
    tenantId: tenant.tenantId,
    agentId: agent.id,
    publicKey: agent.publicKey,
    origin,
  };
}
