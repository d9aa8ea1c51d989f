// The console's one way to the API: the signed-in session (docs/api.md) and the typed client over it. The API key is
// sent once, to POST /v1/console/session, and never kept: the browser holds only the HttpOnly cookie, and this module
// holds the session's CSRF token in memory (a reload asks GET /v1/console/session for it again).
import { signal } from "@preact/signals";
import { AdminClient } from "../client/admin";
import { AgentThreadsError, errorFromResponse } from "../client/http";

/** What GET/POST /v1/console/session answer. */
export interface ConsoleSession {
  tenantId: string;
  tenantName: string;
  keyId: string;
  /** The key's scope; `read`: the console shows everything and changes nothing. */
  scope: "admin" | "read";
  csrfToken: string;
  expiresAt: string;
}

/** The signed-in session, `null` when signed out, `undefined` while the first check runs. */
export const session = signal<ConsoleSession | null | undefined>(undefined);

/** Why the sign-in shows again ("Signed out.", "Your session ended…"), for the sign-in screen to say. */
export const signedOutReason = signal<string | undefined>(undefined);

let client: AdminClient | undefined;

/** The typed client for the signed-in tenant: the session cookie plus `X-Console-CSRF`, never a key. */
export function api(): AdminClient {
  const current = session.value;
  if (!current) throw new AgentThreadsError(401, "unauthenticated", "Sign in first.");
  client ??= new AdminClient({
    baseUrl: location.origin,
    headers: { "X-Console-CSRF": current.csrfToken },
    fetch: signedOutOn401,
  });
  return client;
}

/** True when the signed-in key may change things. */
export const canWrite = (): boolean => session.value?.scope === "admin";

/** A 401 from any call means the session ended (expired, signed out elsewhere, key revoked): show the sign-in. */
async function signedOutOn401(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const res = await fetch(input, { ...init, credentials: "same-origin" });
  if (res.status === 401 && session.peek()) {
    clearSession("Your session ended (it expired, or was signed out elsewhere). Sign in again.");
  }
  return res;
}

function clearSession(reason: string | undefined): void {
  client = undefined;
  signedOutReason.value = reason;
  session.value = null;
}

async function sessionCall(method: "GET" | "POST" | "DELETE", body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const csrf = session.value?.csrfToken;
  if (csrf !== undefined) headers["X-Console-CSRF"] = csrf;
  return fetch("/v1/console/session", {
    method,
    headers,
    credentials: "same-origin",
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** On load: resume the cookie's session if there is one. */
export async function restoreSession(): Promise<void> {
  const res = await sessionCall("GET").catch(() => undefined);
  // 204: no session cookie, nothing to resume.
  if (res?.status === 200) {
    client = undefined;
    session.value = (await res.json()) as ConsoleSession;
  } else {
    clearSession(undefined);
  }
}

/** Exchanges the key for the session cookie; the key is not kept anywhere after this call. */
export async function signIn(apiKey: string): Promise<void> {
  const res = await sessionCall("POST", { apiKey });
  if (!res.ok) throw await errorFromResponse(res);
  client = undefined;
  signedOutReason.value = undefined;
  session.value = (await res.json()) as ConsoleSession;
}

/** Ends the session on the server (the cookie stops working there too), then shows the sign-in. */
export async function signOut(): Promise<void> {
  const res = await sessionCall("DELETE").catch(() => undefined);
  clearSession(
    res === undefined || res.ok || res.status === 401
      ? "Signed out."
      : "Signed out in this tab; the server did not confirm it. Sign in and out again to be sure.",
  );
}

/** A plain JSON call for routes the typed client does not cover yet (same cookie and CSRF header). */
export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const current = session.value;
  const headers: Record<string, string> = { Accept: "application/json" };
  if (current) headers["X-Console-CSRF"] = current.csrfToken;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await signedOutOn401(path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw await errorFromResponse(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** A sentence for any failure, with the request id to quote. */
export function describeError(error: unknown): string {
  if (error instanceof AgentThreadsError) {
    const id = error.requestId ? ` (request ${error.requestId})` : "";
    return `${error.message}${id}`;
  }
  return error instanceof Error ? error.message : String(error);
}
