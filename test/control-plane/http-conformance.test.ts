// The conformance suite over the wire: HttpDeploymentStore → the control-plane service (@hono/node-server on a free
// port) → PostgreSQL, and the service's authorizer as a Worker meets it, with real tokens on a real socket.
import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signWorkloadToken, type WorkloadScope } from "../../src/auth/workload-token";
import { createControlPlaneApp } from "../../src/control-plane/app";
import { HttpDeploymentStore } from "../../src/storage/http/http-deployment-store";
import { createPostgresDeploymentStore } from "../../src/storage/postgres/postgres-deployment-store";
import { postgresReadiness } from "../../src/storage/postgres/readiness";
import { describeDeploymentStore, TestClock } from "../helpers/deployment-store-conformance";
import { freshPrefix, testPool } from "./pg-harness";

const KEYS = JSON.stringify({
  current: "w1",
  keys: { w1: "aHR0cC1jb25mb3JtYW5jZS13b3JrbG9hZC1rZXktMDEyMzQ1" },
});
const OTHER_KEYS = JSON.stringify({
  current: "w1",
  keys: { w1: "bm90LXRoZS1zZXJ2aWNlLWtleS0wMTIzNDU2Nzg5YWJjZGVm" },
});

const pool = testPool();
const prefix = freshPrefix("http");
/** The suite's clock of the moment: the service stamps rows with it, as the other adapters' stores do. */
let clock = new TestClock();
let server: ServerType;
let baseUrl = "";

beforeAll(async () => {
  await createPostgresDeploymentStore({ sql: pool, prefix }).migrate();
  const store = createPostgresDeploymentStore({ sql: pool, prefix, now: () => clock.now() });
  const app = createControlPlaneApp({
    store,
    keys: KEYS,
    ready: () => postgresReadiness(pool, prefix),
    log: () => {},
  });
  await new Promise<void>((resolve) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve());
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await pool.end();
});

const token = (keys: string, scope: WorkloadScope, options: { audience?: string; now?: Date } = {}) =>
  signWorkloadToken(
    keys,
    { deployment: "agent-threads:test", scope, ...(options.audience ? { audience: options.audience } : {}) },
    options.now,
  );

describeDeploymentStore("HTTP → service → postgres", (testClock) => {
  clock = testClock;
  return {
    store: new HttpDeploymentStore({ baseUrl, token: (scope) => token(KEYS, scope) }),
    async tamperArtifact(tenantId, versionId, artifactText) {
      const result = await pool.query(
        `UPDATE ${prefix}_agent_versions SET artifact = $1 WHERE tenant_id = $2 AND id = $3`,
        [artifactText, tenantId, versionId],
      );
      if (result.rowCount !== 1) throw new Error("No version row to tamper with.");
    },
  };
});

describe("the control-plane service over HTTP", () => {
  async function pinRead(tenantId: string, bearer: string | null) {
    const response = await fetch(`${baseUrl}/v1/internal/deployment/threads/pinned-version`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      },
      body: JSON.stringify({ tenantId, threadId: "thr_x" }),
    });
    return {
      status: response.status,
      code: ((await response.json()) as { error?: { code: string } }).error?.code,
    };
  }

  it("is ready once the schema is migrated, and healthy", async () => {
    expect((await fetch(`${baseUrl}/health`)).status).toBe(200);
    const ready = await fetch(`${baseUrl}/ready`);
    expect(ready.status).toBe(200);
  });

  it("answers a pin read for the token's own tenant", async () => {
    expect(await pinRead("ten_a", await token(KEYS, { tenantId: "ten_a" }))).toEqual({
      status: 200,
      code: undefined,
    });
  });

  it("refuses a missing, foreign-key, wrong-audience or expired token with 401, and another tenant with 403", async () => {
    expect(await pinRead("ten_a", null)).toEqual({ status: 401, code: "unauthenticated" });
    expect(await pinRead("ten_a", await token(OTHER_KEYS, { tenantId: "ten_a" }))).toEqual({
      status: 401,
      code: "unauthenticated",
    });
    expect(await pinRead("ten_a", await token(KEYS, { tenantId: "ten_a" }, { audience: "billing" }))).toEqual(
      {
        status: 401,
        code: "unauthenticated",
      },
    );
    const old = new Date(Date.now() - 5 * 60_000);
    expect(await pinRead("ten_a", await token(KEYS, { tenantId: "ten_a" }, { now: old }))).toEqual({
      status: 401,
      code: "token_expired",
    });
    expect(await pinRead("ten_b", await token(KEYS, { tenantId: "ten_a" }))).toEqual({
      status: 403,
      code: "forbidden",
    });
  });

  it("is not ready on a database without its tables (503)", async () => {
    const app = createControlPlaneApp({
      store: createPostgresDeploymentStore({ sql: pool, prefix: freshPrefix("none") }),
      keys: KEYS,
      ready: () => postgresReadiness(pool, freshPrefix("none")),
      log: () => {},
    });
    const response = await app.request("/ready");
    expect(response.status).toBe(503);
    expect(((await response.json()) as { problem: string }).problem).toMatch(/not migrated/);
  });
});
