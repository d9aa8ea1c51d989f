import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createdApiKeyResponse, listResponse, tenantResponse } from "../../src/shared/api";
import {
  api,
  countRows,
  createApiKey,
  createTenant,
  expectError,
  json,
  operatorHeaders,
  unique,
} from "../helpers/tenants";

async function tenantCount(): Promise<number> {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM tenants").first();
  return z.object({ n: z.number() }).parse(row).n;
}

describe("POST /v1/operator/tenants", () => {
  it("creates a tenant whose first admin key works on the admin API", async () => {
    const name = unique("acme");
    const { tenantId, apiKey } = await createTenant(name);
    expect(tenantId).toMatch(/^ten_[a-z2-7]{26}$/);
    expect(apiKey).toMatch(/^sk_[a-z2-7]{26}_[a-z2-7]{52}$/);

    const tenant = await env.DB.prepare("SELECT name, status FROM tenants WHERE id = ?")
      .bind(tenantId)
      .first();
    expect(tenant).toEqual({ name, status: "active" });

    const list = await api("/v1/api-keys", { key: apiKey });
    const body = await json(list, 200, z.object({ items: z.array(z.object({ scope: z.string() })) }));
    expect(body.items.map((k) => k.scope)).toEqual(["admin"]);
  });

  it.each([
    ["no Authorization", {}],
    ["a wrong token", { Authorization: "Bearer not-the-operator-token-at-all" }],
    ["the token with a suffix", { Authorization: `Bearer ${env.OPERATOR_TOKEN}x` }],
    ["a Basic scheme", { Authorization: `Basic ${btoa(`operator:${env.OPERATOR_TOKEN}`)}` }],
    ["a bare token", { Authorization: env.OPERATOR_TOKEN }],
  ])("refuses %s with 401 and creates nothing", async (_label, headers) => {
    const before = await tenantCount();
    const res = await api("/v1/operator/tenants", { method: "POST", headers, body: { name: unique("x") } });
    await expectError(res, 401, "unauthenticated");
    expect(await tenantCount()).toBe(before);
  });

  it("refuses a tenant API key with 401 and creates nothing", async () => {
    const { apiKey } = await createTenant();
    const before = await tenantCount();
    const res = await api("/v1/operator/tenants", {
      method: "POST",
      key: apiKey,
      body: { name: unique("x") },
    });
    await expectError(res, 401, "unauthenticated");
    expect(await tenantCount()).toBe(before);
  });

  it("is not a tenant credential: the operator token opens no tenant admin route", async () => {
    const res = await api("/v1/agents", { headers: operatorHeaders() });
    await expectError(res, 401, "unauthenticated");
  });

  it.each([
    ["an unknown field", { name: "x", plan: "gold" }],
    ["an empty name", { name: "   " }],
    ["a missing name", {}],
    ["an array", [{ name: "x" }]],
  ])("answers %s with 400 and creates nothing", async (_label, body) => {
    const before = await tenantCount();
    const res = await api("/v1/operator/tenants", { method: "POST", headers: operatorHeaders(), body });
    await expectError(res, 400, "bad_request");
    expect(await tenantCount()).toBe(before);
  });

  it("requires a JSON body (415) and creates nothing", async () => {
    const before = await tenantCount();
    const res = await api("/v1/operator/tenants", {
      method: "POST",
      headers: { ...operatorHeaders(), "Content-Type": "text/plain" },
      body: JSON.stringify({ name: "x" }),
    });
    await expectError(res, 415, "unsupported_media_type");
    expect(await tenantCount()).toBe(before);
  });
});

const tenantsPage = listResponse(tenantResponse);

async function tenantRow(tenantId: string) {
  return env.DB.prepare(
    "SELECT status, launches_per_day, tokens_per_day, concurrent_threads FROM tenants WHERE id = ?",
  )
    .bind(tenantId)
    .first();
}

function patchTenant(tenantId: string, body: unknown, headers: Record<string, string> = operatorHeaders()) {
  return api(`/v1/operator/tenants/${tenantId}`, { method: "PATCH", headers, body });
}

