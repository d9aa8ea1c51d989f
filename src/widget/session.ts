// A launch session as the widget uses it, parsed from a launch response or a host's getLaunchToken() result.
import type { Presentation } from "../shared/presentation";
import { isObj, nonEmpty } from "./checks";
import { isPresentation } from "./presentation-rules";

export interface Session {
  token: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  threadId: string;
  websocketUrl: string;
  /** The agent's presentation, when the launch response carried one (a host's token may pass it through). */
  presentation?: Presentation;
}

function epochMs(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return value < 1e12 ? value * 1000 : value;
  if (typeof value === "string") {
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? null : ms;
  }
  return null;
}

/** A usable session from a launch response or a host's token, or null (wrong shape, non-WebSocket URL). */
export function parseSession(value: unknown): Session | null {
  if (!isObj(value)) return null;
  const v = value;
  const token = nonEmpty(v.token);
  const threadId = nonEmpty(v.threadId);
  const websocketUrl = nonEmpty(v.websocketUrl);
  const expiresAt = epochMs(v.expiresAt);
  if (!token || !threadId || !websocketUrl || expiresAt === null) return null;
  // It travels as a WebSocket subprotocol (`bearer.<token>`): only JWT characters are valid there.
  if (!/^[A-Za-z0-9._-]+$/.test(token)) return null;
  try {
    const url = new URL(websocketUrl);
    if (url.protocol !== "ws:" && url.protocol !== "wss:") return null;
  } catch {
    return null;
  }
  return {
    token,
    expiresAt,
    threadId,
    websocketUrl,
    // A presentation it cannot read is left out: the thread's `ready` frame carries it again.
    ...(isPresentation(v.presentation) ? { presentation: v.presentation } : {}),
  };
}
