// The one error taxonomy of the product (docs/api.md), shared by the Worker and the widget.
import type { ErrorReason } from "./error-reasons";

export const ERROR_CODES = [
  "bad_request",
  "unauthenticated",
  "token_expired",
  "forbidden",
  "not_found",
  "gone",
  "conflict",
  "precondition_failed",
  "payload_too_large",
  "unsupported_media_type",
  "rate_limited",
  "quota_exceeded",
  "upstream_unavailable",
  "internal",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export type { ErrorReason, ProviderErrorReason } from "./error-reasons";

/** HTTP status for every code; a `Record` so an unmapped code fails to compile. */
export const HTTP_STATUS: Record<
  ErrorCode,
  400 | 401 | 403 | 404 | 409 | 410 | 412 | 413 | 415 | 429 | 500 | 502
> = {
  bad_request: 400,
  unauthenticated: 401,
  token_expired: 401,
  forbidden: 403,
  not_found: 404,
  gone: 410,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  quota_exceeded: 429,
  upstream_unavailable: 502,
  internal: 500,
};

/** WebSocket close code for every code; `null` where the code never closes a socket. */
export const WS_CLOSE_CODE: Record<ErrorCode, number | null> = {
  bad_request: 4400,
  unauthenticated: 4401,
  token_expired: 4401,
  forbidden: 4403,
  not_found: 4404,
  gone: null,
  conflict: 4409,
  precondition_failed: null,
  payload_too_large: 1009,
  unsupported_media_type: null,
  rate_limited: 4429,
  quota_exceeded: 4429,
  upstream_unavailable: 1013,
  internal: 1011,
};

/** Close code for a socket that stayed idle too long; the thread itself goes on. */
export const WS_CLOSE_IDLE = 4408;

/** Close codes after which a client must not reconnect on its own (it needs a new token or a fix). */
export function isTerminalCloseCode(code: number): boolean {
  return code >= 4400 && code < 4500 && code !== WS_CLOSE_IDLE && code !== 4429;
}

export interface ErrorBody {
  error: { code: ErrorCode; reason?: ErrorReason; message: string; requestId: string; details?: unknown };
}
