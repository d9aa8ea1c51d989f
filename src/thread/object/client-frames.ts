// Reading a socket's message: only `agent.v1` frame types reach the SDK, and each frame is parsed once with zod.
import type { WSMessage } from "agents";
import { type ClientFrame, clientFrameSchema, LIMITS } from "../../shared/protocol";

const CLIENT_FRAME_TYPES = new Set([
  "hello",
  "send",
  "cancel",
  "regenerate",
  "edit",
  "history",
  "ping",
  "feedback",
  "upgrade",
  "refresh",
  "approval",
  "tool_result",
]);

/** UTF-8 size of a frame, counted only when its length alone cannot settle it against the limit. */
export function frameTooLarge(message: string | ArrayBuffer | ArrayBufferView): boolean {
  if (typeof message !== "string") return message.byteLength > LIMITS.maxFrameBytes;
  if (message.length > LIMITS.maxFrameBytes) return true;
  return message.length * 3 > LIMITS.maxFrameBytes && utf8Bytes(message) > LIMITS.maxFrameBytes;
}

const encoder = new TextEncoder();
const utf8Bytes = (text: string): number => encoder.encode(text).byteLength;

/**
 * Anything else the SDK would act on (state writes, RPC, MCP) is renamed, so `onMessage` answers it as an invalid
 * frame and no SDK frame answers a client.
 */
export function onlyProtocolFrames(message: string | ArrayBuffer): string | ArrayBuffer {
  // Binary frames pass: `onMessage` refuses them as malformed, and the SDK acts only on JSON text.
  if (typeof message !== "string") return message;
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return message;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return message;
  const type = (value as { type?: unknown }).type;
  return typeof type === "string" && CLIENT_FRAME_TYPES.has(type) ? message : '{"type":"unsupported"}';
}

export type ParsedMessage =
  | { kind: "frame"; frame: ClientFrame }
  | { kind: "malformed"; message: string }
  | { kind: "too_large" };

export function parseClientMessage(message: WSMessage): ParsedMessage {
  if (frameTooLarge(message)) return { kind: "too_large" };
  if (typeof message !== "string") return { kind: "malformed", message: "Frames must be JSON text." };
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return { kind: "malformed", message: "Frames must be JSON." };
  }
  const parsed = clientFrameSchema.safeParse(value);
  return parsed.success
    ? { kind: "frame", frame: parsed.data }
    : { kind: "malformed", message: "Unknown or invalid frame." };
}
