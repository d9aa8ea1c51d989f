// The OpenAPI 3.1 document of `/v1`, built from the routes' own `describeRoute` metadata and zod schemas (docs/api.md).
//
// How a route joins the document (new routes too — the route-coverage test fails for any that does not):
//   .post("/", describeRoute(operation({ tag: "Agents", summary: "Create an agent", auth: "tenantKey",
//       body: createAgentRequest, response: { status: 201, schema: agentResponse }, errors: [400, 409] })),
//     async (c) => { const input = await readJson(c, createAgentRequest); … })
// `body` must be the very schema the handler passes to readJson/parseWith, so the document cannot drift from what
// is validated. Request bodies are described as input (before transforms), responses as output. `errors` lists
// the statuses the route can answer besides its auth scheme's (401/403 are added from `auth`); each is the one
// error shape `{error: {code, reason?, message, requestId, details?}}`.
import type { Hono } from "hono";
import { type DescribeRouteOptions, generateSpecs, resolver } from "hono-openapi";
import { z } from "zod";
import { ERROR_REASONS } from "../shared/error-reasons";
import { ERROR_CODES } from "../shared/errors";
import type { AppEnv } from "./context";

/** The Worker's app (its routes are what the document walks). */
export type AnyApp = Hono<AppEnv>;

/**
 * `consoleCookie`: the console's session cookie alone (reading the session); `consoleSession`: the cookie plus its
 * `X-Console-CSRF` header. Every route whose only scheme is `tenantKey` takes the console session as well (tenantAuth
 * accepts either); a route that lists `tenantKey` beside others (the launch) takes only the key.
 */
export type AuthScheme =
  | "tenantKey"
  | "launchToken"
  | "operatorToken"
  | "consoleCookie"
  | "consoleSession"
  | "none";

const ERROR_STATUSES = {
  400: [
    "BadRequest",
    "The request is malformed or a field is invalid (`bad_request`; `details` names each field).",
  ],
  401: ["Unauthenticated", "Missing, unknown or expired credential (`unauthenticated`, `token_expired`)."],
  403: ["Forbidden", "The credential may not do this (`forbidden`), e.g. a read-only key writing."],
  404: ["NotFound", "No such object for this caller (`not_found`); other tenants' objects are 404 too."],
  410: ["Gone", "This route was retired (`gone`); the message names the route that replaced it."],
  409: ["Conflict", "The request conflicts with current state (`conflict`; `reason` may say why)."],
  412: ["PreconditionFailed", "`If-Match` names a stale revision (`precondition_failed`)."],
  413: ["PayloadTooLarge", "The body is over this route's limit (`payload_too_large`)."],
  415: ["UnsupportedMediaType", "`Content-Type` must be `application/json` (`unsupported_media_type`)."],
  426: ["UpgradeRequired", "A plain GET on a WebSocket route (`bad_request`, `Upgrade: websocket`)."],
  429: ["TooManyRequests", "Rate limit or quota (`rate_limited`, `quota_exceeded`); honour `Retry-After`."],
  500: ["Internal", "Unexpected failure (`internal`); retry later and quote `requestId`."],
  502: [
    "UpstreamUnavailable",
    "A provider or thread was unreachable (`upstream_unavailable`; `reason` says why).",
  ],
  503: [
    "DatabaseUnavailable",
    "The platform's database is briefly unreachable (`upstream_unavailable`); nothing was stored. Honour `Retry-After`.",
  ],
} as const;

export type ErrorStatus = keyof typeof ERROR_STATUSES;

