// Reading a socket's message: only `agent.v1` frame types reach the SDK, and each frame is parsed once with zod.
import type { WSMessage } from "agents";
import { type ClientFrame, clientFrameSchema, LIMITS } from "../shared/protocol";

const CLIENT_FRAME_TYPES = new Set(["hello", "send", "cancel", "regenerate", "edit", "history", "ping"]);

/**
 * Anything else the SDK would act on (state writes, RPC, MCP) is renamed, so `onMessage` answers it as an invalid
 * frame and no SDK frame answers a client.
 */
export function onlyProtocolFrames(message: string | ArrayBuffer): string | ArrayBuffer {
  if (typeof message !== "string" || message.length > LIMITS.maxFrameBytes) return message;
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
  if (typeof message !== "string") return { kind: "malformed", message: "Frames must be JSON text." };
  if (new TextEncoder().encode(message).byteLength > LIMITS.maxFrameBytes) return { kind: "too_large" };
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
