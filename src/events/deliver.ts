// One delivery attempt of an event to a tenant's endpoint: signed (Standard Webhooks), no redirects, a time cap.
import { localHttpAllowed } from "../control/url-policy";
import { signWebhook } from "../tools/webhook-signature";

const USER_AGENT = "agent-threads-webhooks/1";
export const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Waits after the nth failed attempt (Standard Webhooks' suggested schedule): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 10 h — about 27.5 hours of retries in all (docs/webhooks.md: at least 24 h) — then the delivery has failed.
 */
export const RETRY_DELAYS_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/**
 * The schedule this deployment uses: `WEBHOOK_RETRY_DELAYS_MS` (comma-separated) in development, where a local
 * receiver should see its retries within minutes; everywhere else, and for an unreadable value, `RETRY_DELAYS_MS`.
 */
export function retryDelays(env: {
  ENVIRONMENT: string;
  WEBHOOK_RETRY_DELAYS_MS?: string;
}): readonly number[] {
  const configured = env.WEBHOOK_RETRY_DELAYS_MS?.trim() ?? "";
  if (!localHttpAllowed(env.ENVIRONMENT) || configured === "") return RETRY_DELAYS_MS;
  const delays = configured.split(",").map((part) => Number(part.trim()));
  return delays.every((ms) => Number.isSafeInteger(ms) && ms > 0) ? delays : RETRY_DELAYS_MS;
}

export type AttemptResult =
  /** `statusCode` is null when no HTTP answer came (network error, timeout, refused URL). */
  { outcome: "succeeded" | "retry" | "failed"; statusCode: number | null };

/** 2xx delivered; network errors, 408, 429 and 5xx retried; everything else (other 4xx, 3xx, 1xx) failed. */
export function classifyStatus(status: number): AttemptResult["outcome"] {
  if (status >= 200 && status < 300) return "succeeded";
  if (status === 408 || status === 429 || status >= 500) return "retry";
  return "failed";
}

export async function attemptDelivery(input: {
  url: string;
  secret: string;
  eventId: string;
  body: string;
  fetch: typeof fetch;
  now: number;
  timeoutMs?: number;
}): Promise<AttemptResult> {
  const headers = await signWebhook({
    secret: input.secret,
    id: input.eventId,
    timestamp: Math.floor(input.now / 1000),
    body: input.body,
  });
  // A timer of our own, cleared when the attempt ends: `AbortSignal.timeout` would keep the object busy until it fires.
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException("timed out", "TimeoutError")),
    input.timeoutMs ?? DELIVERY_TIMEOUT_MS,
  );
  // Called as a plain function: workerd refuses the global fetch invoked as a method of another object.
  const send = input.fetch;
  try {
    const response = await send(input.url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": USER_AGENT, ...headers },
      body: input.body,
      // Never followed: the next hop was not checked against the URL policy, and the signed body would be replayed.
      redirect: "manual",
      signal: controller.signal,
    });
    // The receiver's answer is not kept: only its status decides.
    response.body?.cancel().catch(() => {});
    return { outcome: classifyStatus(response.status), statusCode: response.status };
  } catch {
    return { outcome: "retry", statusCode: null };
  } finally {
    clearTimeout(timer);
  }
}
