// Every HTML answer carries a Content-Security-Policy: a page no route gave a policy still runs no script at all.
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./context";

/** The policy of an HTML answer that has none of its own: nothing loads, nothing runs, nothing frames it. */
export const FALLBACK_HTML_CSP =
  "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const HTML = /^\s*(text\/html|application\/xhtml\+xml)\b/i;

export const htmlPolicy = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const type = c.res.headers.get("Content-Type");
  if (type === null || !HTML.test(type) || c.res.headers.has("Content-Security-Policy")) return;
  const res = new Response(c.res.body, c.res);
  res.headers.set("Content-Security-Policy", FALLBACK_HTML_CSP);
  c.res = undefined;
  c.res = res;
});
