// Maps whatever a model provider throws or streams into our taxonomy, never echoing its body, headers or key.
import { APICallError } from "@ai-sdk/provider";
import { z } from "zod";
import type { ErrorCode } from "../shared/errors";

/** A failed model call as a user may see it: a code, a safe message, and whether trying again may help. */
export interface ModelError {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  /** Seconds, when the provider said how long to wait. */
  retryAfter?: number;
}

// Stream error parts are plain objects (e.g. Anthropic's `overloaded_error`); only the status fields are read.
const statusShape = z.looseObject({
  name: z.string().optional(),
  statusCode: z.number().int().optional(),
  isRetryable: z.boolean().optional(),
});

const MESSAGES = {
  auth: "The model provider refused the credentials configured for this agent.",
  notFound: "The model provider does not offer the configured model.",
  rejected: "The model provider rejected the request.",
  rateLimited: "The model provider is rate limiting requests; try again shortly.",
  timeout: "The model provider did not answer in time.",
  unavailable: "The model provider is unavailable; try again shortly.",
  invalid: "The model provider sent a response that could not be read.",
  interrupted: "The model stream ended before the reply was complete.",
} as const;

export const modelErrors = {
  timeout: (): ModelError => ({ code: "upstream_unavailable", message: MESSAGES.timeout, retryable: true }),
  interrupted: (): ModelError => ({
    code: "upstream_unavailable",
    message: MESSAGES.interrupted,
    retryable: true,
  }),
};

export function isTimeoutError(error: unknown): boolean {
  return (error instanceof Error || error instanceof DOMException) && error.name === "TimeoutError";
}

/** Maps an HTTP status from a provider (or none, for a network failure) to a safe model error. */
export function modelErrorFromStatus(status: number | undefined, retryAfter?: number): ModelError {
  const withRetry = (error: ModelError): ModelError =>
    retryAfter === undefined ? error : { ...error, retryAfter };
  if (status === undefined) {
    return { code: "upstream_unavailable", message: MESSAGES.unavailable, retryable: true };
  }
  // A 2xx here means the response started fine and its body broke while streaming.
  if (status < 300) return modelErrors.interrupted();
  if (status === 401 || status === 403) {
    return { code: "upstream_unavailable", message: MESSAGES.auth, retryable: false };
  }
  if (status === 404) return { code: "upstream_unavailable", message: MESSAGES.notFound, retryable: false };
  if (status === 408 || status === 504) return withRetry(modelErrors.timeout());
  if (status === 429) {
    return withRetry({ code: "upstream_unavailable", message: MESSAGES.rateLimited, retryable: true });
  }
  if (status >= 500 || status === 409) {
    return withRetry({ code: "upstream_unavailable", message: MESSAGES.unavailable, retryable: true });
  }
  return { code: "upstream_unavailable", message: MESSAGES.rejected, retryable: false };
}

/** Seconds from a `Retry-After` header (delta-seconds only; dates are ignored), capped at an hour. */
function retryAfterSeconds(headers: Record<string, string> | undefined): number | undefined {
  const raw = headers?.["retry-after"];
  if (raw === undefined || !/^\d{1,6}$/.test(raw.trim())) return undefined;
  return Math.min(Number(raw.trim()), 3600);
}

/** Everything a provider can throw or put in an `error` stream part becomes one of a few safe messages. */
export function toModelError(error: unknown): ModelError {
  if (isTimeoutError(error)) return modelErrors.timeout();
  if (APICallError.isInstance(error)) {
    return modelErrorFromStatus(error.statusCode, retryAfterSeconds(error.responseHeaders));
  }
  const parsed = statusShape.safeParse(error);
  if (parsed.success && parsed.data.statusCode !== undefined) {
    return modelErrorFromStatus(parsed.data.statusCode);
  }
  const name = parsed.success ? parsed.data.name : undefined;
  if (
    name !== undefined &&
    /^AI_(TypeValidationError|JSONParseError|InvalidResponseDataError|EmptyResponseBodyError)$/.test(name)
  ) {
    return { code: "upstream_unavailable", message: MESSAGES.invalid, retryable: true };
  }
  // A dropped connection, a reset stream, or anything unrecognised: the provider could not finish.
  return { code: "upstream_unavailable", message: MESSAGES.unavailable, retryable: true };
}
