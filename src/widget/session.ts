// A launch session as the widget uses it, parsed from a launch response or a host's getLaunchToken() result.
import type { Presentation } from "../shared/presentation";
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

const isStr = (v: unknown): v is string => typeof v === "string" && v.length > 0;

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
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  const expiresAt = epochMs(v.expiresAt);
  if (!isStr(v.token) || !isStr(v.threadId) || !isStr(v.websocketUrl) || expiresAt === null) return null;
  // It travels as a WebSocket subprotocol (`bearer.<token>`): only JWT characters are valid there.
  if (!/^[A-Za-z0-9._-]+$/.test(v.token)) return null;
  try {
    const url = new URL(v.websocketUrl);
    if (url.protocol !== "ws:" && url.protocol !== "wss:") return null;
  } catch {
    return null;
  }
  return {
    token: v.token,
    expiresAt,
    threadId: v.threadId,
    websocketUrl: v.websocketUrl,
    // A presentation it cannot read is left out: the thread's `ready` frame carries it again.
    ...(isPresentation(v.presentation) ? { presentation: v.presentation } : {}),
  };
}
