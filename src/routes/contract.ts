// The machine-readable contract (docs/api.md): `GET /v1/openapi.json` and `GET /v1/schemas/artifact.json`, public.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { artifactSchema } from "../control/artifact";
import type { AppEnv } from "../http/context";
import { type AnyApp, buildOpenApiDocument, operation } from "../http/openapi";

/** Public, identical for everyone, and fixed per deployment: caches may keep it for an hour. */
const CACHE_CONTROL = "public, max-age=3600";

let artifactJsonSchema: Record<string, unknown> | undefined;

/** The artifact as a tenant writes it into a draft: input shape, and refinements that JSON Schema cannot say as `{}`. */
export function artifactDocument(): Record<string, unknown> {
  artifactJsonSchema ??= {
    ...z.toJSONSchema(artifactSchema, { io: "input", unrepresentable: "any", target: "draft-2020-12" }),
    $id: "https://agent-threads.dev/v1/schemas/artifact.json",
    title: "Agent artifact (schemaVersion 1)",
  };
  return artifactJsonSchema;
}

/** `app` is the whole Worker app: the document describes every route mounted in it. */
export function contract(app: () => AnyApp) {
  let document: Promise<Record<string, unknown>> | undefined;
  return new Hono<AppEnv>()
    .get(
      "/openapi.json",
      describeRoute(
        operation({
          tag: "Health",
          summary: "This OpenAPI 3.1 document",
          auth: "none",
          response: {
            status: 200,
            description: "The document.",
            headers: { "Cache-Control": CACHE_CONTROL },
          },
        }),
      ),
      async (c) => {
        document ??= buildOpenApiDocument(app(), c.env.BUILD_VERSION).catch((error) => {
          document = undefined;
          throw error;
        });
        c.header("Cache-Control", CACHE_CONTROL);
        return c.json(await document);
      },
    )
    .get(
      "/schemas/artifact.json",
      describeRoute(
        operation({
          tag: "Health",
          summary: "The agent artifact's JSON Schema (what PUT /v1/agents/{agentId}/draft takes)",
          auth: "none",
          response: {
            status: 200,
            description: "A JSON Schema (draft 2020-12).",
            contentType: "application/schema+json",
            headers: { "Cache-Control": CACHE_CONTROL },
          },
        }),
      ),
      (c) => {
        c.header("Cache-Control", CACHE_CONTROL);
        c.header("Content-Type", "application/schema+json");
        return c.body(JSON.stringify(artifactDocument()));
      },
    );
}
