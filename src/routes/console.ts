// The console's session routes (docs/api.md): sign in with an API key for an HttpOnly cookie, read it back after a
// reload, sign out. What each does is src/services/console-session.ts; here are the origin, CSRF and cookie checks.
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { describeRoute } from "hono-openapi";
import { AppError } from "../errors";
import {
  clearedSessionCookie,
  consoleCookie,
  liveConsoleSession,
  requireConsolePage,
  requireCsrf,
  requireCsrfHeader,
  requireSameOrigin,
  servesConsole,
  sessionCookie,
} from "../http/console-auth";
import type { AppContext, AppEnv } from "../http/context";
import { countSignInFailure, refuseBlockedSignIn } from "../http/failed-sign-in-limit";
import { readJson } from "../http/json-body";
import { operation } from "../http/openapi";
import { INVALID_API_KEY_MESSAGE } from "../http/tenant-auth";
import { consoleSessionBody, signInToConsole, signOutOfConsole } from "../services/console-session";
import { CONSOLE_CSRF_HEADER, consoleSessionResponse, consoleSignInRequest } from "../shared/console-api";

const MAX_SIGN_IN_BYTES = 2 * 1024;

/** Every answer here carries or ends a session: no cache anywhere may keep one. */
const noStore = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  c.res.headers.set("Cache-Control", "no-store");
});

/** The cookie's live session, or the uniform 401 (which `headers` may add to, e.g. clearing the cookie). */
async function currentSession(c: AppContext, headers: Record<string, string> = {}) {
  const cookie = consoleCookie(c);
  const session = cookie === undefined ? null : await liveConsoleSession(c.env, cookie, Date.now());
  if (session === null) {
    throw new AppError("unauthenticated", "No console session; sign in with an API key.", { headers });
  }
  return session;
}

/** With `CONSOLE_HOST` set, the session routes exist only on that host (docs/operations.md, "The console's own host"). */
const consoleHostOnly = createMiddleware<AppEnv>(async (c, next) => {
  if (!servesConsole(c)) throw new AppError("not_found", "Route not found.");
  await next();
});

export const consoleRoutes = new Hono<AppEnv>()
  .use("*", consoleHostOnly)
  .use("/session", noStore)
  .post(
    "/session",
    describeRoute(
      operation({
        tag: "Console",
        summary: "Sign in to the console with an API key",
        description:
          "Verifies the key as `Authorization: Bearer` would (one uniform 401 for any failure) and answers the session " +
          "with `Set-Cookie: __Host-console=…; HttpOnly; Secure; SameSite=Strict; Path=/; Max-Age=43200`. Only from " +
          "the Worker's own origin. Failed sign-ins are limited per client network (429).",
        auth: "none",
        body: consoleSignInRequest,
        response: {
          status: 201,
          schema: consoleSessionResponse,
          headers: { "Set-Cookie": "The session cookie `__Host-console` (12 h)." },
        },
        errors: [401, 403, 429, 503],
      }),
    ),
    async (c) => {
      requireSameOrigin(c);
      refuseBlockedSignIn(c);
      const body = await readJson(c, consoleSignInRequest, { maxBytes: MAX_SIGN_IN_BYTES });
      const signedIn = await signInToConsole(c.env, body.apiKey);
      if (signedIn === null) {
        await countSignInFailure(c);
        throw new AppError("unauthenticated", INVALID_API_KEY_MESSAGE);
      }
      c.header("Set-Cookie", sessionCookie(signedIn.cookieValue));
      return c.json(signedIn.body, 201);
    },
  )
  .get(
    "/session",
    describeRoute(
      operation({
        tag: "Console",
        summary: "The console session of this cookie (again, after a reload)",
        description:
          `The same body as the sign-in, its \`csrfToken\` included; no \`${CONSOLE_CSRF_HEADER}\` needed here. Only ` +
          "for the console's own pages: an `Origin` that is the console's, or without one `Sec-Fetch-Site: " +
          "same-origin`; any other request (another site's, or one with neither header) is 403 `forbidden`. " +
          "A request without a session cookie is `204` (nothing to resume, and no error on a console's first load); " +
          "a cookie that names no live session is 401.",
        auth: "consoleCookie",
        response: { status: 200, schema: consoleSessionResponse },
        errors: [403, 503],
      }),
    ),
    async (c) => {
      requireConsolePage(c);
      // No cookie at all: a visitor who never signed in here. Not an error, so a first load logs none.
      if (consoleCookie(c) === undefined) return c.body(null, 204);
      return c.json(await consoleSessionBody(c.env, await currentSession(c)));
    },
  )
  .delete(
    "/session",
    describeRoute(
      operation({
        tag: "Console",
        summary: "Sign out: the session ends and its cookie is cleared",
        auth: "consoleSession",
        response: {
          status: 204,
          description: "Signed out.",
          headers: { "Set-Cookie": "Clears `__Host-console` (Max-Age=0)." },
        },
        errors: [503],
      }),
    ),
    async (c) => {
      requireSameOrigin(c);
      requireCsrfHeader(c);
      // A cookie that names no live session is cleared too: the browser keeps nothing that cannot sign in.
      const session = await currentSession(c, { "Set-Cookie": clearedSessionCookie() });
      await requireCsrf(c, session);
      await signOutOfConsole(c.env, session);
      c.header("Set-Cookie", clearedSessionCookie());
      return c.body(null, 204);
    },
  );
