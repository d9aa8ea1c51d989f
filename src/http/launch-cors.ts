// CORS for the browser launch endpoint: only origins an active agent allows are ever reflected.
import { createMiddleware } from "hono/factory";
import { parseOriginPattern } from "../auth/origin-policy";
import { anyAgentAllowsOrigin } from "../storage/d1/thread-registry";
import type { AppContext, AppEnv } from "./context";

const MAX_AGE_SECONDS = 600;

export function withCorsHeaders(headers: Headers, origin: string): void {
  headers.set("Access-Control-Allow-Origin", origin);
  headers.set("Vary", "Origin");
}

/** The allow-list entries that would admit `origin`: itself, and its single-label wildcard form. */
function patternsFor(origin: string): string[] {
  if (!parseOriginPattern(origin)) return [];
  const url = new URL(origin);
  const labels = url.hostname.split(".");
  const out = [url.origin];
  if (labels.length > 2) {
    out.push(`${url.protocol}//*.${labels.slice(1).join(".")}${url.port ? `:${url.port}` : ""}`);
  }
  return out;
}

async function originKnown(c: AppContext, origin: string): Promise<boolean> {
  return anyAgentAllowsOrigin(c.env.DB, patternsFor(origin));
}

export const launchCors = {
  /** Preflight carries no credential: answer it for origins some active agent allows, and nothing else. */
  preflight: async (c: AppContext) => {
    const origin = c.req.header("Origin");
    const headers = new Headers({ Vary: "Origin" });
    if (origin && (await originKnown(c, origin))) {
      withCorsHeaders(headers, origin);
      headers.set("Access-Control-Allow-Methods", "POST, OPTIONS");
      headers.set("Access-Control-Allow-Headers", "Content-Type");
      headers.set("Access-Control-Max-Age", String(MAX_AGE_SECONDS));
    }
    return new Response(null, { status: 204, headers });
  },

  /** Lets a browser read the launch response (and its errors) when its origin is one an agent allows. */
  response: createMiddleware<AppEnv>(async (c, next) => {
    await next();
    const origin = c.req.header("Origin");
    if (!origin || c.req.header("Authorization") !== undefined) return;
    const verified = c.get("launchOrigin") === origin;
    // A 403 is the origin refusal itself: it must never carry an allow header.
    if (verified || (c.res.status >= 400 && c.res.status !== 403 && (await originKnown(c, origin)))) {
      withCorsHeaders(c.res.headers, origin);
      c.res.headers.set("Access-Control-Expose-Headers", "Retry-After, X-Request-Id");
    }
  }),
};
