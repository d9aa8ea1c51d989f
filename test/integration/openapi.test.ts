// The contract: every route the app mounts is in GET /v1/openapi.json, which is a valid OpenAPI 3.1 document.
import { exports } from "cloudflare:workers";
import type { SpecData } from "@seriousme/openapi-schema-validator";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { security?: object[]; responses: Record<string, unknown> }>>;
};

async function getDoc(): Promise<{ res: Response; doc: Doc }> {
  const res = await exports.default.fetch("http://api.test/v1/openapi.json");
  return { res, doc: (await res.json()) as Doc };
}

/** Hono `:id` → OpenAPI `{id}`, trailing slash dropped. */
const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}").replace(/(.)\/$/, "$1");

/**
 * Routes that only answer 404 (after authenticating, so an unknown path says nothing): the thread catch-all
 * `.on(["GET", "POST"], ["/threads/:threadId", "/threads/:threadId/*"])`, whose GET twin is the real thread read.
 */
const NOT_ENDPOINTS = new Set(["POST /v1/threads/{threadId}"]);

/** The app's real endpoints: not middleware (`ALL`), not CORS preflights, not catch-all 404 routes. */
function mountedRoutes(): string[] {
  const seen = new Set<string>();
  for (const route of createApp().routes) {
    if (!route.path.startsWith("/v1/")) continue;
    if (route.method === "ALL" || route.method === "OPTIONS" || route.path.includes("*")) continue;
    const key = `${route.method} ${toOpenApiPath(route.path)}`;
    if (!NOT_ENDPOINTS.has(key)) seen.add(key);
  }
  return [...seen].sort();
}