const SCHEMES: Record<Exclude<AuthScheme, "none" | "consoleSession"> | "consoleCsrf", object> = {
  tenantKey: {
    type: "http",
    scheme: "bearer",
    description:
      "A tenant API key `sk_…` (POST /v1/api-keys or the operator's tenant creation). Admin or read scope.",
  },
  launchToken: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description:
      "The launch token of POST /v1/agent-sessions; bound to one thread. On the WebSocket it travels as the " +
      "subprotocol `bearer.<token>` beside `agent.v1`, never in the query string.",
  },
  operatorToken: {
    type: "http",
    scheme: "bearer",
    description: "The platform operator's token (the OPERATOR_TOKEN secret).",
  },
  consoleCookie: {
    type: "apiKey",
    in: "cookie",
    name: "__Host-console",
    description:
      "The console's session cookie (POST /v1/console/session). Counts only without an Authorization header, on " +
      "same-origin requests, and always together with `consoleCsrf` except on GET /v1/console/session.",
  },
  consoleCsrf: {
    type: "apiKey",
    in: "header",
    name: "X-Console-CSRF",
    description:
      "The console session's `csrfToken`, on every request its cookie authenticates (GET included).",
  },
};

const CONSOLE_SESSION = { consoleCookie: [], consoleCsrf: [] };

/** One scheme's security requirement(s). */
function requirements(scheme: AuthScheme, alone: boolean): object[] {
  if (scheme === "none") return [{}];
  if (scheme === "consoleSession") return [CONSOLE_SESSION];
  if (scheme === "tenantKey" && alone) return [{ tenantKey: [] }, CONSOLE_SESSION];
  return [{ [scheme]: [] }];
}

const errorRef = (status: ErrorStatus) => ({ $ref: `#/components/responses/${ERROR_STATUSES[status][0]}` });

export interface OperationSpec {
  tag: string;
  summary: string;
  description?: string;
  auth: AuthScheme | AuthScheme[];
  /** The schema the handler validates the JSON body with. */
  body?: z.ZodType;
  /** A body of raw bytes (an upload) in one of these media types, instead of JSON. */
  rawBody?: { contentTypes: readonly string[]; description: string };
  /**
   * Query parameters: the schema the handler parses `c.req.query()` with, or descriptions (with the parameter's
   * JSON Schema where it is not a plain string).
   */
  query?: z.ZodType | Record<string, string | { description: string; schema: QuerySchema }>;
  /** Request headers the route reads (name → description); required when the description starts with "Required". */
  headers?: Record<string, string>;
  response: {
    status: number;
    description?: string;
    /** JSON body; absent for an empty response (204) or when `contentType` says otherwise. */
    schema?: z.ZodType;
    contentType?: string;
    /** Response headers (name → description). */
    headers?: Record<string, string>;
  };
  /** Further responses besides the main one, e.g. the non-streaming variant or 101. */
  extraResponses?: Record<number, { description: string; schema?: z.ZodType }>;
  errors?: ErrorStatus[];
}

const json = (schema: z.ZodType, io: "input" | "output") => ({
  "application/json": { schema: resolver(schema, { options: { io } }) },
});

/** A query parameter's JSON Schema: text by default; integers (`limit`) with their bounds. */
export type QuerySchema =
  | { type: "string" }
  | { type: "integer"; minimum?: number; maximum?: number; default?: number };

const querySchema = z.union([
  z.strictObject({ type: z.literal("string") }),
  z.strictObject({
    type: z.literal("integer"),
    minimum: z.number().int().optional(),
    maximum: z.number().int().optional(),
    default: z.number().int().optional(),
  }),
]);

/** A text parameter's JSON Schema from its zod schema: its enum and length bounds, without the draft's `$schema`. */
function textSchema(field: z.ZodType): object {
  const { $schema: _draft, ...schema } = z.toJSONSchema(field, { io: "input", unrepresentable: "any" });
  return schema.type === "string" ? schema : { type: "string" };
}

function queryParameters(query: OperationSpec["query"]): object[] {
  if (query === undefined) return [];
  if (!("_zod" in query)) {
    return Object.entries(query).map(([name, spec]) => ({
      in: "query",
      name,
      ...(typeof spec === "string"
        ? { description: spec, schema: { type: "string" } }
        : { description: spec.description, schema: spec.schema }),
    }));
  }
  // A zod object: one parameter per key (query strings are text; a field's `parameter` meta names the type it
  // stands for, such as an integer `limit`; the schema names which are optional).
  const shape = (query as z.ZodObject).shape as Record<string, z.ZodType>;
  return Object.entries(shape).map(([name, field]) => {
    const declared = querySchema.safeParse(field.meta()?.parameter);
    return {
      in: "query",
      name,
      required: !field.safeParse(undefined).success,
      schema: declared.success ? declared.data : textSchema(field),
      ...(field.description !== undefined ? { description: field.description } : {}),
    };
  });
}

