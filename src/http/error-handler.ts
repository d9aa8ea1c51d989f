// The one place that shapes error responses: taxonomy code and reason, public message, request id — never a stack.
import type { ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { AppError } from "../errors";
import type { ErrorBody } from "../shared/errors";
import type { AppEnv } from "./context";

export function errorResponse(error: AppError, requestId: string): Response {
  const body: ErrorBody = {
    error: {
      code: error.code,
      ...(error.reason !== undefined ? { reason: error.reason } : {}),
      message: error.message,
      requestId,
    },
  };
  if (error.details !== undefined) body.error.details = error.details;
  const headers = new Headers({ ...error.headers, "Content-Type": "application/json; charset=utf-8" });
  if (error.retryAfter !== undefined)
    headers.set("Retry-After", String(Math.max(1, Math.ceil(error.retryAfter))));
  return new Response(JSON.stringify(body), { status: error.status, headers });
}

function fromHttpException(error: HTTPException): AppError {
  switch (error.status) {
    case 400:
      return new AppError("bad_request", "Malformed request.");
    case 401:
      return new AppError("unauthenticated", "Authentication required.");
    case 403:
      return new AppError("forbidden", "Not allowed.");
    case 404:
      return new AppError("not_found", "Not found.");
    case 413:
      return new AppError("payload_too_large", "Request body too large.");
    case 415:
      return new AppError("unsupported_media_type", "Content-Type must be application/json.");
    default:
      return new AppError("internal", "Internal error.");
  }
}

export const onError: ErrorHandler<AppEnv> = (err, c) => {
  const requestId = c.get("requestId") ?? crypto.randomUUID();
  let appError: AppError;
  if (err instanceof AppError) {
    appError = err;
  } else if (err instanceof HTTPException) {
    appError = fromHttpException(err);
  } else {
    console.error(JSON.stringify({ level: "error", requestId, message: "unhandled", error: String(err) }));
    appError = new AppError("internal", "Internal error.");
  }
  const res = errorResponse(appError, requestId);
  res.headers.set("X-Request-Id", requestId);
  return res;
};

export const notFound: NotFoundHandler<AppEnv> = (c) =>
  errorResponse(new AppError("not_found", "Route not found."), c.get("requestId") ?? crypto.randomUUID());
