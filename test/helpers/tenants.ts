// Builders for the admin API in tests: tenants through the operator API, then agents, drafts, versions, releases.
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { z } from "zod";
import {
  type AgentResponse,
  agentResponse,
  createdTenantResponse,
  publishedVersionResponse,
  type ReleaseResponse,
  releaseResponse,
} from "../../src/shared/api";

export const API = "http://api.test";

export function unique(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

export interface ApiRequest {
  method?: string;
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** Serialised as JSON with `Content-Type: application/json` unless a string. */
  body?: unknown;
  headers?: Record<string, string>;
}

export function api(path: string, request: ApiRequest = {}): Promise<Response> {
  const headers = new Headers(request.headers);
  if (request.key !== undefined) headers.set("Authorization", `Bearer ${request.key}`);
  let body: string | undefined;
  if (request.body !== undefined) {
    body = typeof request.body === "string" ? request.body : JSON.stringify(request.body);
    if (!headers.has("Content-Type")) headers.set("Content-Type", "application/json");
  }
  return exports.default.fetch(`${API}${path}`, { method: request.method ?? "GET", headers, body });
}

const errorBody = z.object({
  error: z.object({
    code: z.string(),
    reason: z.string().optional(),
    message: z.string(),
    requestId: z.string(),
    details: z.unknown().optional(),
  }),
});

export type ErrorBody = z.infer<typeof errorBody>["error"];

/** Asserts an error status and returns the parsed error. */
export async function expectError(res: Response, status: number, code: string): Promise<ErrorBody> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = errorBody.parse(JSON.parse(text));
  expect(body.error.code).toBe(code);
  expect(body.error.requestId).toBe(res.headers.get("X-Request-Id"));
  return body.error;
}

/** Field paths named by a 400. */
export function fieldPaths(error: ErrorBody): string[] {
  return z
    .array(z.object({ path: z.string() }))
    .parse(error.details)
    .map((d) => d.path);
}

export async function json<S extends z.ZodType>(
  res: Response,
  status: number,
  schema: S,
): Promise<z.output<S>> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return schema.parse(JSON.parse(text));
}

export function operatorHeaders(): Record<string, string> {
  return { Authorization: `Bearer ${env.OPERATOR_TOKEN}` };
}

export interface TestTenant {
  tenantId: string;
  apiKey: string;
}

export async function createTenant(name = unique("tenant")): Promise<TestTenant> {
  const res = await api("/v1/operator/tenants", {
    method: "POST",
    headers: operatorHeaders(),
    body: { name },
  });
  return json(res, 201, createdTenantResponse);
}

export async function createApiKey(tenant: TestTenant, scope: "admin" | "read", name = unique("key")) {
  const res = await api("/v1/api-keys", { method: "POST", key: tenant.apiKey, body: { name, scope } });
  const body = await json(res, 201, z.object({ id: z.string(), apiKey: z.string() }));
  return body;
}

export function validArtifact(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemaVersion: 1,
    name: "Support",
    instructions: "Answer briefly.",
    model: { provider: "local", model: "echo" },
    ...overrides,
  };
}

export async function createAgent(
  apiKey: string,
  overrides: Record<string, unknown> = {},
): Promise<AgentResponse> {
  const res = await api("/v1/agents", {
    method: "POST",
    key: apiKey,
    body: {
      slug: unique("agent"),
      name: "Support agent",
      visibility: "public",
      allowedOrigins: ["https://shop.example.com"],
      ...overrides,
    },
  });
  return json(res, 201, agentResponse);
}

export function putDraft(apiKey: string, agentId: string, ifMatch: string | undefined, definition: unknown) {
  return api(`/v1/agents/${agentId}/draft`, {
    method: "PUT",
    key: apiKey,
    body: definition,
    headers: ifMatch === undefined ? {} : { "If-Match": ifMatch },
  });
}

export async function saveDraft(apiKey: string, agentId: string, revision: number, definition: unknown) {
  const res = await putDraft(apiKey, agentId, `"${revision}"`, definition);
  return json(res, 200, z.object({ revision: z.number() }));
}

export async function publish(apiKey: string, agentId: string, draftRevision: number) {
  const res = await api(`/v1/agents/${agentId}/versions`, {
    method: "POST",
    key: apiKey,
    body: { draftRevision },
  });
  return json(res, 201, publishedVersionResponse);
}

/** An agent with a published version 1 (and its draft at revision 1). */
export async function createPublishedAgent(apiKey: string, overrides: Record<string, unknown> = {}) {
  const agent = await createAgent(apiKey, overrides);
  await saveDraft(apiKey, agent.id, 0, validArtifact());
  const version = await publish(apiKey, agent.id, 1);
  return { agent, version };
}

export async function createRelease(
  apiKey: string,
  agentId: string,
  allocations: { version: number; weight: number }[],
  environment = "development",
): Promise<ReleaseResponse> {
  const res = await api(`/v1/agents/${agentId}/releases`, {
    method: "POST",
    key: apiKey,
    body: { environment, allocations },
  });
  return json(res, 201, releaseResponse);
}

/** Rows of a control-plane table belonging to one tenant, for "nothing changed" assertions. */
export async function countRows(table: string, tenantId: string): Promise<number> {
  if (!/^[a-z_]+$/.test(table)) throw new Error(`bad table ${table}`);
  const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE tenant_id = ?`)
    .bind(tenantId)
    .first();
  return z.object({ n: z.number() }).parse(row).n;
}
