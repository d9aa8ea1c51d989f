// Builders for edge-gate tests: private launches, "nothing changed" snapshots, and requests under an overridden env.
import { createExecutionContext, listDurableObjectIds, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { expect } from "vitest";
import { z } from "zod";
import { app } from "../../src/app";
import { tenantQuota } from "../../src/auth/tenant-quota";
import { API, api, countRows, expectError } from "./tenants";
import { freshIp } from "./threads";

/** A launch from a tenant's backend: `Authorization: Bearer sk_…` and a subject. */
export function privateLaunchRequest(
  apiKey: string,
  body: unknown,
  options: { ip?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return api("/v1/agent-sessions", {
    method: "POST",
    key: apiKey,
    body,
    headers: { "CF-Connecting-IP": options.ip ?? freshIp(), ...(options.headers ?? {}) },
  });
}

/** Every `threads` row, across tenants: a refused request must not add one anywhere. */
export async function allThreadRows(): Promise<number> {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM threads").first();
  return z.object({ n: z.number() }).parse(row).n;
}

/** What a refused launch must leave unchanged for a tenant: its thread rows and its launch quota. */
export async function tenantFootprint(tenantId: string): Promise<{ threads: number; launches: number }> {
  return {
    threads: await countRows("threads", tenantId),
    launches: await tenantQuota(env, tenantId).usage("launches"),
  };
}

/** Asserts a refusal and that the tenant's rows and quota, and every tenant's thread rows, are exactly as before it. */
export async function refusedWithoutTrace(
  tenantId: string,
  send: () => Promise<Response>,
  status: number,
  code: string,
): Promise<Response> {
  const before = await tenantFootprint(tenantId);
  const rowsBefore = await allThreadRows();
  const res = await send();
  const copy = res.clone();
  await expectError(res, status, code);
  expect(await tenantFootprint(tenantId)).toEqual(before);
  expect(await allThreadRows()).toBe(rowsBefore);
  return copy;
}

/** Thread objects that exist in this test file's storage. */
export async function threadObjects(): Promise<number> {
  return (await listDurableObjectIds(env.THREAD)).length;
}

/** The Worker's fetch handler under `overrides` (a var or secret changed for one request). */
export async function fetchWithEnv(
  overrides: Partial<Record<keyof Env, string>>,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`${API}${path}`, init), { ...env, ...overrides }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/** The payload and header of one of our JWTs (not verified: the test reads what the server issued). */
export function readToken(token: string) {
  return { header: decodeProtectedHeader(token), claims: decodeJwt(token) };
}

/** An error body without its request id, for "one identical body" comparisons. */
export async function bodyWithoutRequestId(res: Response): Promise<unknown> {
  const body = z
    .object({ error: z.object({ code: z.string(), message: z.string(), requestId: z.string() }).loose() })
    .parse(await res.json());
  const { requestId: _requestId, ...rest } = body.error;
  return { status: res.status, error: rest };
}
