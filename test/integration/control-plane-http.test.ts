// The HTTP control plane in-process: the conformance suite through HttpDeploymentStore → the service → memory, the
// service's authorizer (workload token: key, audience, expiry, tenant scope), and the adapter's retries and errors.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signJwt } from "../../src/auth/jwt";
import { signWorkloadToken, WORKLOAD_TOKEN_TYP } from "../../src/auth/workload-token";
import { createControlPlaneApp } from "../../src/control-plane/app";
import { AppError } from "../../src/errors";
import { withD1Mirror } from "../../src/storage/d1/control-plane-mirror";
import { HttpDeploymentStore } from "../../src/storage/http/http-deployment-store";
import { describeDeploymentStore } from "../helpers/deployment-store-conformance";
import { createMemoryTables, MemoryDeploymentStore } from "../helpers/memory-deployment-store";

const KEYS = JSON.stringify({
  current: "w2",
  keys: {
    w1: "d29ya2xvYWQta2V5LW9uZS0wMTIzNDU2Nzg5YWJjZGVm",
    w2: "d29ya2xvYWQta2V5LXR3by0wMTIzNDU2Nzg5YWJjZGVm",
  },
});
const OTHER_KEYS = JSON.stringify({
  current: "w2",
  keys: { w2: "YW5vdGhlci1rZXktdGhhdC1kb2VzLW5vdC12ZXJpZnktMDE" },
});

function service(store = new MemoryDeploymentStore()) {
  return createControlPlaneApp({ store, keys: KEYS, ready: async () => null, log: () => {} });
}

function httpStore(app: ReturnType<typeof service>, keys = KEYS) {
  return new HttpDeploymentStore({
    baseUrl: "http://control-plane.test",
    token: (scope) => signWorkloadToken(keys, { deployment: "agent-threads:test", scope }),
    fetch: async (request) => app.fetch(request),
  });
}

describeDeploymentStore("HTTP → service → memory", (clock) => {
  const tables = createMemoryTables();
  const app = service(new MemoryDeploymentStore({ now: clock.now, tables }));
  return {
    store: httpStore(app),
    async tamperArtifact(tenantId, versionId, artifactText) {
      const row = [...tables.versions.values()].find((v) => v.tenantId === tenantId && v.id === versionId);
      if (row === undefined) throw new Error("No version row to tamper with.");
      row.artifact = artifactText;
    },
  };
});