/** The `describeRoute` options of one operation, in the product's shapes: auth, body, response, errors. */
export function operation(spec: OperationSpec): DescribeRouteOptions {
  const auth = Array.isArray(spec.auth) ? spec.auth : [spec.auth];
  // `{}` is "no credential" beside the others: a route that takes either (a public launch, or a backend's sk_).
  const security = auth.flatMap((a) => requirements(a, auth.length === 1));
  const statuses = new Set<ErrorStatus>(spec.errors ?? []);
  if (auth.some((a) => a !== "none")) statuses.add(401);
  if (auth.includes("tenantKey") || auth.includes("consoleSession") || auth.includes("consoleCookie"))
    statuses.add(403);
  if (spec.body !== undefined || spec.rawBody !== undefined)
    for (const s of [400, 413, 415] as const) statuses.add(s);
  statuses.add(500);
  const { response } = spec;
  const mainContent =
    response.schema !== undefined
      ? response.contentType !== undefined
        ? { [response.contentType]: { schema: resolver(response.schema, { options: { io: "output" } }) } }
        : json(response.schema, "output")
      : response.contentType !== undefined
        ? { [response.contentType]: {} }
        : undefined;
  const responses: Record<string, object> = {
    [response.status]: {
      description: response.description ?? "Success.",
      ...(mainContent !== undefined ? { content: mainContent } : {}),
      ...(response.headers !== undefined
        ? {
            headers: Object.fromEntries(
              Object.entries(response.headers).map(([name, description]) => [
                name,
                { description, schema: { type: "string" } },
              ]),
            ),
          }
        : {}),
    },
  };
  for (const [status, extra] of Object.entries(spec.extraResponses ?? {})) {
    responses[status] = {
      description: extra.description,
      ...(extra.schema !== undefined ? { content: json(extra.schema, "output") } : {}),
    };
  }
  for (const status of [...statuses].sort()) responses[status] = errorRef(status);
  const headerParameters = Object.entries(spec.headers ?? {}).map(([name, description]) => ({
    in: "header",
    name,
    description,
    required: description.startsWith("Required"),
    schema: { type: "string" },
  }));
  const parameters = [...queryParameters(spec.query), ...headerParameters];
  return {
    tags: [spec.tag],
    summary: spec.summary,
    ...(spec.description !== undefined ? { description: spec.description } : {}),
    security: auth.length === 1 && auth[0] === "none" ? [] : security,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body !== undefined
      ? { requestBody: { required: true, content: json(spec.body, "input") } }
      : {}),
    ...(spec.rawBody !== undefined
      ? {
          requestBody: {
            required: true,
            description: spec.rawBody.description,
            content: Object.fromEntries(
              spec.rawBody.contentTypes.map((type) => [
                type,
                { schema: { type: "string", format: "binary" } },
              ]),
            ),
          },
        }
      : {}),
    responses,
  } as DescribeRouteOptions;
}

/**
 * A retired route, kept only to answer `410 gone` naming its replacement (no credential needed: it does nothing).
 * Listed, deprecated, so a client generated from the document sees it moved.
 */
export function retiredOperation(spec: {
  tag: string;
  summary: string;
  replacement: string;
}): DescribeRouteOptions {
  return {
    tags: [spec.tag],
    summary: spec.summary,
    description: `Retired: answers \`410 gone\` and does nothing. Use \`${spec.replacement}\`.`,
    deprecated: true,
    security: [],
    responses: { 410: errorRef(410) },
  } as DescribeRouteOptions;
}

