// The widget's stable error codes: what the host's `error` event carries, what the panel says, what the console names.
import type { StringKey } from "./strings";

/**
 * Stable codes for the `error` event (snake_case, never renamed):
 * - `origin_not_allowed`: this page's origin is not in the agent's allowed origins.
 * - `agent_unavailable`: the agent key is unknown, disabled or rotated, or the agent has no active release here.
 * - `missing_agent_key`: neither an agent key nor `identify(getLaunchToken)` was given.
 * - `auth_failed`: `getLaunchToken()` failed or returned something unusable; a token was refused.
 * - `rate_limited`: launches or messages are rate limited; the widget retries on its own.
 * - `network`: the service cannot be reached; the widget retries on its own.
 * - `message_rejected`: the server refused one message (too long, invalid); the conversation goes on.
 * - `server_error`: any other refusal.
 */
export type WidgetErrorCode =
  | "origin_not_allowed"
  | "agent_unavailable"
  | "missing_agent_key"
  | "auth_failed"
  | "rate_limited"
  | "network"
  | "message_rejected"
  | "server_error";

export interface WidgetError {
  code: WidgetErrorCode;
  /** A sentence for developers (the console line); the panel shows a localisable string instead. */
  message: string;
  /** False when retrying cannot help until someone changes configuration. */
  retryable: boolean;
}

export const PANEL_TEXT: Record<WidgetErrorCode, StringKey> = {
  origin_not_allowed: "errorOrigin",
  agent_unavailable: "errorAgent",
  missing_agent_key: "errorConfig",
  auth_failed: "errorAuth",
  rate_limited: "errorRateLimited",
  network: "errorNetwork",
  message_rejected: "errorMessage",
  server_error: "errorGeneric",
};

export function widgetError(code: WidgetErrorCode, message: string, retryable = false): WidgetError {
  return { code, message, retryable };
}

const warned = new Set<string>();

/** One console line per distinct problem, prefixed so it is easy to find. */
export function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  console.warn(`agent-threads: ${message}`);
}
