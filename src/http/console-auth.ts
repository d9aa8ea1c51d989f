// The console's cookie session as a credential (docs/api.md): same-origin requests only, the CSRF header on every one,
// and the session re-checked against its API key and tenant each time. tenant-auth.ts falls back to it when a
// request sends no Authorization header; signing in and out is src/services/console-session.ts.
import { getCookie } from "hono/cookie";
import { consoleCsrfToken, parseConsoleSession, verifyConsoleSessionSecret } from "../auth/console-sessions";
import { AppError, fromDatabase } from "../errors";
import { constantTimeEqual } from "../shared/bytes";
import { CONSOLE_COOKIE, CONSOLE_CSRF_HEADER, CONSOLE_SESSION_SECONDS } from "../shared/console-api";
import {
  type ConsoleSessionRecord,
  findConsoleSessionForAuthentication,
} from "../storage/d1/console-sessions";
import type { AppContext, TenantPrincipal } from "./context";

// Unknown ids still pay for one digest and one comparison, like a wrong secret.
const UNKNOWN_SESSION_DIGEST = "0".repeat(64);
const MAX_CSRF_LENGTH = 128;

/** The Worker's own origin, as the request reached it: the only origin the console runs on. */
export function ownOrigin(c: AppContext): string {
  return new URL(c.req.url).origin;
}

/**
 * `CONSOLE_HOST`, lower-cased, or null when empty: then the console shares the Worker's hosts. When set, the console
 * and its session routes answer only on that host, and its origin is that host's (docs/operations.md, "The console's
 * own host").
 */
export function consoleHost(env: Env): string | null {
  const host = (env.CONSOLE_HOST ?? "").trim().toLowerCase();
  return host === "" ? null : host;
}

/** Whether the console is served where this request arrived: on every host, or only on `CONSOLE_HOST`. */
export function servesConsole(c: AppContext): boolean {
  const host = consoleHost(c.env);
  return host === null || new URL(c.req.url).host === host;
}

/** Whether this request arrived on a host of the console's own (`CONSOLE_HOST` set and this is it). */
export function onOwnConsoleHost(c: AppContext): boolean {
  const host = consoleHost(c.env);
  return host !== null && new URL(c.req.url).host === host;
}

/**
 * Refuses a request another site made: an `Origin` that is not the Worker's own, or Fetch Metadata other than
 * `same-origin`. A client that sends neither (not a browser) passes here; the CSRF header still stands in its way.
 */
export function requireSameOrigin(c: AppContext): void {
  const origin = c.req.header("Origin");
  const site = c.req.header("Sec-Fetch-Site");
  if ((origin !== undefined && origin !== ownOrigin(c)) || (site !== undefined && site !== "same-origin")) {
    throw new AppError("forbidden", "Console requests must come from the console's own origin.");
  }
}

/**
 * The CSRF token is handed only to the console's own pages: a request whose `Origin` is the console's origin, or,
 * since a browser's same-origin GET sends no `Origin`, one whose `Sec-Fetch-Site` is `same-origin`. A request with
 * neither header (not a browser page) or from any other site is refused (docs/api.md, "Console session").
 */
export function requireConsolePage(c: AppContext): void {
  const origin = c.req.header("Origin");
  const site = c.req.header("Sec-Fetch-Site");
  const fromConsole =
    origin === undefined
      ? site === "same-origin"
      : origin === ownOrigin(c) && (site === undefined || site === "same-origin");
  if (!fromConsole) {
    throw new AppError("forbidden", "The console session is given only to the console's own pages.");
  }
}

/** The console cookie's value, when the request carries one. */
export function consoleCookie(c: AppContext): string | undefined {
  const value = getCookie(c, CONSOLE_COOKIE);
  return value === undefined || value === "" ? undefined : value;
}

/**
 * The live session a cookie names, or null for every failure alike: malformed, unknown, wrong secret, expired,
 * signed out, its key revoked, its tenant disabled.
 */
export async function liveConsoleSession(
  env: Env,
  cookie: string,
  now: number,
): Promise<ConsoleSessionRecord | null> {
  const parsed = parseConsoleSession(cookie);
  if (parsed === null) return null;
  const record = await fromDatabase(findConsoleSessionForAuthentication(env.DB, parsed.id));
  if (record === null) {
    await verifyConsoleSessionSecret(env.API_KEY_PEPPER, parsed.secret, UNKNOWN_SESSION_DIGEST);
    return null;
  }
  const secretMatches = await verifyConsoleSessionSecret(env.API_KEY_PEPPER, parsed.secret, record.digest);
  const live =
    secretMatches &&
    record.revokedAt === null &&
    record.keyRevokedAt === null &&
    record.tenantStatus === "active" &&
    Date.parse(record.expiresAt) > now;
  return live ? record : null;
}

export function principalOf(session: ConsoleSessionRecord): TenantPrincipal {
  return { kind: "tenant", tenantId: session.tenantId, apiKeyId: session.apiKeyId, scope: session.scope };
}

/** 403 unless the request carries the session's CSRF token (compared in constant time). */
export async function requireCsrf(c: AppContext, session: ConsoleSessionRecord): Promise<void> {
  const sent = csrfHeader(c);
  const expected = await consoleCsrfToken(c.env.API_KEY_PEPPER, session.id);
  if (sent === undefined || !constantTimeEqual(sent, expected)) throw csrfRefused();
}

function csrfHeader(c: AppContext): string | undefined {
  const sent = c.req.header(CONSOLE_CSRF_HEADER);
  return sent === undefined || sent === "" || sent.length > MAX_CSRF_LENGTH ? undefined : sent;
}

const csrfRefused = () =>
  new AppError("forbidden", `Console requests must carry the session's ${CONSOLE_CSRF_HEADER} header.`);

/** 403 for a request without any CSRF header: refused before its cookie is even looked up. */
export function requireCsrfHeader(c: AppContext): void {
  if (csrfHeader(c) === undefined) throw csrfRefused();
}

/**
 * The tenant admin API's second credential: a request with the console cookie and no Authorization header. Another
 * site's request or a missing CSRF header is refused (403) before any look-up; a session that does not stand is null
 * (the caller's uniform 401); a wrong CSRF token for a live session is 403. Every method needs the header, GET too.
 */
export async function consolePrincipal(c: AppContext, cookie: string): Promise<TenantPrincipal | null> {
  // With a console host of its own, the cookie is a credential there only (it is a __Host- cookie of that host).
  if (!servesConsole(c)) return null;
  requireSameOrigin(c);
  requireCsrfHeader(c);
  const session = await liveConsoleSession(c.env, cookie, Date.now());
  if (session === null) return null;
  await requireCsrf(c, session);
  return principalOf(session);
}

const COOKIE_ATTRIBUTES = "Path=/; HttpOnly; Secure; SameSite=Strict";

/** The `Set-Cookie` of a new session. */
export function sessionCookie(value: string): string {
  return `${CONSOLE_COOKIE}=${value}; Max-Age=${CONSOLE_SESSION_SECONDS}; ${COOKIE_ATTRIBUTES}`;
}

/** The `Set-Cookie` that removes the session cookie from the browser. */
export function clearedSessionCookie(): string {
  return `${CONSOLE_COOKIE}=; Max-Age=0; ${COOKIE_ATTRIBUTES}`;
}
