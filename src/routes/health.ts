// Liveness and identity of this deployment (`/health`), and whether it is ready to serve (`/ready`).
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import type { AppEnv } from "../http/context";
import { operation } from "../http/openapi";
import { readiness } from "../services/readiness";
import { healthResponse, readyResponse } from "../shared/api";

export const health = new Hono<AppEnv>()
  .get(
    "/health",
    describeRoute(
      operation({
        tag: "Health",
        summary: "Liveness and identity of this deployment",
        auth: "none",
        response: { status: 200, schema: healthResponse },
      }),
    ),
    (c) => c.json({ status: "ok", environment: c.env.ENVIRONMENT, version: c.env.BUILD_VERSION }),
  )
  // Unauthenticated, like /health: it names what is missing and says nothing of any value.
  .get(
    "/ready",
    describeRoute(
      operation({
        tag: "Health",
        summary: "Whether this deployment is ready to serve",
        auth: "none",
        response: { status: 200, schema: readyResponse },
        extraResponses: {
          503: { description: "Not ready: `missing` names what is missing.", schema: readyResponse },
        },
      }),
    ),
    async (c) => {
      const state = await readiness(c.env);
      c.header("Cache-Control", "no-store");
      return state.ready
        ? c.json({ status: "ready" }, 200)
        : c.json({ status: "not_ready", missing: state.missing }, 503);
    },
  );
