import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { decryptTenantSecret, SecretBoxError } from "../../src/auth/secret-box";
import { listResponse, secretResponse } from "../../src/shared/api";
import { api, countRows, createTenant, expectError, json } from "../helpers/tenants";

const secretList = listResponse(secretResponse);

function putSecret(apiKey: string, alias: string, body: unknown) {
  return api(`/v1/secrets/${alias}`, { method: "PUT", key: apiKey, body });
}

async function secretRow(tenantId: string, alias: string) {
  return env.DB.prepare("SELECT * FROM tenant_secrets WHERE tenant_id = ? AND alias = ?")
    .bind(tenantId, alias)
    .first();
}

describe("/v1/secrets", () => {
  it("stores a secret encrypted and never returns it", async () => {
    const tenant = await createTenant();
    const value = "sk-live-provider-credential-0123456789";
    const res = await putSecret(tenant.apiKey, "openai", { value });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");

    const listText = await (await api("/v1/secrets", { key: tenant.apiKey })).text();
    expect(listText).not.toContain(value);
    const list = secretList.parse(JSON.parse(listText));
    expect(list.items.map((s) => s.alias)).toEqual(["openai"]);

    await expectError(await api("/v1/secrets/openai", { key: tenant.apiKey }), 404, "not_found");

    const row = await secretRow(tenant.tenantId, "openai");
    expect(JSON.stringify(row)).not.toContain(value);
    expect(row).toMatchObject({
      iv: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/),
      key_id: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(await decryptTenantSecret(env, tenant.tenantId, "openai")).toBe(value);
  });

  it("replaces a secret in place, keeping when it was created", async () => {
    const tenant = await createTenant();
    await putSecret(tenant.apiKey, "anthropic", { value: "first" });
    const before = await secretRow(tenant.tenantId, "anthropic");
    await putSecret(tenant.apiKey, "anthropic", { value: "second" });
    const after = await secretRow(tenant.tenantId, "anthropic");
    expect(after!.created_at).toBe(before!.created_at);
    expect(after!.iv).not.toBe(before!.iv);
    expect(await decryptTenantSecret(env, tenant.tenantId, "anthropic")).toBe("second");
    expect(await countRows("tenant_secrets", tenant.tenantId)).toBe(1);
  });

  it("seals the same value differently each time", async () => {
    const tenant = await createTenant();
    await putSecret(tenant.apiKey, "a", { value: "same" });
    await putSecret(tenant.apiKey, "b", { value: "same" });
    const a = await secretRow(tenant.tenantId, "a");
    const b = await secretRow(tenant.tenantId, "b");
    expect(a!.ciphertext).not.toBe(b!.ciphertext);
  });

  it("a ciphertext moved to another tenant or alias, or altered, does not decrypt", async () => {
    const owner = await createTenant();
    const thief = await createTenant();
    await putSecret(owner.apiKey, "openai", { value: "owner-only" });
    const row = await secretRow(owner.tenantId, "openai");
    const copy = env.DB.prepare(
      `INSERT INTO tenant_secrets (tenant_id, alias, ciphertext, iv, key_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    const fields = [row!.ciphertext, row!.iv, row!.key_id, row!.created_at, row!.updated_at];
    await copy.bind(thief.tenantId, "openai", ...fields).run();
    await copy.bind(owner.tenantId, "renamed", ...fields).run();

    await expect(decryptTenantSecret(env, thief.tenantId, "openai")).rejects.toBeInstanceOf(SecretBoxError);
    await expect(decryptTenantSecret(env, owner.tenantId, "renamed")).rejects.toBeInstanceOf(SecretBoxError);

    const ciphertext = String(row!.ciphertext);
    const flipped = `${ciphertext.slice(0, 5)}${ciphertext[5] === "A" ? "B" : "A"}${ciphertext.slice(6)}`;
    await env.DB.prepare("UPDATE tenant_secrets SET ciphertext = ? WHERE tenant_id = ? AND alias = 'renamed'")
      .bind(flipped, owner.tenantId)
      .run();
    await expect(decryptTenantSecret(env, owner.tenantId, "renamed")).rejects.toBeInstanceOf(SecretBoxError);
    await env.DB.prepare(
      "UPDATE tenant_secrets SET key_id = 'ffffffffffffffff' WHERE tenant_id = ? AND alias = 'openai'",
    )
      .bind(thief.tenantId)
      .run();
    await expect(decryptTenantSecret(env, thief.tenantId, "openai")).rejects.toBeInstanceOf(SecretBoxError);

    expect(await decryptTenantSecret(env, owner.tenantId, "openai")).toBe("owner-only");
    expect(await decryptTenantSecret(env, owner.tenantId, "absent")).toBeNull();
  });

  it("deletes a secret: 204, then 404", async () => {
    const tenant = await createTenant();
    await putSecret(tenant.apiKey, "gone", { value: "x" });
    expect((await api("/v1/secrets/gone", { method: "DELETE", key: tenant.apiKey })).status).toBe(204);
    expect(await decryptTenantSecret(env, tenant.tenantId, "gone")).toBeNull();
    await expectError(
      await api("/v1/secrets/gone", { method: "DELETE", key: tenant.apiKey }),
      404,
      "not_found",
    );
    const list = await json(await api("/v1/secrets", { key: tenant.apiKey }), 200, secretList);
    expect(list.items).toEqual([]);
  });

  it.each(["OpenAI", "-lead", "_lead", "a.b", "a%2Fb", "a".repeat(65), "%20"])(
    "refuses the alias %j with 400, storing nothing",
    async (alias) => {
      const tenant = await createTenant();
      await expectError(await putSecret(tenant.apiKey, alias, { value: "x" }), 400, "bad_request");
      expect(await countRows("tenant_secrets", tenant.tenantId)).toBe(0);
    },
  );

  it("accepts a 64-character alias and a value of exactly 8 KiB", async () => {
    const tenant = await createTenant();
    const alias = `a${"b_-".repeat(21)}`;
    expect(alias).toHaveLength(64);
    const value = "v".repeat(8192);
    expect((await putSecret(tenant.apiKey, alias, { value })).status).toBe(204);
    expect(await decryptTenantSecret(env, tenant.tenantId, alias)).toBe(value);
  });

  it.each([
    ["a value over 8 KiB", { value: "v".repeat(8193) }],
    ["a value over 8 KiB in UTF-8 bytes", { value: "\u00e9".repeat(4097) }],
    ["an empty value", { value: "" }],
    ["a non-string value", { value: 12345 }],
    ["an unknown field", { value: "x", description: "prod key" }],
    ["no value", {}],
  ])("refuses %s with 400, storing nothing", async (_label, body) => {
    const tenant = await createTenant();
    await expectError(await putSecret(tenant.apiKey, "provider", body), 400, "bad_request");
    expect(await countRows("tenant_secrets", tenant.tenantId)).toBe(0);
  });

  it("lists aliases in order, page by page", async () => {
    const tenant = await createTenant();
    for (const alias of ["c", "a", "b"]) await putSecret(tenant.apiKey, alias, { value: alias });
    const first = await json(await api("/v1/secrets?limit=2", { key: tenant.apiKey }), 200, secretList);
    expect(first.items.map((s) => s.alias)).toEqual(["a", "b"]);
    const second = await json(
      await api(`/v1/secrets?limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`, {
        key: tenant.apiKey,
      }),
      200,
      secretList,
    );
    expect(second.items.map((s) => s.alias)).toEqual(["c"]);
    expect(second.nextCursor).toBeUndefined();
  });

  it("keeps tenants' aliases apart", async () => {
    const a = await createTenant();
    const b = await createTenant();
    await putSecret(a.apiKey, "shared-name", { value: "a-value" });
    await putSecret(b.apiKey, "shared-name", { value: "b-value" });
    expect((await api("/v1/secrets/shared-name", { method: "DELETE", key: a.apiKey })).status).toBe(204);
    await expectError(
      await api("/v1/secrets/shared-name", { method: "DELETE", key: a.apiKey }),
      404,
      "not_found",
    );
    expect(await decryptTenantSecret(env, b.tenantId, "shared-name")).toBe("b-value");
    const list = await json(await api("/v1/secrets", { key: b.apiKey }), 200, secretList);
    expect(list.items.map((s) => s.alias)).toEqual(["shared-name"]);
  });
});
