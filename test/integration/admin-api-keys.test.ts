import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { apiKeyResponse, createdApiKeyResponse, listResponse } from "../../src/shared/api";
import { api, countRows, createTenant, expectError, json, unique } from "../helpers/tenants";

const keyList = listResponse(apiKeyResponse);

async function createKey(apiKey: string, body: unknown) {
  return json(await api("/v1/api-keys", { method: "POST", key: apiKey, body }), 201, createdApiKeyResponse);
}

describe("/v1/api-keys", () => {
  it("shows a new key's plaintext once, and only a digest reaches D1", async () => {
    const tenant = await createTenant();
    const name = unique("backend");
    const created = await createKey(tenant.apiKey, { name, scope: "read" });
    expect(created).toMatchObject({ name, scope: "read", revokedAt: null });
    expect(created.apiKey).toMatch(/^sk_[a-z2-7]{26}_[a-z2-7]{52}$/);
    expect(created.prefix).toBe(created.apiKey.slice(0, 29));
    expect(created.prefix).toBe(`sk_${created.id}`);
    expect(created.last4).toBe(created.apiKey.slice(-4));
    const secret = created.apiKey.slice(30);

    expect((await api("/v1/agents", { key: created.apiKey })).status).toBe(200);

    const listText = await (await api("/v1/api-keys", { key: tenant.apiKey })).text();
    const oneText = await (await api(`/v1/api-keys/${created.id}`, { key: tenant.apiKey })).text();
    for (const text of [listText, oneText]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain("digest");
    }
    const list = keyList.parse(JSON.parse(listText));
    expect(list.items.find((k) => k.id === created.id)).toEqual({
      id: created.id,
      name,
      scope: "read",
      prefix: created.prefix,
      last4: created.last4,
      createdAt: created.createdAt,
      revokedAt: null,
    });

    const { results } = await env.DB.prepare("SELECT * FROM api_keys WHERE tenant_id = ?")
      .bind(tenant.tenantId)
      .all();
    expect(results).toHaveLength(2);
    const stored = JSON.stringify(results);
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(tenant.apiKey.slice(30));
    const row = results.find((r) => r.id === created.id)!;
    expect(row.digest).toMatch(/^[0-9a-f]{64}$/);
  });

  it("defaults the scope to admin", async () => {
    const tenant = await createTenant();
    const created = await createKey(tenant.apiKey, { name: "ci" });
    expect(created.scope).toBe("admin");
  });

  it("revokes a key: 204, then that key is refused and the list shows when", async () => {
    const tenant = await createTenant();
    const created = await createKey(tenant.apiKey, { name: "temp", scope: "read" });
    const res = await api(`/v1/api-keys/${created.id}`, { method: "DELETE", key: tenant.apiKey });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    await expectError(await api("/v1/agents", { key: created.apiKey }), 401, "unauthenticated");

    const one = await json(
      await api(`/v1/api-keys/${created.id}`, { key: tenant.apiKey }),
      200,
      apiKeyResponse,
    );
    expect(one.revokedAt).not.toBeNull();
    const again = await api(`/v1/api-keys/${created.id}`, { method: "DELETE", key: tenant.apiKey });
    expect(again.status).toBe(204);
    const still = await json(
      await api(`/v1/api-keys/${created.id}`, { key: tenant.apiKey }),
      200,
      apiKeyResponse,
    );
    expect(still.revokedAt).toBe(one.revokedAt);
  });

  it("answers an unknown key id with 404", async () => {
    const tenant = await createTenant();
    await expectError(
      await api(`/v1/api-keys/${"a".repeat(26)}`, { method: "DELETE", key: tenant.apiKey }),
      404,
      "not_found",
    );
    await expectError(await api("/v1/api-keys/nope", { key: tenant.apiKey }), 404, "not_found");
  });

  it("never revokes the last active admin key (409), read keys do not count", async () => {
    const tenant = await createTenant();
    await createKey(tenant.apiKey, { name: "reader", scope: "read" });
    const list = keyList.parse(await (await api("/v1/api-keys", { key: tenant.apiKey })).json());
    const first = list.items.find((k) => k.scope === "admin")!;

    const refused = await api(`/v1/api-keys/${first.id}`, { method: "DELETE", key: tenant.apiKey });
    await expectError(refused, 409, "conflict");
    expect((await api("/v1/agents", { key: tenant.apiKey })).status).toBe(200);

    // With a second admin key, a key may even revoke itself.
    const second = await createKey(tenant.apiKey, { name: "second admin" });
    expect((await api(`/v1/api-keys/${first.id}`, { method: "DELETE", key: tenant.apiKey })).status).toBe(
      204,
    );
    await expectError(await api("/v1/agents", { key: tenant.apiKey }), 401, "unauthenticated");
    await expectError(
      await api(`/v1/api-keys/${second.id}`, { method: "DELETE", key: second.apiKey }),
      409,
      "conflict",
    );
    expect((await api("/v1/agents", { key: second.apiKey })).status).toBe(200);
  });

  it.each([
    ["an unknown field", { name: "x", scope: "admin", expiresAt: "2030-01-01" }, "expiresAt"],
    ["an unknown scope", { name: "x", scope: "owner" }, "scope"],
    ["an empty name", { name: "" }, "name"],
    ["a long name", { name: "x".repeat(101) }, "name"],
  ])("answers %s with 400 naming the field, and stores nothing", async (_label, body, field) => {
    const tenant = await createTenant();
    const before = await countRows("api_keys", tenant.tenantId);
    const error = await expectError(
      await api("/v1/api-keys", { method: "POST", key: tenant.apiKey, body }),
      400,
      "bad_request",
    );
    expect(JSON.stringify(error.details)).toContain(field);
    expect(await countRows("api_keys", tenant.tenantId)).toBe(before);
  });

  it("pages with an opaque cursor bound to the tenant and the list", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    for (let i = 0; i < 4; i++) await createKey(tenant.apiKey, { name: `k${i}`, scope: "read" });

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const query = cursor === undefined ? "?limit=2" : `?limit=2&cursor=${encodeURIComponent(cursor)}`;
      const page = await json(await api(`/v1/api-keys${query}`, { key: tenant.apiKey }), 200, keyList);
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((k) => k.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(5);

    const first = await json(await api("/v1/api-keys?limit=1", { key: tenant.apiKey }), 200, keyList);
    const good = first.nextCursor!;
    const [payload, mac] = good.split(".");
    const tampered = [
      `${payload}x.${mac}`,
      `${payload}.${mac!.slice(0, -2)}AA`,
      good.replace(".", ""),
      btoa(JSON.stringify({ t: tenant.tenantId, q: "api-keys", a: "[]" })),
      "",
      "x".repeat(5000),
    ];
    for (const bad of tampered) {
      const res = await api(`/v1/api-keys?cursor=${encodeURIComponent(bad)}`, { key: tenant.apiKey });
      await expectError(res, 400, "bad_request");
    }
    // Another tenant presenting this tenant's cursor: 400, and nothing of this tenant is shown.
    const foreign = await api(`/v1/api-keys?cursor=${encodeURIComponent(good)}`, { key: other.apiKey });
    await expectError(foreign, 400, "bad_request");
    // A cursor of one list does not continue another.
    const agents = await api(`/v1/agents?cursor=${encodeURIComponent(good)}`, { key: tenant.apiKey });
    await expectError(agents, 400, "bad_request");
  });

  it.each(["0", "201", "-1", "1.5", "abc", ""])("refuses limit=%s with 400", async (limit) => {
    const tenant = await createTenant();
    const error = await expectError(
      await api(`/v1/api-keys?limit=${limit}`, { key: tenant.apiKey }),
      400,
      "bad_request",
    );
    expect(error.message).toContain("limit");
  });

  it("accepts limit=200", async () => {
    const tenant = await createTenant();
    const page = await json(await api("/v1/api-keys?limit=200", { key: tenant.apiKey }), 200, keyList);
    expect(page.items).toHaveLength(1);
    expect(page.nextCursor).toBeUndefined();
    expect(page.items[0]!.scope).toBe("admin");
  });
});
