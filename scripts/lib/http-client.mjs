// A tiny JSON client for requests the typed client has no method for (health), and failures phrased for a terminal.
import { AgentThreadsError } from "agent-threads/client";
import { CliError } from "./cli.mjs";

/** The server could not be reached at all (nothing listening, DNS, TLS, timeout). */
export class ServerUnreachableError extends CliError {
  constructor(baseUrl, reason) {
    super(`no server answers at ${baseUrl} (${reason}).`);
    this.name = "ServerUnreachableError";
  }
}

/**
 * Sends one request and returns `{status, headers, body}` where body is the parsed JSON (or null when the response
 * is not JSON). Never throws for an HTTP status; throws ServerUnreachableError when there is no response.
 */
export async function request(baseUrl, method, path, { token, body, headers = {}, timeoutMs = 15_000 } = {}) {
  const url = new URL(path, baseUrl);
  const init = { method, headers: { Accept: "application/json", ...headers } };
  if (token !== undefined) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  init.signal = AbortSignal.timeout(timeoutMs);
  let res;
  try {
    res = await fetch(url, init);
  } catch (error) {
    throw new ServerUnreachableError(baseUrl, describeFetchFailure(error, timeoutMs));
  }
  const text = await res.text();
  let parsed = null;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

function describeFetchFailure(error, timeoutMs) {
  if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  const cause = error instanceof Error ? error.cause : undefined;
  const code = cause && typeof cause === "object" && "code" in cause ? cause.code : undefined;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ENOTFOUND") return "host not found";
  if (typeof code === "string") return code;
  return error instanceof Error ? error.message : String(error);
}

/** `401 unauthenticated: Authentication required. (request …)` from an error response of the API. */
export function describeError(res) {
  const error = res.body && typeof res.body === "object" ? res.body.error : undefined;
  if (error && typeof error === "object" && typeof error.code === "string") {
    const message = typeof error.message === "string" ? ` ${error.message}` : "";
    const requestId = typeof error.requestId === "string" ? ` (request ${error.requestId})` : "";
    return `${res.status} ${error.code}:${message}${requestId}`;
  }
  return `HTTP ${res.status}`;
}

/**
 * The terminal's phrasing of a failed `agent-threads/client` call: `401 unauthenticated: … (request …)` like
 * describeError, or "no server answers" when nothing answered at all.
 */
export function describeClientError(error) {
  if (error instanceof AgentThreadsError) {
    if (error.status === 0) return error.message;
    const requestId = error.requestId !== undefined ? ` (request ${error.requestId})` : "";
    return `${error.status} ${error.code}: ${error.message}${requestId}`;
  }
  return error instanceof Error ? error.message : String(error);
}
