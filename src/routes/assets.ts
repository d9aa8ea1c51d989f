// Static assets served by the Worker from `env.ASSETS`: the embed loader, versioned widget builds, the console, and
// (in development only) the demo and test pages.
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { onOwnConsoleHost, servesConsole } from "../http/console-auth";
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

/** The WebSocket origin that goes with an HTTP(S) origin or URL. */
function socketOrigin(url: URL): string {
  return `${url.protocol === "https:" ? "wss:" : "ws:"}//${url.host}`;
}

/**
 * The policy of every page that is not the console's: no inline script or style, and only this origin (HTTP and
 * WebSocket) to load from and talk to — plus `service`, the loopback origin a development test page loads the
 * widget from (docs/security.md#console-isolation). Images also from `blob:`: the widget shows attachments as object
 * URLs of bytes it fetched with the launch token (docs/widget.md#attachments).
 */
export function pageCsp(requestUrl: string, service: string | null = null): string {
  const url = new URL(requestUrl);
  const sources = service === null ? "'self'" : `'self' ${service}`;
  const sockets =
    service === null ? socketOrigin(url) : `${socketOrigin(url)} ${socketOrigin(new URL(service))}`;
  return [
    "default-src 'none'",
    `script-src ${sources}`,
    `style-src ${sources}`,
    `img-src ${sources} blob:`,
    `connect-src ${sources} ${sockets}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * The strict policy of the CSP test page: the page policy with Trusted Types enforced. The widget must work under it
 * unchanged.
 */
export function strictCsp(requestUrl: string): string {
  return `${pageCsp(requestUrl)}; require-trusted-types-for 'script'; trusted-types 'none'`;
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

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * The origin of `value` when it is a loopback HTTP(S) origin, else null: the only service origin a test page may
 * load scripts from (public/test/customer.js applies the same rule).
 */
export function loopbackOrigin(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  return LOOPBACK_HOSTS.has(url.hostname) ? url.origin : null;
}

/** Headers a page needs beyond caching: its policy, and the COEP page's isolation. */
function pageHeaders(pathname: string, requestUrl: string): Record<string, string> {
  if (pathname === "/test/strict-csp.html") return { "Content-Security-Policy": strictCsp(requestUrl) };
  if (pathname === "/test/customer.html") {
    const service = loopbackOrigin(new URL(requestUrl).searchParams.get("service"));
    return { "Content-Security-Policy": pageCsp(requestUrl, service) };
  }
  if (pathname === "/test/coep.html") {
    return {
      "Content-Security-Policy": pageCsp(requestUrl),
      "Cross-Origin-Embedder-Policy": "require-corp",
      "Cross-Origin-Opener-Policy": "same-origin",
    };
  }
  if (pathname.endsWith(".html")) return { "Content-Security-Policy": pageCsp(requestUrl) };
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

/**
 * The demo and the browser tests' pages exist in `development` only, and never on a console host of its own: a page
 * there would share the console's origin (docs/security.md#console-isolation).
 */
const developmentOnly = createMiddleware<AppEnv>(async (c, next) => {
  if (c.env.ENVIRONMENT !== "development" || onOwnConsoleHost(c)) return c.notFound();
  await next();
});

/** With `CONSOLE_HOST` set, the console answers on that host only. */
const consoleHostOnly = createMiddleware<AppEnv>(async (c, next) => {
  if (!servesConsole(c)) return c.notFound();
  await next();
});

export const assets = new Hono<AppEnv>()
  .get("/console", consoleHostOnly, servePage)
  .get("/console/*", consoleHostOnly, servePage)
  .get("/embed.js", serve)
  .get("/widget/*", serve)
  .get("/favicon.svg", serve)
  .get("/demo.html", developmentOnly, serve)
  .get("/demo/*", developmentOnly, serve)
  .get("/test/*", developmentOnly, serve);