describe("GET /v1/openapi.json", () => {
  it("is public, cacheable OpenAPI 3.1", async () => {
    const { res, doc } = await getDoc();
    expect(res.status).toBe(200);
    expect(res.headers.get("Cache-Control")).toContain("public");
    expect(doc.openapi).toBe("3.1.0");
  });

  it("documents every /v1 route mounted in the app, and nothing else", async () => {
    const { doc } = await getDoc();
    const documented = Object.entries(doc.paths)
      .flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} /v1${path.replace(/^\/v1/, "")}`),
      )
      .sort();
    const mounted = mountedRoutes();
    expect(mounted.length).toBeGreaterThan(40);
    expect(documented).toEqual(mounted);
  });

  it("names each route's auth scheme and the one error shape", async () => {
    const { doc } = await getDoc();
    // A tenant-admin route takes the key, or the console's cookie with its CSRF header (docs/api.md).
    const consoleSession = { consoleCookie: [], consoleCsrf: [] };
    expect(doc.paths["/v1/agents"]?.post?.security).toEqual([{ tenantKey: [] }, consoleSession]);
    expect(doc.paths["/v1/console/session"]?.post?.security).toEqual([]);
    expect(doc.paths["/v1/console/session"]?.get?.security).toEqual([{ consoleCookie: [] }]);
    expect(doc.paths["/v1/console/session"]?.delete?.security).toEqual([consoleSession]);
    expect(doc.paths["/v1/operator/tenants"]?.post?.security).toEqual([{ operatorToken: [] }]);
    expect(doc.paths["/v1/threads/{threadId}/messages"]?.post?.security).toEqual([{ launchToken: [] }]);
    expect(doc.paths["/v1/health"]?.get?.security).toEqual([]);
    // A launch takes no credential (public agent, from a browser) or a tenant key (private agent, from a backend),
    // never the console's cookie.
    expect(doc.paths["/v1/agent-sessions"]?.post?.security).toEqual([{}, { tenantKey: [] }]);
    expect(doc.paths["/v1/agents/{agentId}/draft"]?.put?.responses["412"]).toEqual({
      $ref: "#/components/responses/PreconditionFailed",
    });
    // The subject travels in a body, never a path: the erasure and hold routes take JSON, the path forms are retired.
    const erasure = doc.paths["/v1/subject-erasures"]?.post as { requestBody?: unknown } | undefined;
    expect(JSON.stringify(erasure?.requestBody)).toContain('"subject"');
    expect(JSON.stringify(doc.paths["/v1/subject-holds"]?.delete)).toContain('"subject"');
    expect(doc.paths["/v1/subject-digest-key"]?.get?.security).toEqual([{ tenantKey: [] }, consoleSession]);
    for (const [path, method] of [
      ["/v1/subjects/{subject}", "delete"],
      ["/v1/subjects/{subject}/hold", "put"],
      ["/v1/subjects/{subject}/hold", "delete"],
    ] as const) {
      const retired = doc.paths[path]?.[method] as { deprecated?: boolean; responses: object } | undefined;
      expect(retired?.deprecated).toBe(true);
      expect(retired?.responses).toEqual({ 410: { $ref: "#/components/responses/Gone" } });
    }
    // Listing by subject and searching words take them in a body; the list's query names no one and says 410.
    const searchBody = JSON.stringify(
      (doc.paths["/v1/sessions/search"]?.post as { requestBody?: unknown } | undefined)?.requestBody,
    );
    expect(searchBody).toContain('"subject"');
    expect(searchBody).toContain('"q"');
    expect(searchBody).toContain('"additionalProperties":false');
    expect(doc.paths["/v1/sessions/search"]?.post?.security).toEqual([{ tenantKey: [] }, consoleSession]);
    const listRoute = doc.paths["/v1/sessions"]?.get as
      | { parameters?: { name: string }[]; responses: Record<string, unknown> }
      | undefined;
    expect(listRoute?.parameters?.map((p) => p.name)).not.toContain("subject");
    expect(listRoute?.parameters?.map((p) => p.name)).not.toContain("q");
    expect(listRoute?.responses["410"]).toEqual({ $ref: "#/components/responses/Gone" });
    expect(JSON.stringify(doc.paths["/v1/erasures/{erasureId}"])).toContain("subjectDigest");
    const text = JSON.stringify(doc);
    // Request bodies come from the routes' own zod schemas: the release weights rule and the draft's If-Match.
    expect(text).toContain('"allocations"');
    expect(text).toContain('"If-Match"');
    expect(text).toContain('"no_active_release"');
    // A private launch's tool policy (docs/tools.md#tool-policy): both lists of tool names, bounded.
    const launchBody = JSON.stringify(
      (doc.paths["/v1/agent-sessions"]?.post as { requestBody?: unknown } | undefined)?.requestBody,
    );
    expect(launchBody).toMatch(/"toolPolicy":\{[^}]*"properties":\{"allow":\{[^}]*"type":"array"/);
    expect(launchBody).toContain('"deny"');
    expect(launchBody).toContain('"maxItems":64');
  });

  it("declares every page size as an integer with its bounds, so generated clients take a number", async () => {
    const { doc } = await getDoc();
    const limits = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, op]) =>
        ((op as { parameters?: { in: string; name: string; schema: unknown }[] }).parameters ?? [])
          .filter((p) => p.in === "query" && p.name === "limit")
          .map((p) => ({ at: `${method.toUpperCase()} ${path}`, schema: p.schema })),
      ),
    );
    expect(limits.length).toBeGreaterThanOrEqual(13);
    for (const { at, schema } of limits) {
      expect(schema, at).toMatchObject({ type: "integer", minimum: 1, maximum: 200, default: 50 });
    }
  });
});

describe("GET /v1/schemas/artifact.json", () => {
  it("is the artifact's JSON Schema, strict, with the model required", async () => {
    const res = await exports.default.fetch("http://api.test/v1/schemas/artifact.json");
    expect(res.status).toBe(200);
    const schema = (await res.json()) as {
      $schema: string;
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, unknown>;
    };
    expect(schema.$schema).toContain("2020-12");
    expect(schema.required).toEqual(
      expect.arrayContaining(["schemaVersion", "name", "instructions", "model"]),
    );
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(["tools", "conversation", "handoff"]),
    );
  });
  it("describes every field, the local model's options included", async () => {
    const res = await exports.default.fetch("http://api.test/v1/schemas/artifact.json");
    const schema = (await res.json()) as Record<string, unknown>;
    const undescribed: string[] = [];
    // Every named property at any depth (through arrays and records' item schemas) carries a description.
    const visit = (node: unknown, path: string) => {
      if (typeof node !== "object" || node === null) return;
      const n = node as { properties?: Record<string, unknown>; items?: unknown; description?: string };
      for (const [key, child] of Object.entries(n.properties ?? {})) {
        const at = path ? `${path}.${key}` : key;
        if (typeof (child as { description?: unknown }).description !== "string") undescribed.push(at);
        visit(child, at);
      }
      if (n.items !== undefined) visit(n.items, `${path}[]`);
    };
    visit(schema, "");
    expect(undescribed).toEqual([]);
    const local = (schema as { properties: { model: { properties: { local: { properties: object } } } } })
      .properties.model.properties.local.properties;
    expect(Object.keys(local)).toEqual(
      expect.arrayContaining([
        "chunks",
        "chunkDelayMs",
        "failAfterChunks",
        "hangAfterChunks",
        "toolCall",
        "toolCalls",
      ]),
    );
  });

  it("describes a tool's executor, output schema and approval rules, with their bounds", async () => {
    const res = await exports.default.fetch("http://api.test/v1/schemas/artifact.json");
    type Node = {
      properties: Record<string, Node & Record<string, unknown>>;
      anyOf?: (Node & Record<string, unknown>)[];
      items: Node;
      required?: string[];
      description?: string;
    };
    const schema = (await res.json()) as Node;
    const tool = schema.properties.tools?.items as Node;
    expect(tool.required).toEqual(["name", "description"]);
    expect(tool.properties.executor).toMatchObject({
      enum: ["server", "client"],
      description: expect.any(String),
    });
    expect(tool.properties.outputSchema).toMatchObject({ type: "object", description: expect.any(String) });
    expect(tool.properties.timeoutMs).toMatchObject({ minimum: 100, maximum: 600_000 });
    const approval = tool.properties.approval as Node;
    expect(approval.description).toContain("docs/tools.md#approvals");
    expect(approval.anyOf?.[0]).toMatchObject({ enum: ["never", "always"] });
    const rules = approval.anyOf?.[1] as Node;
    expect(Object.keys(rules.properties)).toEqual([
      "when",
      "by",
      "timeoutMs",
      "onTimeout",
      "title",
      "description",
    ]);
    expect(rules.properties.by).toMatchObject({ enum: ["user", "tenant", "any"] });
    expect(rules.properties.onTimeout).toMatchObject({ enum: ["deny", "handoff"] });
    expect(rules.properties.timeoutMs).toMatchObject({ minimum: 10_000, maximum: 604_800_000 });
    const rule = rules.properties.when?.items as Node;
    expect(rule.properties.op).toMatchObject({ enum: ["eq", "ne", "gt", "gte", "lt", "lte", "in"] });
    for (const node of [rules, ...Object.values(rules.properties), ...Object.values(rule.properties)]) {
      expect(node.description).toEqual(expect.any(String));
    }
  });
});

/**
 * `@seriousme/openapi-schema-validator`, with its OpenAPI 3.1 meta-schema handed over as a module: workerd has no
 * file system for the library to read it from (everything else — the JSON Schema check and the $ref check — is the
 * library's own).
 */
async function validator31() {
  const { Validator } = await import("@seriousme/openapi-schema-validator");
  const { default: Ajv2020 } = await import("ajv/dist/2020.js");
  const { default: addFormats } = await import("ajv-formats");
  const schema = await import(
    "../../node_modules/@seriousme/openapi-schema-validator/schemas/v3.1/schema.json"
  );
  const validator = new Validator() as InstanceType<typeof Validator> & {
    ajvOptions: object;
    ajvValidators: Record<string, unknown>;
  };
  const ajv = new Ajv2020(validator.ajvOptions);
  addFormats(ajv);
  ajv.addFormat("media-range", true);
  validator.ajvValidators["3.1"] = ajv.compile(schema.default);
  return validator;
}

describe("the document", () => {
  it("passes an OpenAPI 3.1 validator", async () => {
    const validator = await validator31();
    const { doc } = await getDoc();
    const result = await validator.validate(doc as unknown as SpecData);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    // And the validator does refuse a broken document (a response that is not an object, a dangling $ref).
    const broken = structuredClone(doc);
    broken.paths["/v1/health"]!.get!.responses["200"] = { $ref: "#/components/responses/Missing" };
    expect((await validator.validate(broken as unknown as SpecData)).valid).toBe(false);
  });
});
