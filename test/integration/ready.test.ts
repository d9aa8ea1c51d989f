// GET /v1/ready: 200 only when every secret parses, the platform's hosts are configured, D1 answers and every
// migration of this build is applied; otherwise 503 naming what is missing and never a value.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { app } from "../../src/app";
import { MIGRATIONS } from "../../src/storage/d1/migration-names";
import { fetchWithEnv } from "../helpers/edge-gate";
import { API } from "../helpers/tenants";

const notReady = z.strictObject({ status: z.literal("not_ready"), missing: z.array(z.string()) });

async function readyUnder(overrides: Partial<Record<keyof Env, string>>) {
  const res = await fetchWithEnv(overrides, "/v1/ready");
  return { res, text: await res.text() };
}

async function missingUnder(overrides: Partial<Record<keyof Env, string>>): Promise<string[]> {
  const { res, text } = await readyUnder(overrides);
  expect(res.status, text).toBe(503);
  for (const value of Object.values(overrides)) if (value.length > 0) expect(text).not.toContain(value);
  return notReady.parse(JSON.parse(text)).missing;
}

describe("GET /v1/ready", () => {
  it("answers 200 ready, unauthenticated, when everything is in place", async () => {
    const res = await exports.default.fetch(`${API}/v1/ready`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready" });
    expect(res.headers.get("Cache-Control")).toBe("no-store");
  });

  it("bundles every migration file of the build (a new file is missing from ready until applied)", () => {
    expect(MIGRATIONS).toEqual((env.TEST_MIGRATIONS ?? []).map((m) => m.name));
    expect(MIGRATIONS.length).toBeGreaterThan(0);
  });

  it.each([
    ["LAUNCH_TOKEN_KEYS", "not JSON", "not json"],
    [
      "LAUNCH_TOKEN_KEYS",
      "a current kid with no key",
      JSON.stringify({ current: "k9", keys: { k1: "x".repeat(40) } }),
    ],
    [
      "LAUNCH_TOKEN_KEYS",
      "a retired current kid",
      JSON.stringify({ current: "k1", keys: { k1: "x".repeat(40) }, retired: ["k1"] }),
    ],
    ["VISITOR_TOKEN_KEY", "a short plain key", "short-visitor-key"],
    ["VISITOR_TOKEN_KEY", "a key set without keys", '{"current":"v1"}'],
    ["DO_NAME_KEY", "empty", ""],
    ["API_KEY_PEPPER", "short", "tiny-pepper"],
    ["SECRETS_KEY", "short", "tiny-secrets-key"],
    ["OPERATOR_TOKEN", "short", "tiny-operator"],
    ["RECEIPT_SIGNING_KEYS", "a plain key (not a key set)", "x".repeat(40)],
  ] as const)("names %s when it is %s, without echoing the value", async (name, _what, value) => {
    expect(await missingUnder({ [name]: value })).toEqual([name]);
  });

  it("names every unusable secret at once, and an unset one", async () => {
    const { DO_NAME_KEY: _unset, ...withoutDoNameKey } = env;
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request(`${API}/v1/ready`),
      { ...withoutDoNameKey, SECRETS_KEY: "tiny-secrets-key", OPERATOR_TOKEN: "tiny-operator" },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(503);
    expect(notReady.parse(await res.json()).missing).toEqual([
      "DO_NAME_KEY",
      "SECRETS_KEY",
      "OPERATOR_TOKEN",
    ]);
  });

  it("requires PUBLIC_HOSTS outside development", async () => {
    for (const ENVIRONMENT of ["staging", "production"]) {
      expect(await missingUnder({ ENVIRONMENT, PUBLIC_HOSTS: "" })).toEqual(["PUBLIC_HOSTS"]);
      expect((await readyUnder({ ENVIRONMENT, PUBLIC_HOSTS: "agents.example.com" })).res.status).toBe(200);
    }
  });

  it("names ATTACHMENTS when the attachments bucket is not bound or does not answer", async () => {
    const broken = {
      head() {
        return Promise.reject(new Error("R2 bucket does not exist"));
      },
    } as unknown as R2Bucket;
    const { ATTACHMENTS: _unbound, ...unbound } = env;
    for (const bindings of [unbound, { ...env, ATTACHMENTS: broken }]) {
      const ctx = createExecutionContext();
      const res = await app.fetch(new Request(`${API}/v1/ready`), bindings, ctx);
      await waitOnExecutionContext(ctx);
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(notReady.parse(JSON.parse(text)).missing).toEqual(["ATTACHMENTS"]);
      expect(text).not.toContain("does not exist");
    }
  });

  it("names D1 when the database does not answer", async () => {
    const broken = {
      prepare() {
        throw new Error("D1_ERROR: database unavailable");
      },
    } as unknown as D1Database;
    const ctx = createExecutionContext();
    const res = await app.fetch(new Request(`${API}/v1/ready`), { ...env, DB: broken }, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(notReady.parse(JSON.parse(text)).missing).toEqual(["D1"]);
    expect(text).not.toContain("database unavailable");
  });

  it("names a migration of this build that the database has not applied", async () => {
    const last = MIGRATIONS.at(-1)!;
    const row = await env.DB.prepare("SELECT id, name, applied_at FROM d1_migrations WHERE name = ?")
      .bind(last)
      .first<{ id: number; name: string; applied_at: string }>();
    expect(row).not.toBeNull();
    await env.DB.prepare("DELETE FROM d1_migrations WHERE name = ?").bind(last).run();
    try {
      expect(await missingUnder({})).toEqual([`migration:${last}`]);
    } finally {
      await env.DB.prepare("INSERT INTO d1_migrations (id, name, applied_at) VALUES (?, ?, ?)")
        .bind(row!.id, row!.name, row!.applied_at)
        .run();
    }
    expect((await readyUnder({})).res.status).toBe(200);
  });

  it("names a projection shard that does not answer or lacks a migration, by its binding", async () => {
    const last = MIGRATIONS.at(-1)!;
    const row = await env.DB_SHARD_1.prepare("SELECT id, name, applied_at FROM d1_migrations WHERE name = ?")
      .bind(last)
      .first<{ id: number; name: string; applied_at: string }>();
    expect(row).not.toBeNull();
    await env.DB_SHARD_1.prepare("DELETE FROM d1_migrations WHERE name = ?").bind(last).run();
    try {
      expect(await missingUnder({})).toEqual([`migration:DB_SHARD_1:${last}`]);
    } finally {
      await env.DB_SHARD_1.prepare("INSERT INTO d1_migrations (id, name, applied_at) VALUES (?, ?, ?)")
        .bind(row!.id, row!.name, row!.applied_at)
        .run();
    }
    const broken = {
      prepare() {
        throw new Error("D1_ERROR: database unavailable");
      },
    } as unknown as D1Database;
    const ctx = createExecutionContext();
    const res = await app.fetch(new Request(`${API}/v1/ready`), { ...env, DB_SHARD_1: broken }, ctx);
    await waitOnExecutionContext(ctx);
    expect(notReady.parse(await res.json()).missing).toEqual(["D1:DB_SHARD_1"]);
    expect((await readyUnder({})).res.status).toBe(200);
  });
});
