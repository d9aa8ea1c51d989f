// Liveness and identity of this deployment (`/health`), and whether it is ready to serve (`/ready`).
import { Hono } from "hono";
import type { AppEnv } from "../http/context";
import { readiness } from "../http/readiness";

export const health = new Hono<AppEnv>()
  .get("/health", (c) =>
    c.json({ status: "ok", environment: c.env.ENVIRONMENT, version: c.env.BUILD_VERSION }),
  )
  // Unauthenticated, like /health: it names what is missing and says nothing of any value.
  .get("/ready", async (c) => {
    const state = await readiness(c.env);
    c.header("Cache-Control", "no-store");
    return state.ready
      ? c.json({ status: "ready" }, 200)
      : c.json({ status: "not_ready", missing: state.missing }, 503);
  });
