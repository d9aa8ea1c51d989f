import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { agentResponse, releaseResponse } from "../../src/shared/api";
import {
  api,
  countRows,
  createApiKey,
  createPublishedAgent,
  createTenant,
  expectError,
  json,
  unique,
  validArtifact,
} from "../helpers/tenants";

/** The error body without its per-request id: what must be identical across every 401. */
async function unauthenticatedBody(res: Response) {
  const error = await expectError(res, 401, "unauthenticated");
  const { requestId: _requestId, ...rest } = error;
  return rest;
}

describe("tenant API key authentication", () => {
  it("answers every bad key with the same 401 body", async () => {
    const tenant = await createTenant();
    const { id: revokedId, apiKey: revokedKey } = await createApiKey(tenant, "admin");
    await api(`/v1/api-keys/${revokedId}`, { method: "DELETE", key: tenant.apiKey });
    const [, id, secret] = /^sk_([a-z2-7]+)_([a-z2-7]+)$/.exec(tenant.apiKey)!;
    const wrongSecret = `sk_${id}_${secret!.slice(0, -1)}${secret!.endsWith("a") ? "b" : "a"}`;
    const unknownId = `sk_${"a".repeat(26)}_${secret}`;

    const attempts: Record<string, string>[] = [
      {},
      { Authorization: "" },
      { Authorization: "Bearer" },
      { Authorization: "Bearer " },
      { Authorization: "Bearer abc" },
      { Authorization: `Bearer ${tenant.apiKey.toUpperCase()}` },
      { Authorization: `Bearer ${tenant.apiKey}x` },
      { Authorization: `Token ${tenant.apiKey}` },
      { Authorization: `Basic ${btoa(`${tenant.apiKey}:`)}` },
      { Authorization: tenant.apiKey },
      { Authorization: `Bearer ${"sk_".padEnd(10_000, "a")}` },
      { Authorization: "Bearer ' OR 1=1 --" },
      { Authorization: `Bearer ${unknownId}` },
      { Authorization: `Bearer ${wrongSecret}` },
      { Authorization: `Bearer ${revokedKey}` },
      { Authorization: `Bearer ${env.OPERATOR_TOKEN}` },
      { Authorization: "Bearer sk_\u00e9\u00e9" },
    ];
    const bodies = [];
    for (const headers of attempts)
      bodies.push(await unauthenticatedBody(await api("/v1/agents", { headers })));
    for (const body of bodies) expect(body).toEqual(bodies[0]);
    expect(bodies[0]!.message).not.toContain("sk_");
  });

  it("refuses every key of a disabled tenant with the same 401", async () => {
    const tenant = await createTenant();
    const ok = await api("/v1/agents", { key: tenant.apiKey });
    expect(ok.status).toBe(200);
    await env.DB.prepare("UPDATE tenants SET status = 'disabled' WHERE id = ?").bind(tenant.tenantId).run();
    await expectError(await api("/v1/agents", { key: tenant.apiKey }), 401, "unauthenticated");
  });

  it("accepts the scheme in any case", async () => {
    const tenant = await createTenant();
    const res = await api("/v1/agents", { headers: { Authorization: `bearer ${tenant.apiKey}` } });
    expect(res.status).toBe(200);
  });

  it("refuses a wrong-secret key on writes too, and nothing is written", async () => {
    const tenant = await createTenant();
    const [, id] = /^sk_([a-z2-7]+)_/.exec(tenant.apiKey)!;
    const forged = `sk_${id}_${"b".repeat(52)}`;
    const res = await api("/v1/agents", {
      method: "POST",
      key: forged,
      body: { slug: unique("a"), name: "x", visibility: "public", allowedOrigins: [] },
    });
    await expectError(res, 401, "unauthenticated");
    expect(await countRows("agents", tenant.tenantId)).toBe(0);
  });

  it("guards an agent's draft, versions and releases like the agent itself", async () => {
    const tenant = await createTenant();
    const { agent } = await createPublishedAgent(tenant.apiKey);
    for (const path of ["draft", "versions", "releases"]) {
      await expectError(await api(`/v1/agents/${agent.id}/${path}`), 401, "unauthenticated");
    }
  });
});

describe("read-only API keys", () => {
  it("may read but every write is 403 and changes nothing", async () => {
    const tenant = await createTenant();
    const { agent } = await createPublishedAgent(tenant.apiKey);
    const reader = await createApiKey(tenant, "read");
    const key = reader.apiKey;

    expect((await api("/v1/agents", { key })).status).toBe(200);
    expect((await api(`/v1/agents/${agent.id}`, { key })).status).toBe(200);
    expect((await api(`/v1/agents/${agent.id}/draft`, { key })).status).toBe(200);
    expect((await api(`/v1/agents/${agent.id}/versions`, { key })).status).toBe(200);
    expect((await api(`/v1/agents/${agent.id}/releases`, { key })).status).toBe(200);
    expect((await api("/v1/api-keys", { key })).status).toBe(200);
    expect((await api("/v1/secrets", { key })).status).toBe(200);

    const counts = async () =>
      Promise.all(
        ["agents", "agent_drafts", "agent_versions", "releases", "api_keys", "tenant_secrets"].map((t) =>
          countRows(t, tenant.tenantId),
        ),
      );
    const before = await counts();
    const writes: [string, string, unknown, Record<string, string>?][] = [
      ["POST", "/v1/agents", { slug: unique("a"), name: "x", visibility: "public", allowedOrigins: [] }],
      ["PATCH", `/v1/agents/${agent.id}`, { name: "Renamed", rotatePublicKey: true }],
      ["PUT", `/v1/agents/${agent.id}/draft`, validArtifact({ name: "Changed" }), { "If-Match": '"1"' }],
      ["POST", `/v1/agents/${agent.id}/versions`, { draftRevision: 1 }],
      [
        "POST",
        `/v1/agents/${agent.id}/releases`,
        { environment: "development", allocations: [{ version: 1, weight: 10_000 }] },
      ],
      ["POST", "/v1/api-keys", { name: "escalate", scope: "admin" }],
      ["DELETE", `/v1/api-keys/${reader.id}`, undefined],
      ["PUT", "/v1/secrets/openai", { value: "sk-live" }],
      ["DELETE", "/v1/secrets/openai", undefined],
    ];
    for (const [method, path, body, headers] of writes) {
      await expectError(await api(path, { method, key, body, headers: headers ?? {} }), 403, "forbidden");
    }
    expect(await counts()).toEqual(before);
    const after = await json(await api(`/v1/agents/${agent.id}`, { key }), 200, agentResponse);
    expect(after).toEqual(agent);
    const draft = await api(`/v1/agents/${agent.id}/draft`, { key });
    expect(draft.headers.get("ETag")).toBe('"1"');
    expect((await api("/v1/agents", { key })).status).toBe(200);
  });

  it("cannot activate a release", async () => {
    const tenant = await createTenant();
    const { agent } = await createPublishedAgent(tenant.apiKey);
    const res = await api(`/v1/agents/${agent.id}/releases`, {
      method: "POST",
      key: tenant.apiKey,
      body: { environment: "development", allocations: [{ version: 1, weight: 10_000 }] },
    });
    const release = await json(res, 201, releaseResponse);
    const reader = await createApiKey(tenant, "read");
    await expectError(
      await api(`/v1/agents/${agent.id}/releases/${release.id}/activate`, {
        method: "POST",
        key: reader.apiKey,
      }),
      403,
      "forbidden",
    );
    const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM active_releases WHERE tenant_id = ?")
      .bind(tenant.tenantId)
      .first();
    expect(row).toEqual({ n: 0 });
  });
});
