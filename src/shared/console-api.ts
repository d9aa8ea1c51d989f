// The console contract (docs/api.md): the cookie session the console signs in with, and its draft playground's launches.
import { z } from "zod";
import { API_KEY_SCOPES } from "./api";

/** The cookie that carries a console session (`__Host-`: Secure, Path=/, no Domain). */
export const CONSOLE_COOKIE = "__Host-console";
/** The header every console request carries: the session's `csrfToken`. */
export const CONSOLE_CSRF_HEADER = "X-Console-CSRF";
/** A console session lasts 12 hours from sign-in, never extended. */
export const CONSOLE_SESSION_SECONDS = 12 * 60 * 60;

/** `POST /v1/console/session`: the tenant API key, exchanged once for the cookie and never stored by the browser. */
export const consoleSignInRequest = z.strictObject({
  apiKey: z.string().min(1).max(512).describe("A tenant API key `sk_…` (admin or read scope)."),
});

/** What `POST` and `GET /v1/console/session` answer. */
export const consoleSessionResponse = z.strictObject({
  tenantId: z.string(),
  tenantName: z.string(),
  /** The id of the API key that signed in (as `GET /v1/api-keys` lists it). */
  keyId: z.string(),
  /** The key's scope: a `read` session may look at everything and change nothing. */
  scope: z.enum(API_KEY_SCOPES),
  csrfToken: z
    .string()
    .describe(
      "Send it as `X-Console-CSRF` on every request the cookie authenticates; GET here again after a reload.",
    ),
  expiresAt: z.iso.datetime(),
});
export type ConsoleSessionResponse = z.infer<typeof consoleSessionResponse>;
