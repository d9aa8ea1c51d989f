import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { decryptTenantSecret } from "../../src/auth/secret-box";
import {
  agentResponse,
  apiKeyResponse,
  draftResponse,
  listResponse,
  releaseResponse,
} from "../../src/shared/api";
import {
  api,
  countRows,
  createApiKey,
  createPublishedAgent,
  createRelease,
  createTenant,
  expectError,
  json,
  type TestTenant,
  validArtifact,
} from "../helpers/tenants";

const TABLES = [
  "agents",
  "agent_drafts",
  "agent_versions",
  "releases",
  "release_allocations",
  "active_releases",
  "api_keys",
  "tenant_secrets",
];

async function snapshot(owner: TestTenant, agentId: string) {
  const read = async (path: string) => {
    const res = await api(path, { key: owner.apiKey });
    expect(res.status).toBe(200);
    return { etag: res.headers.get("ETag"), body: await res.json() };
  };
  return {
    agent: await read(`/v1/agents/${agentId}`),
    draft: await read(`/v1/agents/${agentId}/draft`),
    versions: await read(`/v1/agents/${agentId}/versions`),
    version: await read(`/v1/agents/${agentId}/versions/1`),
    releases: await read(`/v1/agents/${agentId}/releases`),
    keys: await read("/v1/api-keys"),
    secrets: await read("/v1/secrets"),
    rows: await Promise.all(TABLES.map((t) => countRows(t, owner.tenantId))),
  };
}

describe("tenant isolation in the admin API", () => {
  it("answers every attempt on another tenant's objects with 404 and changes nothing", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const { agent } = await createPublishedAgent(b.apiKey);
    const release = await createRelease(b.apiKey, agent.id, [{ version: 1, weight: 10_000 }]);
    await json(
      await api(`/v1/agents/${agent.id}/releases/${release.id}/activate`, { method: "POST", key: b.apiKey }),
      200,
      releaseResponse,
    );
    const bKey = await createApiKey(b, "read");
    await api("/v1/secrets/provider", { method: "PUT", key: b.apiKey, body: { value: "b-secret" } });
    const before = await snapshot(b, agent.id);

    const attempts: [string, string, unknown?, Record<string, string>?][] = [
      ["GET", `/v1/agents/${agent.id}`],
      ["PATCH", `/v1/agents/${agent.id}`, { name: "Hijacked", status: "disabled", rotatePublicKey: true }],
      ["GET", `/v1/agents/${agent.id}/draft`],
      ["PUT", `/v1/agents/${agent.id}/draft`, validArtifact({ name: "Hijacked" }), { "If-Match": '"1"' }],
      ["PUT", `/v1/agents/${agent.id}/draft`, validArtifact({ name: "Hijacked" }), { "If-Match": '"0"' }],
      ["GET", `/v1/agents/${agent.id}/versions`],
      ["GET", `/v1/agents/${agent.id}/versions/1`],
      ["POST", `/v1/agents/${agent.id}/versions`, { draftRevision: 1 }],
      ["GET", `/v1/agents/${agent.id}/releases`],
      ["GET", `/v1/agents/${agent.id}/releases/${release.id}`],
      [
        "POST",
        `/v1/agents/${agent.id}/releases`,
        { environment: "development", allocations: [{ version: 1, weight: 10_000 }] },
      ],
      ["POST", `/v1/agents/${agent.id}/releases/${release.id}/activate`],
      ["GET", `/v1/api-keys/${bKey.id}`],
      ["DELETE", `/v1/api-keys/${bKey.id}`],
      ["DELETE", "/v1/secrets/provider"],
    ];
    for (const [method, path, body, headers] of attempts) {
      const res = await api(path, { method, key: a.apiKey, body, headers: headers ?? {} });
      await expectError(res, 404, "not_found");
    }

    // A's own lists show nothing of B.
    const aAgents = await json(await api("/v1/agents", { key: a.apiKey }), 200, listResponse(agentResponse));
    expect(aAgents.items).toEqual([]);
    const aKeys = await json(await api("/v1/api-keys", { key: a.apiKey }), 200, listResponse(apiKeyResponse));
    expect(aKeys.items.map((k) => k.id)).not.toContain(bKey.id);

    // Re-read as B: every object is exactly as it was.
    expect(await snapshot(b, agent.id)).toEqual(before);
    expect((await api("/v1/agents", { key: bKey.apiKey })).status).toBe(200);
    expect(await decryptTenantSecret(env, b.tenantId, "provider")).toBe("b-secret");
    expect(await countRows("agents", a.tenantId)).toBe(0);
    expect(await countRows("tenant_secrets", a.tenantId)).toBe(0);
  });

  it("answers another tenant's agent exactly like one that does not exist", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const { agent } = await createPublishedAgent(b.apiKey);
    const foreign = await expectError(
      await api(`/v1/agents/${agent.id}`, { key: a.apiKey }),
      404,
      "not_found",
    );
    const missing = await expectError(
      await api("/v1/agents/agt_aaaaaaaaaaaaaaaaaaaaaaaaaa", { key: a.apiKey }),
      404,
      "not_found",
    );
    expect({ ...foreign, requestId: "" }).toEqual({ ...missing, requestId: "" });
  });

  it("lets two tenants use the same slug and keeps their drafts apart", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const slug = "support";
    const { agent: aAgent } = await createPublishedAgent(a.apiKey, { slug });
    const { agent: bAgent } = await createPublishedAgent(b.apiKey, { slug });
    expect(aAgent.id).not.toBe(bAgent.id);
    const res = await api(`/v1/agents/${aAgent.id}/draft`, {
      method: "PUT",
      key: a.apiKey,
      headers: { "If-Match": '"1"' },
      body: validArtifact({ name: "A only" }),
    });
    expect(res.status).toBe(200);
    const bDraft = await json(
      await api(`/v1/agents/${bAgent.id}/draft`, { key: b.apiKey }),
      200,
      draftResponse,
    );
    expect(bDraft.revision).toBe(1);
    expect(bDraft.definition.name).toBe("Support");
  });
});
