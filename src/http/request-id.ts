// Gives every request an id, echoed in `X-Request-Id` and in every error body.
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./context";

export const REQUEST_ID_HEADER = "X-Request-Id";

export const requestId = createMiddleware<AppEnv>(async (c, next) => {
  const id = crypto.randomUUID();
  c.set("requestId", id);
  await next();
  c.res.headers.set(REQUEST_ID_HEADER, id);
});
