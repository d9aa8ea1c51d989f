// Error responses from inside the thread object; the Worker re-issues them with its own request id.
import { type ErrorCode, HTTP_STATUS } from "../shared/errors";

export function objectError(
  code: ErrorCode,
  message: string,
  options: { details?: unknown; retryAfter?: number } = {},
): Response {
  const headers: Record<string, string> = {};
  if (options.retryAfter !== undefined) headers["Retry-After"] = String(options.retryAfter);
  const details = options.details !== undefined ? { details: options.details } : {};
  return Response.json(
    { error: { code, message, requestId: "", ...details } },
    { status: HTTP_STATUS[code], headers },
  );
}
