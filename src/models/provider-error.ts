// Maps whatever a model provider throws or streams into our taxonomy, never echoing its body, headers or key.
import { APICallError } from "@ai-sdk/provider";
import { z } from "zod";
import type { ProviderErrorReason } from "../shared/error-reasons";
import type { ErrorCode } from "../shared/errors";

/** A failed model call as a user may see it: a code and reason, a safe message, and whether trying again may help. */
export interface ModelError {
  code: ErrorCode;
  /** Why the provider failed (docs/protocol.md), on every `upstream_unavailable`: what the owner or user can do differs. */
  reason?: ProviderErrorReason;
  message: string;
  retryable: boolean;
  /** Seconds, when the provider said how long to wait. */
  retryAfter?: number;
}

// Stream error parts are plain objects (e.g. Anthropic's `{type: "overloaded_error"}`); only these fields are read.
const statusShape = z.looseObject({
  name: z.string().optional(),
  statusCode: z.number().int().optional(),
  isRetryable: z.boolean().optional(),
});

/**
 * The parts of a provider's error body that say why, in the shapes the providers document: OpenAI's
 * `{error: {code, type, message}}` (also what OpenAI-compatible servers send), Anthropic's
 * `{type: "error", error: {type, message}}`, and a stream's error part, which is the inner object itself. The
 * message is only matched against known phrases, never kept.
 */
const errorDetail = z.looseObject({
  code: z.union([z.string(), z.number()]).nullish(),
  type: z.string().nullish(),
  message: z.string().nullish(),
});
const errorEnvelope = z.looseObject({ error: errorDetail });

const MESSAGES = {
  auth: "The model provider refused the credentials configured for this agent.",
  notFound: "The model provider does not offer the configured model.",
  rejected: "The model provider rejected the request.",
  rateLimited: "The model provider is rate limiting requests; try again shortly.",
  contextLength:
    "The conversation is too long for the model; start a new conversation or send a shorter message.",
  contentFilter: "The model provider's content filter stopped this reply.",
  timeout: "The model provider did not answer in time.",
  network: "The model provider could not be reached; try again shortly.",
  unavailable: "The model provider is unavailable; try again shortly.",
  invalid: "The model provider sent a response that could not be read.",
  interrupted: "The model stream ended before the reply was complete.",
} as const;

const upstream = (reason: ProviderErrorReason, message: string, retryable: boolean): ModelError => ({
  code: "upstream_unavailable",
  reason,
  message,
  retryable,
});

export const modelErrors = {
  timeout: (): ModelError => upstream("timeout", MESSAGES.timeout, true),
  /** The stream ended early: `network` when the connection dropped, `other` when the provider said it failed. */
  interrupted: (reason: "network" | "other" = "network"): ModelError =>
    upstream(reason, MESSAGES.interrupted, true),
  contentFilter: (): ModelError => upstream("content_filter", MESSAGES.contentFilter, false),
};

export function isTimeoutError(error: unknown): boolean {
  return (error instanceof Error || error instanceof DOMException) && error.name === "TimeoutError";
}

/** Workers AI internal codes (developers.cloudflare.com/workers-ai/platform/errors) whose meaning is not their status. */
const WORKERS_AI_REASONS: Record<number, ProviderErrorReason> = {
  5007: "not_found", // "No such model", answered 400
  3042: "not_found",
  3006: "context_length", // "Request is too large", 413
  5021: "context_length", // the input and max output tokens exceed the model's context window
  3007: "timeout",
  3036: "rate_limited", // the account's daily allocation is used up
  3040: "rate_limited", // out of capacity
};

