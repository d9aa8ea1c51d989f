// Getting a launch token: POST /v1/agent-sessions for public agents, the host's getLaunchToken() for private ones.
import { isObj, isStr, nonEmpty } from "./checks";
import { parseSession, type Session } from "./session";

export type { Session } from "./session";

import type { Store } from "./storage";
import { type WidgetError, widgetError } from "./widget-error";

export type LaunchReason = "start" | "refresh" | "expired";

/** What a host's backend hands the widget for a private agent (the body of its own launch call, passed through). */
export interface LaunchToken {
  token: string;
  threadId: string;
  websocketUrl: string;
  expiresAt: string | number;
}

export type GetLaunchToken = (reason: LaunchReason) => Promise<LaunchToken> | LaunchToken;

export type LaunchResult =
  | { ok: true; session: Session }
  | { ok: false; error: WidgetError; retryAfter?: number };

export type Launcher = (reason: LaunchReason) => Promise<LaunchResult>;

interface Answer {
  status: number;
  body: unknown;
  retryAfter?: number;
}

async function post(url: string, body: unknown): Promise<Answer | null> {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
    const retryAfter = Number(res.headers.get("Retry-After"));
    return {
      status: res.status,
      body: await res.json().catch(() => null),
      ...(retryAfter > 0 ? { retryAfter } : {}),
    };
  } catch {
    return null;
  }
}

/** The `error.code` (or, with `field`, `error.reason`) of an error body; "unknown" when it has none. */
function errorCodeOf(body: unknown, field: "code" | "reason" = "code"): string {
  const error = isObj(body) ? body.error : undefined;
  const code = isObj(error) ? error[field] : undefined;
  return isStr(code) ? code : "unknown";
}

/** A failed launch: `widgetError`'s arguments. */
const fail = (...args: Parameters<typeof widgetError>): LaunchResult => ({
  ok: false,
  error: widgetError(...args),
});

/**
 * A refused cross-origin request and a dead network look the same to a page (a TypeError). Fetching a CORS-open
 * asset of the same service tells them apart: if it answers, the service is up and refused this origin.
 */
async function reachable(probeUrl: string): Promise<boolean> {
  try {
    const res = await fetch(probeUrl, { method: "HEAD", cache: "no-store", credentials: "omit" });
    return res.status < 500;
  } catch {
    return false;
  }
}

export function originRefused(): WidgetError {
  return widgetError(
    "origin_not_allowed",
    `origin ${location.origin} is not in the agent's allowed origins; add it to the agent's allowedOrigins.`,
  );
}

export function publicLauncher(options: {
  base: string;
  agentKey: string;
  store: Store;
  probeUrl: string;
}): Launcher {
  const { base, agentKey, store, probeUrl } = options;
  const endpoint = new URL("/v1/agent-sessions", base).href;

  return async function launch(): Promise<LaunchResult> {
    // Up to two extra tries: a thread that no longer exists, then a visitor token that no longer verifies.
    // The visitor token is only forgotten once a launch without it succeeds: a 401 can also mean a disabled agent,
    // and a visitor must not lose their conversation to an agent that is switched off for a while.
    let withoutVisitor = false;
    for (let tries = 0; tries < 3; tries++) {
      const saved = withoutVisitor ? {} : store.get();
      const body = {
        agentKey,
        ...(saved.visitorToken ? { visitorToken: saved.visitorToken } : {}),
        ...(saved.visitorToken && saved.threadId ? { threadId: saved.threadId } : {}),
      };
      let answer = await post(endpoint, body);
      if (answer === null && navigator.onLine && (await reachable(probeUrl))) {
        // The service answers, yet the launch failed: a CORS refusal, unless it was a blip (then this works).
        answer = await post(endpoint, body);
        if (answer === null) return { ok: false, error: originRefused() };
      }
      if (answer === null) {
        const why = navigator.onLine
          ? `cannot reach ${endpoint}; check connect-src in your Content-Security-Policy.`
          : "the browser is offline.";
        return fail("network", why, true);
      }
      const code = errorCodeOf(answer.body);
      if (answer.status === 201) {
        const session = parseSession(answer.body);
        if (session === null) break;
        const visitorToken = nonEmpty((answer.body as { visitorToken?: unknown }).visitorToken);
        if (withoutVisitor) store.clear();
        store.set({
          threadId: session.threadId,
          ...(visitorToken ? { visitorToken } : {}),
          ...(saved.threadId !== session.threadId ? { runId: undefined, seq: undefined } : {}),
        });
        return { ok: true, session };
      }
      if (answer.status === 404 && "threadId" in body) {
        store.set({ threadId: undefined, runId: undefined, seq: undefined });
        continue;
      }
      if (answer.status === 401 && "visitorToken" in body) {
        withoutVisitor = true;
        continue;
      }
      switch (answer.status) {
        case 401:
          return fail(
            "agent_unavailable",
            `the agent key ${agentKey} is unknown, disabled or rotated; copy the agent's current public key into data-agent-key.`,
          );
        case 403:
          return { ok: false, error: originRefused() };
        case 409:
          // The agent has no active release here: nothing to retry until its owner activates one.
          if (errorCodeOf(answer.body, "reason") === "no_active_release") {
            return fail(
              "agent_unavailable",
              "the agent has no active release in this environment; activate a release of it.",
            );
          }
          return fail("server_error", `the launch was refused with 409 (${code}).`);
        case 429:
          return {
            ok: false,
            error: widgetError("rate_limited", `launching is rate limited (${code}); retrying.`, true),
            ...(answer.retryAfter !== undefined ? { retryAfter: answer.retryAfter } : {}),
          };
        default:
          if (answer.status >= 500) {
            return fail("network", `the service answered ${answer.status} (${code}); retrying.`, true);
          }
          return fail("server_error", `the launch was refused with ${answer.status} (${code}).`);
      }
    }
    return fail("server_error", "the launch answered an unexpected body.", true);
  };
}

export function privateLauncher(getLaunchToken: GetLaunchToken): Launcher {
  return async function launch(reason): Promise<LaunchResult> {
    let value: unknown;
    try {
      value = await getLaunchToken(reason);
    } catch (error) {
      return fail("auth_failed", `getLaunchToken("${reason}") failed: ${String(error)}; retrying.`, true);
    }
    const session = parseSession(value);
    if (session === null) {
      return fail(
        "auth_failed",
        "getLaunchToken() must resolve to {token, threadId, websocketUrl, expiresAt} from POST /v1/agent-sessions on your backend.",
      );
    }
    return { ok: true, session };
  };
}