describe("GET /v1/operator/tenants", () => {
  it("lists tenants oldest first with status, quotas and creation time, paged by an opaque cursor", async () => {
    const a = await createTenant(unique("list-a"));
    const b = await createTenant(unique("list-b"));
    const all = await json(
      await api("/v1/operator/tenants?limit=200", { headers: operatorHeaders() }),
      200,
      tenantsPage,
    );
    const ids = all.items.map((t) => t.id);
    expect(ids.indexOf(a.tenantId)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(b.tenantId)).toBeGreaterThan(ids.indexOf(a.tenantId));
    expect(all.items.find((t) => t.id === a.tenantId)).toMatchObject({
      status: "active",
      quotas: { launchesPerDay: null, tokensPerDay: null, concurrentThreads: null },
    });

    // One at a time, the cursor walks the same list without gaps or repeats.
    const walked: string[] = [];
    let cursor: string | undefined;
    do {
      const query = `?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
      const page = await json(
        await api(`/v1/operator/tenants${query}`, { headers: operatorHeaders() }),
        200,
        tenantsPage,
      );
      expect(page.items.length).toBeLessThanOrEqual(1);
      walked.push(...page.items.map((t) => t.id));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(walked).toEqual(ids);
  });

  it("answers 50 by default and refuses a limit outside 1..200 or a cursor it did not issue with 400", async () => {
    const page = await json(
      await api("/v1/operator/tenants", { headers: operatorHeaders() }),
      200,
      tenantsPage,
    );
    expect(page.items.length).toBeLessThanOrEqual(50);
    for (const query of ["?limit=0", "?limit=201", "?limit=abc", "?cursor=not-a-cursor"]) {
      await expectError(
        await api(`/v1/operator/tenants${query}`, { headers: operatorHeaders() }),
        400,
        "bad_request",
      );
    }
    // A tenant's own list cursor does not continue the operator's list.
    const tenant = await createTenant();
    await createApiKey(tenant, "read");
    const keys = await json(
      await api("/v1/api-keys?limit=1", { key: tenant.apiKey }),
      200,
      z.object({ nextCursor: z.string() }),
    );
    await expectError(
      await api(`/v1/operator/tenants?cursor=${encodeURIComponent(keys.nextCursor)}`, {
        headers: operatorHeaders(),
      }),
      400,
      "bad_request",
    );
  });

  it("refuses no token, a wrong token and a tenant API key with 401", async () => {
    const { apiKey } = await createTenant();
    await expectError(await api("/v1/operator/tenants"), 401, "unauthenticated");
    await expectError(
      await api("/v1/operator/tenants", {
        headers: { Authorization: "Bearer not-the-operator-token-at-all" },
      }),
      401,
      "unauthenticated",
    );
    await expectError(await api("/v1/operator/tenants", { key: apiKey }), 401, "unauthenticated");
  });
});

describe("PATCH /v1/operator/tenants/:id", () => {
  it("sets status and quotas, keeps what the patch leaves out, and clears a quota with null", async () => {
    const { tenantId } = await createTenant();
    const set = await json(
      await patchTenant(tenantId, {
        quotas: { launchesPerDay: 10, tokensPerDay: 5000, concurrentThreads: 3 },
      }),
      200,
      tenantResponse,
    );
    expect(set).toMatchObject({
      id: tenantId,
      status: "active",
      quotas: { launchesPerDay: 10, tokensPerDay: 5000, concurrentThreads: 3 },
    });
    const disabled = await json(
      await patchTenant(tenantId, { status: "disabled", quotas: { tokensPerDay: null } }),
      200,
      tenantResponse,
    );
    expect(disabled).toMatchObject({
      status: "disabled",
      quotas: { launchesPerDay: 10, tokensPerDay: null, concurrentThreads: 3 },
    });
    expect(await tenantRow(tenantId)).toEqual({
      status: "disabled",
      launches_per_day: 10,
      tokens_per_day: null,
      concurrent_threads: 3,
    });
    const listed = await json(
      await api(`/v1/operator/tenants/${tenantId}`, { headers: operatorHeaders() }),
      200,
      tenantResponse,
    );
    expect(listed).toEqual(disabled);
  });

  it.each([
    ["an unknown field", { plan: "gold" }],
    ["an unknown status", { status: "paused" }],
    ["an unknown quota", { quotas: { sockets: 3 } }],
    ["a zero quota", { quotas: { launchesPerDay: 0 } }],
    ["a negative quota", { quotas: { tokensPerDay: -5 } }],
    ["a fractional quota", { quotas: { concurrentThreads: 1.5 } }],
    ["a quota as a string", { quotas: { launchesPerDay: "10" } }],
    ["an array", [{ status: "disabled" }]],
  ])("answers %s with 400 and changes nothing", async (_label, body) => {
    const { tenantId } = await createTenant();
    const before = await tenantRow(tenantId);
    await expectError(await patchTenant(tenantId, body), 400, "bad_request");
    expect(await tenantRow(tenantId)).toEqual(before);
  });

  it("answers an unknown tenant with 404", async () => {
    await expectError(await patchTenant("ten_doesnotexist", { status: "disabled" }), 404, "not_found");
    await expectError(
      await api("/v1/operator/tenants/ten_doesnotexist", { headers: operatorHeaders() }),
      404,
      "not_found",
    );
  });

  it("refuses no token and a tenant API key with 401 and changes nothing", async () => {
    const { tenantId, apiKey } = await createTenant();
    await expectError(await patchTenant(tenantId, { status: "disabled" }, {}), 401, "unauthenticated");
    await expectError(
      await patchTenant(tenantId, { status: "disabled" }, { Authorization: `Bearer ${apiKey}` }),
      401,
      "unauthenticated",
    );
    expect(await tenantRow(tenantId)).toMatchObject({ status: "active" });
  });
});

describe("POST /v1/operator/tenants/:id/api-keys", () => {
  it("issues a key shown once that opens the tenant's admin API, admin by default, read when asked", async () => {
    const tenant = await createTenant();
    const admin = await json(
      await api(`/v1/operator/tenants/${tenant.tenantId}/api-keys`, {
        method: "POST",
        headers: operatorHeaders(),
        body: {},
      }),
      201,
      createdApiKeyResponse,
    );
    expect(admin).toMatchObject({ name: "Operator-issued key", scope: "admin", revokedAt: null });
    expect((await api("/v1/agents", { key: admin.apiKey })).status).toBe(200);
    const digest = await env.DB.prepare("SELECT digest FROM api_keys WHERE tenant_id = ? AND id = ?")
      .bind(tenant.tenantId, admin.id)
      .first<{ digest: string }>();
    expect(digest?.digest).not.toContain(admin.apiKey.split("_")[2]!);

    const read = await json(
      await api(`/v1/operator/tenants/${tenant.tenantId}/api-keys`, {
        method: "POST",
        headers: operatorHeaders(),
        body: { name: "Support dashboard", scope: "read" },
      }),
      201,
      createdApiKeyResponse,
    );
    expect(read).toMatchObject({ name: "Support dashboard", scope: "read" });
    await expectError(
      await api("/v1/agents", {
        method: "POST",
        key: read.apiKey,
        body: { slug: "x", name: "x", visibility: "public", allowedOrigins: [] },
      }),
      403,
      "forbidden",
    );
  });

  it("answers a bad body with 400, an unknown tenant with 404 and no operator token with 401, issuing nothing", async () => {
    const tenant = await createTenant();
    const keys = () => countRows("api_keys", tenant.tenantId);
    const before = await keys();
    const post = (body: unknown, headers = operatorHeaders(), id = tenant.tenantId) =>
      api(`/v1/operator/tenants/${id}/api-keys`, { method: "POST", headers, body });
    await expectError(await post({ scope: "owner" }), 400, "bad_request");
    await expectError(await post({ name: "x", expiresAt: "never" }), 400, "bad_request");
    await expectError(await post({ name: "" }), 400, "bad_request");
    await expectError(await post({}, operatorHeaders(), "ten_doesnotexist"), 404, "not_found");
    await expectError(await post({}, {}), 401, "unauthenticated");
    await expectError(await post({}, { Authorization: `Bearer ${tenant.apiKey}` }), 401, "unauthenticated");
    expect(await keys()).toBe(before);
  });
});