const CONTEXT_LENGTH_CODES = new Set([
  "context_length_exceeded",
  "string_above_max_length",
  "request_too_large",
]);
const CONTEXT_LENGTH_TEXT =
  /context[ _](length|window)|prompt is too long|maximum context|too many (input )?tokens|exceeds? the (model's )?(maximum|max) (context|input)/i;
const CONTENT_FILTER_CODES = new Set(["content_filter", "content_policy_violation"]);
const CONTENT_FILTER_TEXT = /content[ _](filter|management polic|policy)/i;
const AUTH_TYPES = new Set(["authentication_error", "permission_error", "invalid_api_key"]);
const NOT_FOUND_TYPES = new Set(["not_found_error", "model_not_found"]);
const RATE_LIMIT_TYPES = new Set(["rate_limit_error", "rate_limit_exceeded", "insufficient_quota"]);

/** What a provider's error body (or message) says, when it names a reason its HTTP status does not. */
function reasonFromBody(body: unknown, text: string | undefined): ProviderErrorReason | null {
  const envelope = errorEnvelope.safeParse(body);
  const detail = envelope.success ? envelope.data.error : errorDetail.safeParse(body).data;
  const names = [detail?.code, detail?.type].filter((n): n is string => typeof n === "string");
  const message = [detail?.message, text].filter((m): m is string => typeof m === "string").join(" ");
  if (names.some((n) => CONTEXT_LENGTH_CODES.has(n)) || CONTEXT_LENGTH_TEXT.test(message))
    return "context_length";
  if (names.some((n) => CONTENT_FILTER_CODES.has(n)) || CONTENT_FILTER_TEXT.test(message))
    return "content_filter";
  if (names.some((n) => AUTH_TYPES.has(n))) return "auth";
  if (names.some((n) => NOT_FOUND_TYPES.has(n))) return "not_found";
  if (names.some((n) => RATE_LIMIT_TYPES.has(n))) return "rate_limited";
  if (names.includes("timeout_error")) return "timeout";
  return null;
}

function fromReason(reason: ProviderErrorReason, retryAfter?: number): ModelError {
  const withRetry = (error: ModelError): ModelError =>
    retryAfter === undefined ? error : { ...error, retryAfter };
  switch (reason) {
    case "auth":
      return upstream("auth", MESSAGES.auth, false);
    case "not_found":
      return upstream("not_found", MESSAGES.notFound, false);
    case "rate_limited":
      return withRetry(upstream("rate_limited", MESSAGES.rateLimited, true));
    case "context_length":
      return upstream("context_length", MESSAGES.contextLength, false);
    case "content_filter":
      return modelErrors.contentFilter();
    case "timeout":
      return withRetry(modelErrors.timeout());
    case "network":
      return upstream("network", MESSAGES.network, true);
    case "other":
      return withRetry(upstream("other", MESSAGES.unavailable, true));
  }
}

/**
 * Maps an HTTP status from a provider (or none, for a network failure) to a safe model error; `bodyReason` is what the
 * error body said, which wins where the status alone is ambiguous (a 400 for a too-long prompt, a 403 content filter).
 */
export function modelErrorFromStatus(
  status: number | undefined,
  retryAfter?: number,
  bodyReason: ProviderErrorReason | null = null,
): ModelError {
  if (bodyReason === "context_length" || bodyReason === "content_filter") return fromReason(bodyReason);
  if (status === undefined) return fromReason(bodyReason ?? "network", retryAfter);
  // A 2xx here means the response started fine and its body broke while streaming.
  if (status < 300) return modelErrors.interrupted();
  if (status === 401 || status === 403) return fromReason("auth");
  if (status === 404) return fromReason("not_found");
  if (status === 408 || status === 504) return fromReason("timeout", retryAfter);
  if (status === 413) return fromReason("context_length");
  if (status === 429) return fromReason("rate_limited", retryAfter);
  if (bodyReason !== null) return fromReason(bodyReason, retryAfter);
  if (status >= 500 || status === 409) return fromReason("other", retryAfter);
  return upstream("other", MESSAGES.rejected, false);
}

/** Seconds from a `Retry-After` header (delta-seconds only; dates are ignored), capped at an hour. */
function retryAfterSeconds(headers: Record<string, string> | undefined): number | undefined {
  const raw = headers?.["retry-after"];
  if (raw === undefined || !/^\d{1,6}$/.test(raw.trim())) return undefined;
  return Math.min(Number(raw.trim()), 3600);
}

const workersAiCode = z.looseObject({ workersAIErrorCode: z.number().int() });

function fromApiCallError(error: APICallError): ModelError {
  const retryAfter = retryAfterSeconds(error.responseHeaders);
  const code = workersAiCode.safeParse(error.data);
  const workersAi = code.success ? WORKERS_AI_REASONS[code.data.workersAIErrorCode] : undefined;
  if (workersAi !== undefined) return fromReason(workersAi, retryAfter);
  let body: unknown = error.data;
  if (body === undefined && error.responseBody !== undefined) {
    try {
      body = JSON.parse(error.responseBody);
    } catch {
      body = undefined;
    }
  }
  const bodyReason = reasonFromBody(body, error.statusCode === undefined ? error.message : undefined);
  if (error.statusCode === undefined) {
    // No status: the AI SDK's "Cannot connect" (retryable), or a Workers AI binding error it could not place.
    const unreachable = error.isRetryable || error.cause instanceof TypeError;
    return fromReason(bodyReason ?? (unreachable ? "network" : "other"), retryAfter);
  }
  return modelErrorFromStatus(error.statusCode, retryAfter, bodyReason);
}

/** Everything a provider can throw or put in an `error` stream part becomes one of a few safe messages. */
export function toModelError(error: unknown): ModelError {
  if (isTimeoutError(error)) return modelErrors.timeout();
  if (APICallError.isInstance(error)) return fromApiCallError(error);
  const parsed = statusShape.safeParse(error);
  if (parsed.success && parsed.data.statusCode !== undefined) {
    return modelErrorFromStatus(parsed.data.statusCode, undefined, reasonFromBody(error, undefined));
  }
  const name = parsed.success ? parsed.data.name : undefined;
  if (
    name !== undefined &&
    /^AI_(TypeValidationError|JSONParseError|InvalidResponseDataError|EmptyResponseBodyError)$/.test(name)
  ) {
    return upstream("other", MESSAGES.invalid, true);
  }
  // A stream's error part names its reason in the provider's own words (Anthropic `overloaded_error`, OpenAI codes).
  const bodyReason = reasonFromBody(error, undefined);
  if (bodyReason !== null) return fromReason(bodyReason);
  // A dropped connection or a reset stream (workerd throws a TypeError): the provider could not finish.
  if (error instanceof TypeError) return fromReason("network");
  return fromReason("other");
}
