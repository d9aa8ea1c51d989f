import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { agentResponse, listResponse } from "../../src/shared/api";
import { D1DeploymentStore } from "../../src/storage/d1/d1-deployment-store";
import {
  api,
  countRows,
  createAgent,
  createTenant,
  expectError,
  fieldPaths,
  json,
  unique,
} from "../helpers/tenants";

const agentList = listResponse(agentResponse);

function newAgentBody(overrides: Record<string, unknown> = {}) {
  return {
    slug: unique("agent"),
    name: "Support agent",
    visibility: "public",
    allowedOrigins: ["https://shop.example.com"],
    ...overrides,
  };
}

async function postAgent(apiKey: string, body: unknown) {
  return api("/v1/agents", { method: "POST", key: apiKey, body });
}

describe("POST /v1/agents", () => {
  it("creates an agent with a fresh public key", async () => {
    const tenant = await createTenant();
    const body = newAgentBody({ visibility: "private" });
    const agent = await json(await postAgent(tenant.apiKey, body), 201, agentResponse);
    expect(agent).toMatchObject({
      slug: body.slug,
      name: "Support agent",
      status: "active",
      visibility: "private",
      allowedOrigins: ["https://shop.example.com"],
    });
    expect(agent.id).toMatch(/^agt_[a-z2-7]{26}$/);
    expect(agent.publicKey).toMatch(/^pk_[a-z2-7]{26}$/);
    expect(agent.createdAt).toBe(agent.updatedAt);
    const read = await json(await api(`/v1/agents/${agent.id}`, { key: tenant.apiKey }), 200, agentResponse);
    expect(read).toEqual(agent);
  });

  it("accepts origin patterns and stores them in canonical form", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey, {
      allowedOrigins: [
        "HTTPS://Shop.Example.COM",
        "https://shop.example.com",
        "https://shop.example.com:8443",
        "https://*.example.org",
        "http://localhost:8787",
        "http://127.0.0.1:3000",
        "http://localhost",
      ],
    });
    expect(agent.allowedOrigins).toEqual([
      "https://shop.example.com",
      "https://shop.example.com:8443",
      "https://*.example.org",
      "http://localhost:8787",
      "http://127.0.0.1:3000",
      "http://localhost",
    ]);
  });

  it.each([
    "https://example.com/",
    "https://example.com/path",
    "https://example.com?q=1",
    "https://example.com#x",
    "*",
    "null",
    "",
    "example.com",
    "http://example.com",
    "http://*.localhost",
    "ftp://example.com",
    "https://*",
    "https://*.com",
    "https://a.*.example.com",
    "https://*.*.example.com",
    "https://*example.com",
    "https://user:pw@example.com",
    "https://example.com:99999",
    "https://exa mple.com",
    "javascript:alert(1)",
  ])("refuses the origin pattern %j with 400 naming its index, storing nothing", async (pattern) => {
    const tenant = await createTenant();
    const res = await postAgent(
      tenant.apiKey,
      newAgentBody({ allowedOrigins: ["https://ok.example.com", pattern] }),
    );
    const error = await expectError(res, 400, "bad_request");
    expect(fieldPaths(error)).toEqual(["allowedOrigins.1"]);
    expect(await countRows("agents", tenant.tenantId)).toBe(0);
  });

  it.each([
    ["an uppercase slug", { slug: "Support" }, "slug"],
    ["a slug starting with '-'", { slug: "-support" }, "slug"],
    ["a slug with '_'", { slug: "sup_port" }, "slug"],
    ["a 64-character slug", { slug: "a".repeat(64) }, "slug"],
    ["an unknown visibility", { visibility: "internal" }, "visibility"],
    ["an empty name", { name: "" }, "name"],
    ["allowedOrigins not an array", { allowedOrigins: "https://a.example.com" }, "allowedOrigins"],
    ["an unknown field", { status: "active" }, "status"],
    ["an injected public key", { publicKey: "pk_chosen" }, "publicKey"],
  ])("refuses %s with 400 naming the field, storing nothing", async (_label, overrides, field) => {
    const tenant = await createTenant();
    const error = await expectError(
      await postAgent(tenant.apiKey, newAgentBody(overrides)),
      400,
      "bad_request",
    );
    expect(JSON.stringify(error.details)).toContain(field);
    expect(await countRows("agents", tenant.tenantId)).toBe(0);
  });

  it("accepts a 63-character slug", async () => {
    const tenant = await createTenant();
    const slug = `a${"b".repeat(62)}`;
    const agent = await createAgent(tenant.apiKey, { slug });
    expect(agent.slug).toBe(slug);
  });

  it("refuses a duplicate slug in the same tenant with 409, but not in another tenant", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const slug = unique("dup");
    await createAgent(tenant.apiKey, { slug });
    await expectError(await postAgent(tenant.apiKey, newAgentBody({ slug })), 409, "conflict");
    expect(await countRows("agents", tenant.tenantId)).toBe(1);
    const elsewhere = await createAgent(other.apiKey, { slug });
    expect(elsewhere.slug).toBe(slug);
  });
});

