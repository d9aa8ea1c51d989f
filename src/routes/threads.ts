// The edge gate for thread traffic: verify the launch token and Origin, derive the object name, forward clean requests.
import { Hono } from "hono";
import { z } from "zod";
import { threadObjectName } from "../auth/do-name";
import { tokenError } from "../auth/jwt";
import { type LaunchClaims, verifyLaunchToken } from "../auth/launch-token";
import { MAX_TOKEN_BYTES } from "../auth/token-policy";
import { AppError } from "../errors";
import { bearerToken } from "../http/bearer";
import type { AppContext, AppEnv } from "../http/context";
import { threadCors } from "../http/launch-cors";
import { deploymentStore } from "../http/store";
import { ERROR_CODES } from "../shared/errors";
import { originAllowed } from "../shared/origin-policy";
import { BEARER_PREFIX, PROTOCOL } from "../shared/protocol";
import { findThread } from "../storage/d1/thread-registry";
import { CLAIMS_HEADER, threadClaimsFrom } from "../thread/claims";

const INTERNAL_ORIGIN = "https://thread.internal";
const TOKEN_QUERY_PARAMS = ["token", "access_token", "bearer", "jwt"];

/** `Authorization: Bearer <jwt>` only; Basic, Token, … carry no launch token. */
export function launchBearer(header: string | undefined): string | null {
  return bearerToken(header, MAX_TOKEN_BYTES + "Bearer ".length);
}

/** `Sec-WebSocket-Protocol` must offer `agent.v1` and exactly one `bearer.<token>`. */
function tokenFromSubprotocols(header: string | undefined): string | null {
  if (!header) return null;
  const offered = header.split(",").map((p) => p.trim());
  const bearers = offered.filter((p) => p.startsWith(BEARER_PREFIX));
  if (!offered.includes(PROTOCOL) || bearers.length !== 1) return null;
  return bearers[0]!.slice(BEARER_PREFIX.length);
}

/**
 * Verifies a launch token for this request. Thread routes (`threadFromPath`, the default) require the path's
 * thread to be the token's; `/v1/me/*` has no thread in its path and is scoped by the token's own thread.
 */
export async function authorize(
  c: AppContext,
  token: string | null,
  options: { threadFromPath?: boolean } = {},
): Promise<LaunchClaims> {
  const url = new URL(c.req.url);
  if (TOKEN_QUERY_PARAMS.some((name) => url.searchParams.has(name))) {
    throw new AppError("unauthenticated", "Tokens are accepted only in headers.");
  }
  if (token === null) throw new AppError("unauthenticated", "Authentication required.");
  const verified = await verifyLaunchToken(c.env, token);
  if (!verified.ok) {
    console.log(JSON.stringify({ level: "info", requestId: c.get("requestId"), refused: verified.reason }));
    throw tokenError(verified);
  }
  const claims = verified.claims;
  // Another thread is "not found" for this token whether or not it exists: no existence oracle (SPEC §3).
  if ((options.threadFromPath ?? true) && c.req.param("threadId") !== claims.threadId) {
    throw new AppError("not_found", "Thread not found.");
  }

  const agent = await deploymentStore(c).getAgent(claims.tenantId, claims.agentEntityId);
  if (agent === null) throw new AppError("unauthenticated", "Authentication required.");
  if (agent.status !== "active") throw new AppError("forbidden", "This agent is disabled.");
  const origin = c.req.header("Origin");
  if (agent.visibility === "public" || origin !== undefined) {
    if (!originAllowed(origin, agent.allowedOrigins)) throw new AppError("forbidden", "Origin not allowed.");
    if (claims.origin !== undefined && claims.origin !== origin) {
      throw new AppError("forbidden", "The token was issued for another origin.");
    }
    c.set("launchOrigin", origin);
  }
  const thread = await findThread(c.env.DB, claims.tenantId, claims.threadId);
  if (thread === null || thread.deletedAt !== null || thread.subject !== claims.sub) {
    throw new AppError("unauthenticated", "Authentication required.");
  }
  return claims;
}

async function threadStub(c: AppContext, claims: LaunchClaims) {
  const name = await threadObjectName(c.env.DO_NAME_KEY, {
    tenantId: claims.tenantId,
    environment: claims.environment,
    agentEntityId: claims.agentEntityId,
    threadId: claims.threadId,
  });
  return c.env.THREAD.get(c.env.THREAD.idFromName(name));
}

/** A request built from scratch: no client header reaches the object unless named here. */
function internalRequest(
  c: AppContext,
  path: string,
  claims: LaunchClaims,
  pass: readonly string[],
): Request {
  const headers = new Headers();
  for (const name of pass) {
    const value = c.req.header(name);
    if (value !== undefined) headers.set(name, value);
  }
  headers.set(CLAIMS_HEADER, JSON.stringify(threadClaimsFrom(claims)));
  const url = new URL(path, INTERNAL_ORIGIN);
  const source = new URL(c.req.url);
  url.search = source.search;
  const method = c.req.method;
  return new Request(url, {
    method,
    headers,
    ...(method === "GET" || method === "HEAD" ? {} : { body: c.req.raw.body }),
  });
}

const objectError = z.object({
  error: z.object({ code: z.enum(ERROR_CODES), message: z.string(), details: z.unknown().optional() }),
});

/** The object's errors become the Worker's (same taxonomy, this request's id); other responses pass through. */
async function fromThreadObject(res: Response): Promise<Response> {
  if (res.status < 400) return new Response(res.body, res);
  const parsed = objectError.safeParse(await res.json().catch(() => null));
  if (!parsed.success) throw new AppError("internal", "Internal error.");
  const retryAfter = Number(res.headers.get("Retry-After"));
  throw new AppError(parsed.data.error.code, parsed.data.error.message, {
    details: parsed.data.error.details,
    ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfter } : {}),
  });
}

const WS_PASS = [
  "Upgrade",
  "Connection",
  "Sec-WebSocket-Key",
  "Sec-WebSocket-Version",
  "Sec-WebSocket-Extensions",
];
const HTTP_PASS = ["Content-Type", "Content-Length", "Accept", "Last-Event-ID"];

export const threads = new Hono<AppEnv>()
  .use("/threads/*", threadCors.response)
  .options("/threads/*", threadCors.preflight)
  .get("/threads/:threadId/ws", async (c) => {
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
      return c.json(
        {
          error: {
            code: "bad_request",
            message: "This endpoint needs a WebSocket upgrade.",
            requestId: c.get("requestId"),
          },
        },
        426,
        { Upgrade: "websocket" },
      );
    }
    const claims = await authorize(c, tokenFromSubprotocols(c.req.header("Sec-WebSocket-Protocol")));
    const stub = await threadStub(c, claims);
    const request = internalRequest(c, "/ws", claims, WS_PASS);
    request.headers.set("Sec-WebSocket-Protocol", PROTOCOL);
    const res = await stub.fetch(request);
    if (res.status !== 101 || res.webSocket === null) return fromThreadObject(res);
    return new Response(null, {
      status: 101,
      webSocket: res.webSocket,
      headers: { "Sec-WebSocket-Protocol": PROTOCOL },
    });
  })
  .on(["GET", "POST"], ["/threads/:threadId", "/threads/:threadId/*"], async (c) => {
    const claims = await authorize(c, launchBearer(c.req.header("Authorization")));
    const stub = await threadStub(c, claims);
    const rest = new URL(c.req.url).pathname.replace(/^\/v1\/threads\/[^/]+/, "") || "/";
    return fromThreadObject(await stub.fetch(internalRequest(c, `/http${rest}`, claims, HTTP_PASS)));
  });