const errorSchema = {
  type: "object",
  additionalProperties: false,
  required: ["error"],
  properties: {
    error: {
      type: "object",
      additionalProperties: false,
      required: ["code", "message", "requestId"],
      properties: {
        code: { type: "string", enum: [...ERROR_CODES] },
        reason: {
          type: "string",
          enum: [...ERROR_REASONS],
          description: "Why, beside the code: a provider failure's kind, or `no_active_release` at launch.",
        },
        message: { type: "string", description: "For humans; never echoes tokens, keys or internal detail." },
        requestId: { type: "string", description: "Also in the `X-Request-Id` response header; quote it." },
        details: {
          type: "array",
          description: "Field issues of a `bad_request`.",
          items: {
            type: "object",
            required: ["path", "message"],
            properties: { path: { type: "string" }, message: { type: "string" } },
          },
        },
      },
    },
  },
};

const TAGS = [
  ["Health", "Liveness, readiness and this contract."],
  ["Launch", "Turning an agent key (browser) or a tenant key + subject (backend) into a launch token."],
  ["Threads", "One conversation, with its launch token: WebSocket (docs/protocol.md) or HTTP."],
  ["Agents", "Tenant admin: agents."],
  ["Drafts", "Tenant admin: an agent's mutable draft (If-Match revisions)."],
  ["Versions", "Tenant admin: immutable, digest-pinned versions published from a draft revision."],
  ["Releases", "Tenant admin: weighted releases per environment, and which one is active."],
  ["Sessions", "Tenant admin: conversations as stored, export, erasure, handoff."],
  ["Approvals", "Tenant admin: tool calls waiting for a person's decision (docs/api.md#approvals)."],
  ["Usage", "Tenant admin: tokens and runs per day."],
  ["Privacy", "Tenant admin: legal holds on conversations and subjects (docs/privacy.md)."],
  ["Analytics", "Tenant admin: turns, failures, tokens, latency and feedback by version or by day."],
  ["API keys", "Tenant admin: the tenant's own keys."],
  ["Secrets", "Tenant admin: write-only provider secrets referred to by alias."],
  ["Webhooks", "Tenant admin: signed event deliveries to the tenant's backend (docs/webhooks.md)."],
  ["Operator", "Platform operator: tenants, their status, quotas and keys."],
  [
    "Console",
    "The console's cookie session: sign in with an API key, read it back, sign out (docs/security.md).",
  ],
] as const;

/** Adds path parameters that `{name}` templates need and no operation declared. */
function addPathParameters(
  paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] }>>,
) {
  for (const [path, item] of Object.entries(paths)) {
    const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    for (const op of Object.values(item)) {
      const declared = new Set((op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name));
      const missing = names
        .filter((name) => !declared.has(name))
        .map((name) => ({ in: "path", name, required: true, schema: { type: "string" } }));
      if (missing.length > 0) op.parameters = [...missing, ...(op.parameters ?? [])];
    }
  }
}

/** The whole document for `app` (its mounted routes that carry `describeRoute`), under `/v1`. */
export async function buildOpenApiDocument(app: AnyApp, version: string): Promise<Record<string, unknown>> {
  const doc = (await generateSpecs(
    app as unknown as Parameters<typeof generateSpecs>[0],
    {
      documentation: {
        info: {
          title: "agent-threads API",
          version,
          description:
            "Hosted AI agent threads. Lifecycle, tool webhooks, events and errors: docs/api.md. WebSocket frames: " +
            "docs/protocol.md. The agent artifact's JSON Schema: GET /v1/schemas/artifact.json.",
        },
        tags: TAGS.map(([name, description]) => ({ name, description })),
        components: {
          securitySchemes: SCHEMES,
          schemas: { Error: errorSchema },
          responses: Object.fromEntries(
            Object.values(ERROR_STATUSES).map(([name, description]) => [
              name,
              {
                description,
                content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
              },
            ]),
          ),
        },
        // biome-ignore lint/suspicious/noExplicitAny: the library's documentation type is narrower than 3.1 allows.
      } as any,
      defaultValidationErrorResponse: false,
      // `/openapi.json` and `/schemas/artifact.json` are routes, not static files.
      excludeStaticFile: false,
      // biome-ignore lint/suspicious/noExplicitAny: see above.
    } as any,
  )) as unknown as Record<string, unknown>;
  addPathParameters(doc.paths as Parameters<typeof addPathParameters>[0]);
  return doc;
}
