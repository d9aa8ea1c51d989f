// AppError carries a taxonomy code and a public message; internal detail stays in logs.
import { type ErrorCode, type ErrorReason, HTTP_STATUS } from "./shared/errors";

export type { ErrorCode, ErrorReason } from "./shared/errors";

export class AppError extends Error {
  readonly code: ErrorCode;
  /** Why, beside the code, where a client can act on it (docs/protocol.md): `no_active_release`, a provider's failure. */
  readonly reason: ErrorReason | undefined;
  readonly status: number;
  /** Safe, structured detail for the client (for example failing field paths). */
  readonly details: unknown;
  /** Seconds, for 429 responses. */
  readonly retryAfter: number | undefined;
  /** Response headers the status itself requires (426 names the protocol to upgrade to). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: {
      reason?: ErrorReason;
      details?: unknown;
      retryAfter?: number;
      cause?: unknown;
      /**
       * The statuses the taxonomy does not own: 426 Upgrade Required (answered as `bad_request`), and 503 for
       * `upstream_unavailable` when the platform's own database cannot be reached (`databaseUnavailable`).
       */
      status?: 426 | 503;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.reason = options.reason;
    this.status = options.status ?? HTTP_STATUS[code];
    this.details = options.details;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers ?? {};
  }
}

/** Seconds a client waits before retrying while the database is unreachable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** The platform's database (D1) could not be read or written: 503 with Retry-After, nothing stored. */
export function databaseUnavailable(cause?: unknown): AppError {
  return new AppError("upstream_unavailable", "The service is briefly unavailable; try again.", {
    status: 503,
    retryAfter: DATABASE_RETRY_AFTER_SECONDS,
    cause,
  });
}

/** `work` against the database; its failure (not an AppError it threw on purpose) becomes `databaseUnavailable`. */
export async function fromDatabase<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw databaseUnavailable(error);
  }
}

/** An expected failure as a value: how failures cross Durable Object RPC (thrown properties do not survive). */
export type Failure = {
  ok: false;
  code: ErrorCode;
  reason?: ErrorReason;
  message: string;
  details?: unknown;
  retryAfter?: number;
};
export type Result<T> = { ok: true; value: T } | Failure;

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = (code: ErrorCode, message: string, details?: unknown): Failure =>
  details === undefined ? { ok: false, code, message } : { ok: false, code, message, details };

/**
 * A failure as it crosses into or out of a Durable Object (RPC return values and the object's fetch errors): no
 * `details`. Internal details stay inside the object, and an `unknown` member would make workers-types drop the
 * whole failure branch from the stub's return type (it is not `Rpc.Serializable`).
 */
export type Refusal = Omit<Failure, "details">;
export type RpcResult<T> = { ok: true; value: T } | Refusal;

export function refusal(failure: Failure): Refusal {
  return {
    ok: false,
    code: failure.code,
    ...(failure.reason !== undefined ? { reason: failure.reason } : {}),
    message: failure.message,
    ...(failure.retryAfter !== undefined ? { retryAfter: failure.retryAfter } : {}),
  };
}

/** A returned failure as the AppError the HTTP edge throws. */
export function failureError(failure: Failure): AppError {
  return new AppError(failure.code, failure.message, {
    ...(failure.reason !== undefined ? { reason: failure.reason } : {}),
    details: failure.details,
    ...(failure.retryAfter !== undefined ? { retryAfter: failure.retryAfter } : {}),
  });
}

/** Turns a returned failure back into a thrown AppError at the HTTP edge. */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw failureError(result);
}

export const errors = {
  badRequest: (message: string, details?: unknown) => new AppError("bad_request", message, { details }),
  unauthenticated: (message = "Authentication required.") => new AppError("unauthenticated", message),
  forbidden: (message = "Not allowed.") => new AppError("forbidden", message),
  notFound: (what = "Resource") => new AppError("not_found", `${what} not found.`),
  conflict: (message: string, details?: unknown) => new AppError("conflict", message, { details }),
  preconditionFailed: (message: string) => new AppError("precondition_failed", message),
};
