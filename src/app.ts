// The Worker's HTTP surface: middleware order, one error handler, and every route under /v1.
import { Hono } from "hono";
import type { AppEnv } from "./http/context";
import { notFound, onError } from "./http/error-handler";
import { requestId } from "./http/request-id";
import { health } from "./routes/health";

export function createApp() {
  const app = new Hono<AppEnv>();
  app.use("*", requestId);
  app.onError(onError);
  app.notFound(notFound);

  const v1 = new Hono<AppEnv>();
  v1.route("/", health);

  app.route("/v1", v1);
  return app;
}

export const app = createApp();
