// Seeds the bench tenant and its public agent (local model, 20 chunks, no delay) into the product Worker.
import { describeError, request } from "../../scripts/lib/http-client.mjs";

export const BENCH_CHUNKS = 20;

async function expect(res, statuses, what) {
  if (!statuses.includes(res.status)) throw new Error(`${what} failed: ${describeError(res)}`);
  return res.body;
}

/** Returns `{apiKey, tenantId, agentId, publicKey, origin}`. */
export async function seedBenchAgent(baseUrl, operatorToken) {
  const tenant = await expect(
    await request(baseUrl, "POST", "/v1/operator/tenants", { token: operatorToken, body: { name: "Bench" } }),
    [201],
    "Creating the bench tenant",
  );
  const token = tenant.apiKey;
  const origin = baseUrl;
  const agent = await expect(
    await request(baseUrl, "POST", "/v1/agents", {
      token,
      body: { slug: "bench", name: "Bench agent", visibility: "public", allowedOrigins: [origin] },
    }),
    [201],
    "Creating the bench agent",
  );
  const path = `/v1/agents/${agent.id}`;
  const draft = await expect(
    await request(baseUrl, "PUT", `${path}/draft`, {
      token,
      headers: { "If-Match": '"0"' },
      body: {
        schemaVersion: 1,
        name: "Bench agent",
        instructions: "Echo the visitor.",
        model: { provider: "local", model: "echo", local: { chunks: BENCH_CHUNKS, chunkDelayMs: 0 } },
        // 20 turns per thread in well under a minute is the load itself, not abuse.
        limits: { maxSendsPerMinute: 1000 },
      },
    }),
    [200, 201],
    "Saving the bench draft",
  );
  const version = await expect(
    await request(baseUrl, "POST", `${path}/versions`, { token, body: { draftRevision: draft.revision } }),
    [201],
    "Publishing the bench version",
  );
  const release = await expect(
    await request(baseUrl, "POST", `${path}/releases`, {
      token,
      body: { environment: "development", allocations: [{ version: version.version, weight: 10_000 }] },
    }),
    [201],
    "Creating the bench release",
  );
  await expect(
    await request(baseUrl, "POST", `${path}/releases/${release.id}/activate`, { token }),
    [200, 204],
    "Activating the bench release",
  );
  return { apiKey: token, tenantId: tenant.tenantId, agentId: agent.id, publicKey: agent.publicKey, origin };
}
