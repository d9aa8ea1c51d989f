// AppError carries a taxonomy code and a public message; internal detail stays in logs.
import { type ErrorCode, HTTP_STATUS } from "./shared/errors";

export type { ErrorCode } from "./shared/errors";

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Safe, structured detail for the client (for example failing field paths). */
  readonly details: unknown;
  /** Seconds, for 429 responses. */
  readonly retryAfter: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: unknown; retryAfter?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.status = HTTP_STATUS[code];
    this.details = options.details;
    this.retryAfter = options.retryAfter;
  }
}

/** An expected failure as a value: how failures cross Durable Object RPC (thrown properties do not survive). */
export type Failure = { ok: false; code: ErrorCode; message: string; details?: unknown; retryAfter?: number };
export type Result<T> = { ok: true; value: T } | Failure;

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const fail = (code: ErrorCode, message: string, details?: unknown): Failure =>
  details === undefined ? { ok: false, code, message } : { ok: false, code, message, details };

/** Turns a returned failure back into a thrown AppError at the HTTP edge. */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.value;
  throw new AppError(result.code, result.message, {
    details: result.details,
    ...(result.retryAfter !== undefined ? { retryAfter: result.retryAfter } : {}),
  });
}

export const errors = {
  badRequest: (message: string, details?: unknown) => new AppError("bad_request", message, { details }),
  unauthenticated: (message = "Authentication required.") => new AppError("unauthenticated", message),
  forbidden: (message = "Not allowed.") => new AppError("forbidden", message),
  notFound: (what = "Resource") => new AppError("not_found", `${what} not found.`),
  conflict: (message: string, details?: unknown) => new AppError("conflict", message, { details }),
  preconditionFailed: (message: string) => new AppError("precondition_failed", message),
};