async function post(app: ReturnType<typeof service>, path: string, body: unknown, token?: string) {
  const response = await app.request(`/v1/internal/deployment/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    body: (await response.json()) as { error?: { code: string }; value?: unknown },
  };
}

describe("the control plane's authorizer", () => {
  const tenantToken = (tenantId: string) =>
    signWorkloadToken(KEYS, { deployment: "agent-threads:test", scope: { tenantId } });

  it("serves a tenant's own pin to a token scoped to that tenant", async () => {
    const app = service();
    const tenant = await httpStore(app).createTenant({ name: "Acme" });
    const answer = await post(
      app,
      "threads/pinned-version",
      { tenantId: tenant.id, threadId: "t1" },
      await tenantToken(tenant.id),
    );
    expect(answer).toEqual({ status: 200, body: { value: null } });
  });

  it("refuses a missing token with 401 unauthenticated", async () => {
    const answer = await post(service(), "threads/pinned-version", { tenantId: "t", threadId: "x" });
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe("unauthenticated");
  });

  it("refuses a token signed with a key it does not hold (401)", async () => {
    const token = await signWorkloadToken(OTHER_KEYS, { deployment: "d", scope: { tenantId: "t" } });
    const answer = await post(service(), "threads/pinned-version", { tenantId: "t", threadId: "x" }, token);
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe("unauthenticated");
  });

  it("refuses a token for another audience (401)", async () => {
    const token = await signWorkloadToken(KEYS, {
      deployment: "d",
      scope: { tenantId: "t" },
      audience: "billing",
    });
    const answer = await post(service(), "threads/pinned-version", { tenantId: "t", threadId: "x" }, token);
    expect(answer.status).toBe(401);
  });

  it("refuses an expired token with 401 token_expired", async () => {
    const token = await signWorkloadToken(
      KEYS,
      { deployment: "d", scope: { tenantId: "t" } },
      new Date(Date.now() - 120_000),
    );
    const answer = await post(service(), "threads/pinned-version", { tenantId: "t", threadId: "x" }, token);
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe("token_expired");
  });

  it("refuses a token living longer than 60 s (401)", async () => {
    const keys = new Map([["w2", new TextEncoder().encode(JSON.parse(KEYS).keys.w2)]]);
    const { token } = await signJwt(
      { sub: "d", scp: "tenant", tid: "t" },
      {
        typ: WORKLOAD_TOKEN_TYP,
        kid: "w2",
        key: keys.get("w2")!,
        issuer: "agent-threads",
        audience: "agent-threads:control-plane",
        ttlSeconds: 3600,
        now: new Date(),
      },
    );
    const answer = await post(service(), "threads/pinned-version", { tenantId: "t", threadId: "x" }, token);
    expect(answer.status).toBe(401);
  });

  it("refuses a body naming another tenant than the token's scope with 403", async () => {
    const app = service();
    const store = httpStore(app);
    const mine = await store.createTenant({ name: "Mine" });
    const theirs = await store.createTenant({ name: "Theirs" });
    const answer = await post(app, "tenants/get", { tenantId: theirs.id }, await tenantToken(mine.id));
    expect(answer.status).toBe(403);
    expect(answer.body.error?.code).toBe("forbidden");
  });

  it("keeps cross-tenant lookups and global writes to their explicit scopes (403)", async () => {
    const app = service();
    const tenantScoped = await tenantToken("t");
    expect((await post(app, "agents/by-public-key", { publicKey: "pk_x" }, tenantScoped)).status).toBe(403);
    expect((await post(app, "tenants/create", { input: { name: "New" } }, tenantScoped)).status).toBe(403);
    const lookup = await signWorkloadToken(KEYS, { deployment: "d", scope: "lookup" });
    expect((await post(app, "tenants/get", { tenantId: "t" }, lookup)).status).toBe(403);
    expect((await post(app, "agents/by-public-key", { publicKey: "pk_x" }, lookup)).status).toBe(200);
  });
});

describe("the HTTP adapter", () => {
  it("retries a read after a 503 and sends a write once", async () => {
    const app = service();
    const seen: string[] = [];
    let failNext = 0;
    const store = new HttpDeploymentStore({
      baseUrl: "http://control-plane.test",
      token: (scope) => signWorkloadToken(KEYS, { deployment: "d", scope }),
      fetch: async (request) => {
        seen.push(new URL(request.url).pathname.split("/").slice(-2).join("/"));
        if (failNext > 0) {
          failNext--;
          return new Response("busy", { status: 503 });
        }
        return app.fetch(request);
      },
    });
    const tenant = await store.createTenant({ name: "Acme" });
    failNext = 1;
    expect(await store.getTenant(tenant.id)).toEqual(tenant);
    expect(seen.slice(1)).toEqual(["tenants/get", "tenants/get"]);

    seen.length = 0;
    failNext = 1;
    const error = await store.createTenant({ name: "Again" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(503);
    expect(seen).toEqual(["tenants/create"]);
  });

  it("answers 503 upstream_unavailable when the service cannot be reached", async () => {
    const store = new HttpDeploymentStore({
      baseUrl: "http://127.0.0.1:9",
      token: (scope) => signWorkloadToken(KEYS, { deployment: "d", scope }),
      fetch: async () => {
        throw new TypeError("connect ECONNREFUSED");
      },
      readRetries: 1,
    });
    const error = (await store.getPin("t", "x").catch((e: unknown) => e)) as AppError;
    expect(error.code).toBe("upstream_unavailable");
    expect(error.status).toBe(503);
  });

  it("treats a refused credential as the deployment's fault (500), not the caller's", async () => {
    const error = (await httpStore(service(), OTHER_KEYS)
      .getPin("t", "x")
      .catch((e: unknown) => e)) as AppError;
    expect(error.code).toBe("internal");
  });
});

describe("the D1 mirror of a remote control plane", () => {
  it("writes each tenant and agent the control plane accepted into D1, and follows the agent's changes", async () => {
    const store = withD1Mirror(httpStore(service()), env.DB);
    const tenant = await store.createTenant({ name: "Mirrored" });
    const created = await store.createAgent(tenant.id, {
      slug: "mirrored",
      name: "Mirrored",
      visibility: "public",
      allowedOrigins: ["https://shop.example.com"],
      publicKey: `pk_mirror_${crypto.randomUUID().slice(0, 8)}`,
    });
    if (!created.ok) throw new Error(created.message);
    const agentId = created.value.id;
    const row = () =>
      env.DB.prepare("SELECT status, allowed_origins FROM agents WHERE tenant_id = ? AND id = ?")
        .bind(tenant.id, agentId)
        .first<{ status: string; allowed_origins: string }>();
    const origins = async () =>
      (
        await env.DB.prepare("SELECT origin FROM agent_origins WHERE tenant_id = ? AND agent_id = ?")
          .bind(tenant.id, agentId)
          .all<{ origin: string }>()
      ).results.map((r) => r.origin);
    expect(
      await env.DB.prepare("SELECT name FROM tenants WHERE id = ?").bind(tenant.id).first<{ name: string }>(),
    ).toEqual({ name: "Mirrored" });
    expect(await row()).toEqual({ status: "active", allowed_origins: '["https://shop.example.com"]' });
    expect(await origins()).toEqual(["https://shop.example.com"]);

    const updated = await store.updateAgent(tenant.id, agentId, {
      status: "disabled",
      allowedOrigins: ["https://other.example.com"],
    });
    expect(updated.ok).toBe(true);
    expect(await row()).toEqual({ status: "disabled", allowed_origins: '["https://other.example.com"]' });
    expect(await origins()).toEqual(["https://other.example.com"]);
  });

  it("mirrors nothing when the control plane refuses the write", async () => {
    const store = withD1Mirror(httpStore(service()), env.DB);
    const refused = await store.createAgent("ten_missing", {
      slug: "ghost",
      name: "Ghost",
      visibility: "public",
      allowedOrigins: [],
      publicKey: "pk_ghost_mirror",
    });
    expect(refused.ok).toBe(false);
    expect(
      await env.DB.prepare("SELECT 1 FROM agents WHERE public_key = ?").bind("pk_ghost_mirror").first(),
    ).toBeNull();
  });
});
