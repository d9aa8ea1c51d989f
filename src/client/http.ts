// The client's one request path: base URL, bearer credential, JSON in and out, and every error as AgentThreadsError.
import type { ErrorCode, ErrorReason } from "../shared/errors";

/** A `fetch` with the global's signature: Node's, a browser's, or a Worker's `SELF.fetch` in tests. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** The Worker's origin, for example `https://agents.example.com` or `http://127.0.0.1:8787`. */
  baseUrl: string | URL;
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike;
  /** Sent with every request (for example a tracing header). */
  headers?: Record<string, string>;
  /** Aborts a request that has no answer after this many milliseconds (default 30,000; 0: never). */
  timeoutMs?: number;
}

/** Every failure the API answers, as one class: the docs/api.md taxonomy code, plus what the body and headers said. */
export class AgentThreadsError extends Error {
  override readonly name = "AgentThreadsError";
  /** HTTP status; 0 when no response arrived (network failure or timeout). */
  readonly status: number;
  /** The taxonomy code; for an answer that is not an API error body (a proxy's page), the status's code. */
  readonly code: ErrorCode;
  /** Why, beside the code, where one can act on it: `no_active_release`, a model provider's failure. */
  readonly reason: ErrorReason | undefined;
  /** The server's request id: quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** Structured detail, for example `[{path, message}]` for a 400's failing fields. */
  readonly details: unknown;
  /** Seconds to wait before trying again (429 `Retry-After`). */
  readonly retryAfter: number | undefined;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    extra: {
      reason?: ErrorReason | undefined;
      requestId?: string | undefined;
      details?: unknown;
      retryAfter?: number | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: extra.cause });
    this.status = status;
    this.code = code;
    this.reason = extra.reason;
    this.requestId = extra.requestId;
    this.details = extra.details;
    this.retryAfter = extra.retryAfter;
  }
}

interface WireError {
  code?: unknown;
  reason?: unknown;
  message?: unknown;
  requestId?: unknown;
  details?: unknown;
}

function retryAfterOf(headers: Headers): number | undefined {
  const raw = headers.get("Retry-After");
  if (raw === null) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return seconds;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** The code of an answer that is not an API error body (a proxy's page, a gateway's 502), from its status. */
function codeOfStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
      return "bad_request";
    case 401:
      return "unauthenticated";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 410:
      return "gone";
    case 409:
      return "conflict";
    case 412:
      return "precondition_failed";
    case 413:
      return "payload_too_large";
    case 415:
      return "unsupported_media_type";
    case 429:
      return "rate_limited";
    case 502:
    case 503:
    case 504:
      return "upstream_unavailable";
    default:
      return "internal";
  }
}

/** The error a non-2xx response stands for; a body that is not `{error: {code, message}}` still becomes one. */
export async function errorFromResponse(res: Response): Promise<AgentThreadsError> {
  const text = await res.text().catch(() => "");
  let wire: WireError | undefined;
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === "object" && body !== null && "error" in body) {
      const error = (body as { error: unknown }).error;
      if (typeof error === "object" && error !== null) wire = error as WireError;
    }
  } catch {
    wire = undefined;
  }
  const requestId =
    typeof wire?.requestId === "string" ? wire.requestId : (res.headers.get("X-Request-Id") ?? undefined);
  const retryAfter = retryAfterOf(res.headers);
  if (wire === undefined || typeof wire.code !== "string") {
    return new AgentThreadsError(
      res.status,
      codeOfStatus(res.status),
      `HTTP ${res.status}: ${text.slice(0, 200)}`,
      {
        requestId,
        retryAfter,
      },
    );
  }
  return new AgentThreadsError(
    res.status,
    wire.code as ErrorCode,
    typeof wire.message === "string" ? wire.message : `HTTP ${res.status}`,
    {
      reason: typeof wire.reason === "string" ? (wire.reason as ErrorReason) : undefined,
      requestId,
      details: wire.details,
      retryAfter,
    },
  );
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface CallOptions {
  /** Serialised as JSON with `Content-Type: application/json`. */
  body?: unknown;
  query?: Query | undefined;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** `{items, nextCursor?}`: every list endpoint's page (docs/api.md). */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

export interface PageQuery {
  cursor?: string;
  /** Default 50, max 200. */
  limit?: number;
}

/**
 * Sends requests for one credential (`Authorization: Bearer <credential>`, or none). Responses are typed from the
 * shared zod schemas and not parsed again: the server already holds to them, and a field it adds later must not
 * break an older client (docs/decisions.md, "The typed client").
 */
export class Transport {
  readonly baseUrl: URL;
  readonly #fetch: FetchLike;
  readonly #headers: Record<string, string>;
  readonly #credential: string | undefined;
  readonly #timeoutMs: number;

  constructor(options: ClientOptions, credential?: string) {
    this.baseUrl = new URL(options.baseUrl);
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#headers = options.headers ?? {};
    this.#credential = credential;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** The raw response of a request; a non-2xx answer throws AgentThreadsError. */
  async send(method: string, path: string, options: CallOptions = {}): Promise<Response> {
    const url = new URL(path, this.baseUrl);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers = new Headers({ Accept: "application/json", ...this.#headers, ...options.headers });
    if (this.#credential !== undefined) headers.set("Authorization", `Bearer ${this.#credential}`);
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers.set("Content-Type", "application/json");
    }
    const signals = [options.signal, this.#timeoutMs > 0 ? AbortSignal.timeout(this.#timeoutMs) : undefined];
    const active = signals.filter((s): s is AbortSignal => s !== undefined);
    let res: Response;
    try {
      res = await this.#fetch(url.toString(), {
        method,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(active.length > 0 ? { signal: AbortSignal.any(active) } : {}),
      });
    } catch (error) {
      const timedOut = error instanceof Error && error.name === "TimeoutError";
      const what = timedOut ? `no answer within ${this.#timeoutMs} ms` : describeFetchFailure(error);
      throw new AgentThreadsError(0, "upstream_unavailable", `${method} ${url.pathname}: ${what}`, {
        cause: error,
      });
    }
    if (!res.ok) throw await errorFromResponse(res);
    return res;
  }

  /** The JSON body of a 2xx answer, as the route's shared response type. */
  async json<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
    const res = await this.send(method, path, options);
    return (await res.json()) as T;
  }

  /** A request whose success has no body (204). */
  async empty(method: string, path: string, options: CallOptions = {}): Promise<void> {
    const res = await this.send(method, path, options);
    await res.body?.cancel();
  }
}

function describeFetchFailure(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined;
  if (code === "ECONNREFUSED") return "connection refused";
  if (typeof code === "string") return code;
  if (cause instanceof Error) return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** A path segment from a caller's id: encoded, so an id can never walk to another route. */
export const seg = (value: string | number): string => encodeURIComponent(String(value));

/** Every item of a list, page after page (stops when the server gives no `nextCursor`). */
export async function* eachItem<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.items;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
}
