import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { api, createTenant, expectError, json, operatorHeaders, unique } from "../helpers/tenants";

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
