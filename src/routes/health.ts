// Liveness and identity of this deployment: which environment and build answer.
import { Hono } from "hono";
import type { AppEnv } from "../http/context";

export const health = new Hono<AppEnv>().get("/health", (c) =>
  c.json({ status: "ok", environment: c.env.ENVIRONMENT, version: c.env.BUILD_VERSION }),
);
