// This deployment's runtime revision and its capabilities (`GET /v1/runtime`): what a release may name and run on.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { CURRENT_RUNTIME } from "../control/runtime";
import type { AppEnv } from "../http/context";
import { operation } from "../http/openapi";
import { tenantAuth } from "../http/tenant-auth";
import { type RuntimeResponse, runtimeResponse } from "../shared/api";

export const runtime = new Hono<AppEnv>().use("*", tenantAuth).get(
  "/",
  describeRoute(
    operation({
      tag: "Releases",
      summary: "This deployment's runtime revision and what it can run",
      description:
        "A release names a runtime revision (`runtimeRevisionId`, this one by default); a version needing a capability missing from its list is refused with 409 `runtime_incompatible`.",
      auth: "tenantKey",
      response: { status: 200, schema: runtimeResponse },
    }),
  ),
  (c) => {
    const body: RuntimeResponse = { id: CURRENT_RUNTIME.id, capabilities: [...CURRENT_RUNTIME.capabilities] };
    return c.json(body);
  },
);
