// Static assets served by the Worker from `env.ASSETS`: the embed loader, versioned widget builds, demo and test pages.
import { Hono } from "hono";
import type { AppContext, AppEnv } from "../http/context";

const IMMUTABLE = "public, max-age=31536000, immutable";
/** The loader and the major channel change with every release: short enough that a fix reaches sites soon. */
const SHORT = "public, max-age=300";
const PAGE = "no-cache";

/** Cache policy per path: content-hashed exact-version files forever, channels briefly, pages revalidated. */
export function cacheControlFor(pathname: string): string {
  if (/^\/widget\/v\d+\.\d+\.\d+\//.test(pathname)) return IMMUTABLE;
  if (pathname.startsWith("/console/assets/")) return IMMUTABLE;
  if (pathname === "/embed.js" || pathname.startsWith("/widget/")) return SHORT;
  return PAGE;
}

/**
 * The strict policy of the CSP test page: no inline script or style anywhere, Trusted Types enforced, and only this
 * origin (HTTP and WebSocket) to talk to. The widget must work under it unchanged.
 */
export function strictCsp(requestUrl: string): string {
  const url = new URL(requestUrl);
  const ws = `${url.protocol === "https:" ? "wss:" : "ws:"}//${url.host}`;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    `connect-src 'self' ${ws}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
  ].join("; ");
}

/**
 * The console's policy: the strict page's, plus same-origin frames (the playground's widgets run in frames of the
 * console's own pages) and same-origin form posts. Framing by any other origin is refused.
 */
export function consoleCsp(requestUrl: string): string {
  return strictCsp(requestUrl)
    .replace("form-action 'none'", "form-action 'self'")
    .replace("frame-ancestors 'none'", "frame-ancestors 'self'")
    .concat("; frame-src 'self'");
}

/** Headers a page needs beyond caching: the CSP page's policy, the COEP page's isolation. */
function pageHeaders(pathname: string, requestUrl: string): Record<string, string> {
  if (pathname === "/test/strict-csp.html") return { "Content-Security-Policy": strictCsp(requestUrl) };
  if (pathname === "/test/coep.html") {
    return { "Cross-Origin-Embedder-Policy": "require-corp", "Cross-Origin-Opener-Policy": "same-origin" };
  }
  return {};
}

async function serve(c: AppContext): Promise<Response> {
  const res = await c.env.ASSETS.fetch(c.req.raw);
  if (res.status === 404) return c.notFound();
  const { pathname } = new URL(c.req.url);
  const out = new Response(res.body, res);
  out.headers.set("Cache-Control", cacheControlFor(pathname));
  out.headers.set("X-Content-Type-Options", "nosniff");
  if (pathname === "/embed.js" || pathname.startsWith("/widget/")) {
    // Loaded by any site, including cross-origin-isolated (COEP) pages and module imports that need CORS.
    out.headers.set("Access-Control-Allow-Origin", "*");
    out.headers.set("Cross-Origin-Resource-Policy", "cross-origin");
  }
  for (const [name, value] of Object.entries(pageHeaders(pathname, c.req.url))) out.headers.set(name, value);
  return out;
}

/** Console pages that are not the app: the playground's widget frame (one widget per page, so one page per frame). */
const CONSOLE_PAGES: Record<string, string> = {
  "/console/playground-frame": "/console/playground-frame.html",
};

/**
 * Every console path that is not one of its built files answers the console's page (the app routes in the
 * browser), with its strict policy; the built files are content-hashed and immutable.
 */
async function servePage(c: AppContext): Promise<Response> {
  const { pathname } = new URL(c.req.url);
  if (pathname.startsWith("/console/assets/")) return serve(c);
  const page = new URL(CONSOLE_PAGES[pathname] ?? "/console/index.html", c.req.url);
  const res = await c.env.ASSETS.fetch(new Request(page, { headers: c.req.raw.headers }));
  if (res.status === 404) return c.notFound();
  const out = new Response(res.body, res);
  out.headers.set("Cache-Control", PAGE);
  out.headers.set("X-Content-Type-Options", "nosniff");
  out.headers.set("Content-Security-Policy", consoleCsp(c.req.url));
  out.headers.set("X-Frame-Options", "SAMEORIGIN");
  out.headers.set("Referrer-Policy", "same-origin");
  out.headers.set("Cross-Origin-Opener-Policy", "same-origin");
  return out;
}

export const assets = new Hono<AppEnv>()
  .get("/console", servePage)
  .get("/console/*", servePage)
  .get("/embed.js", serve)
  .get("/widget/*", serve)
  .get("/demo.html", serve)
  .get("/demo/*", serve)
  .get("/test/*", serve);