describe("GET /v1/agents", () => {
  it("lists the tenant's agents page by page", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    await createAgent(other.apiKey);
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await createAgent(tenant.apiKey));

    const all = await json(await api("/v1/agents", { key: tenant.apiKey }), 200, agentList);
    expect(all.items.map((a) => a.id).sort()).toEqual(created.map((a) => a.id).sort());
    expect(all.nextCursor).toBeUndefined();

    const first = await json(await api("/v1/agents?limit=2", { key: tenant.apiKey }), 200, agentList);
    expect(first.items).toHaveLength(2);
    const second = await json(
      await api(`/v1/agents?limit=2&cursor=${encodeURIComponent(first.nextCursor!)}`, { key: tenant.apiKey }),
      200,
      agentList,
    );
    expect(second.items).toHaveLength(1);
    expect(second.nextCursor).toBeUndefined();
    expect([...first.items, ...second.items].map((a) => a.id).sort()).toEqual(
      created.map((a) => a.id).sort(),
    );
  });

  it("answers an unknown agent with 404", async () => {
    const tenant = await createTenant();
    await expectError(await api("/v1/agents/agt_nothere", { key: tenant.apiKey }), 404, "not_found");
  });
});

describe("PATCH /v1/agents/:id", () => {
  it("changes name, status, visibility and origins", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    const res = await api(`/v1/agents/${agent.id}`, {
      method: "PATCH",
      key: tenant.apiKey,
      body: {
        name: "Renamed",
        status: "disabled",
        visibility: "private",
        allowedOrigins: ["https://*.Example.net"],
      },
    });
    const patched = await json(res, 200, agentResponse);
    expect(patched).toMatchObject({
      id: agent.id,
      slug: agent.slug,
      name: "Renamed",
      status: "disabled",
      visibility: "private",
      allowedOrigins: ["https://*.example.net"],
      publicKey: agent.publicKey,
    });
    const read = await json(await api(`/v1/agents/${agent.id}`, { key: tenant.apiKey }), 200, agentResponse);
    expect(read).toEqual(patched);
  });

  it("rotates the public key: the old one selects nothing afterwards", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    const store = new D1DeploymentStore(env.DB);
    expect((await store.findAgentByPublicKey(agent.publicKey))?.id).toBe(agent.id);

    const res = await api(`/v1/agents/${agent.id}`, {
      method: "PATCH",
      key: tenant.apiKey,
      body: { rotatePublicKey: true },
    });
    const rotated = await json(res, 200, agentResponse);
    expect(rotated.publicKey).toMatch(/^pk_[a-z2-7]{26}$/);
    expect(rotated.publicKey).not.toBe(agent.publicKey);
    expect(await store.findAgentByPublicKey(agent.publicKey)).toBeNull();
    expect((await store.findAgentByPublicKey(rotated.publicKey))?.id).toBe(agent.id);
  });

  it.each([
    ["rotatePublicKey: false", { rotatePublicKey: false }, "rotatePublicKey"],
    ["a chosen public key", { publicKey: "pk_mine" }, "publicKey"],
    ["a slug change", { slug: "other" }, "slug"],
    ["an unknown status", { status: "paused" }, "status"],
    [
      "a bad origin",
      { allowedOrigins: ["https://ok.example.com", "https://bad.example.com/x"] },
      "allowedOrigins.1",
    ],
  ])("refuses %s with 400 and leaves the agent unchanged", async (_label, body, field) => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    const error = await expectError(
      await api(`/v1/agents/${agent.id}`, { method: "PATCH", key: tenant.apiKey, body }),
      400,
      "bad_request",
    );
    expect(JSON.stringify(error.details)).toContain(field);
    const read = await json(await api(`/v1/agents/${agent.id}`, { key: tenant.apiKey }), 200, agentResponse);
    expect(read).toEqual(agent);
  });

  it("treats an empty patch as a no-op", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    const res = await api(`/v1/agents/${agent.id}`, { method: "PATCH", key: tenant.apiKey, body: {} });
    expect(await json(res, 200, agentResponse)).toEqual(agent);
  });

  it("answers an unknown agent with 404", async () => {
    const tenant = await createTenant();
    const res = await api("/v1/agents/agt_nothere", {
      method: "PATCH",
      key: tenant.apiKey,
      body: { name: "x" },
    });
    await expectError(res, 404, "not_found");
  });
});
