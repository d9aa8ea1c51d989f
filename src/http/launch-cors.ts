// CORS for the browser-facing endpoints (launch, thread HTTP): only origins an active agent allows are reflected.
import type { MiddlewareHandler } from "hono";
import { createMiddleware } from "hono/factory";
import { enforcePreflightLimit } from "../auth/abuse-limits";
import { clientIp } from "../auth/rate-limit";
import type { AppContext, AppEnv } from "./context";
import { originKnown } from "./origin-lookup";

const MAX_AGE_SECONDS = 600;

export function withCorsHeaders(headers: Headers, origin: string): void {
  headers.set("Access-Control-Allow-Origin", origin);
  headers.append("Vary", "Origin");
}

interface CorsPolicy {
  methods: string;
  allowHeaders: string;
  /** The launch endpoint's backend callers send `Authorization` and are never browsers: no CORS for them. */
  skipWhenAuthorized: boolean;
}

function corsPolicy(policy: CorsPolicy): {
  preflight: (c: AppContext) => Promise<Response>;
  response: MiddlewareHandler<AppEnv>;
} {
  return {
    /**
     * Preflight carries no credential: answer it for origins some active agent allows, and nothing else. One that
     * needs a D1 look-up counts against its client network's preflight limit first (429 past it).
     */
    preflight: async (c: AppContext) => {
      const origin = c.req.header("Origin");
      const headers = new Headers({ Vary: "Origin" });
      const beforeRead = () => enforcePreflightLimit(c.env, clientIp(c.req.raw));
      if (origin && (await originKnown(c.env.DB, origin, { beforeRead }))) {
        headers.set("Access-Control-Allow-Origin", origin);
        headers.set("Access-Control-Allow-Methods", policy.methods);
        headers.set("Access-Control-Allow-Headers", policy.allowHeaders);
        headers.set("Access-Control-Max-Age", String(MAX_AGE_SECONDS));
      }
      return new Response(null, { status: 204, headers });
    },

    /**
     * Lets a browser read a response when the route verified its origin for the agent, and read errors (a 401 that
     * says "refresh your token", a 429) when some agent allows the origin. A 403 is the origin refusal itself: it
     * never carries an allow header.
     */
    response: createMiddleware<AppEnv>(async (c, next) => {
      await next();
      if (c.req.method === "OPTIONS" || c.res.status === 101) return;
      const origin = c.req.header("Origin");
      if (!origin || (policy.skipWhenAuthorized && c.req.header("Authorization") !== undefined)) return;
      const verified = c.get("launchOrigin") === origin;
      if (
        verified ||
        (c.res.status >= 400 && c.res.status !== 403 && (await knownOrElse(c.env.DB, origin)))
      ) {
        withCorsHeaders(c.res.headers, origin);
        c.res.headers.set("Access-Control-Expose-Headers", "Retry-After, X-Request-Id");
      }
    }),
  };
}

/** While D1 cannot answer, an origin counts as unknown: the error keeps its status, without an allow header. */
async function knownOrElse(db: D1Database, origin: string): Promise<boolean> {
  try {
    return await originKnown(db, origin);
  } catch {
    return false;
  }
}

export const launchCors = corsPolicy({
  methods: "POST, OPTIONS",
  allowHeaders: "Content-Type",
  skipWhenAuthorized: true,
});

export const threadCors = corsPolicy({
  methods: "GET, POST, DELETE, OPTIONS",
  allowHeaders: "Authorization, Content-Type, Accept, Last-Event-ID, X-Attachment-Name",
  skipWhenAuthorized: false,
});
