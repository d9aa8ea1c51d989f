// The `agent.v1` wire protocol: one zod discriminated union per direction, imported by the Worker and the widget.
import { z } from "zod";
import { ERROR_CODES, ERROR_REASONS } from "./errors";

export const PROTOCOL = "agent.v1";
export const PROTOCOL_VERSION = 1;
export const BEARER_PREFIX = "bearer.";

export const LIMITS = {
  maxFrameBytes: 64 * 1024,
  maxMessageChars: 8000,
  sendsPerMinute: 20,
  socketsPerThread: 8,
  idleTimeoutSeconds: 300,
  maxMalformedFrames: 5,
  /** Frames of any type a socket may send at once, and how many more it earns per second (close 4429 past it). */
  frameBurst: 60,
  framesPerSecond: 1,
  maxQueuedSends: 4,
  historyPageMax: 200,
} as const;

const id = z.string().min(1).max(128);
const clientMessageId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,128}$/, "must be 8-128 characters of [A-Za-z0-9_-]");

export const RUN_STATUSES = ["queued", "running", "succeeded", "failed", "aborted"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

// ---- client → server ----

export const clientFrameSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("hello"),
    protocol: z.literal(PROTOCOL_VERSION),
    resume: z.strictObject({ runId: id, afterSeq: z.number().int().min(0) }).optional(),
  }),
  z.strictObject({
    type: z.literal("send"),
    clientMessageId,
    text: z.string().min(1),
    parentId: id.optional(),
  }),
  z.strictObject({ type: z.literal("cancel"), runId: id }),
  z.strictObject({ type: z.literal("regenerate"), entryId: id }),
  z.strictObject({ type: z.literal("edit"), entryId: id, text: z.string().min(1), clientMessageId }),
  z.strictObject({
    type: z.literal("history"),
    leafId: id.optional(),
    cursor: z.string().max(512).optional(),
    limit: z.number().int().min(1).max(LIMITS.historyPageMax).optional(),
  }),
  z.strictObject({ type: z.literal("ping") }),
]);

export type ClientFrame = z.infer<typeof clientFrameSchema>;

// ---- server → client ----

export const entrySchema = z.object({
  id,
  parentId: id.nullable(),
  kind: z.enum(["message", "event", "model_change", "label", "summary", "custom"]),
  role: z.enum(["user", "assistant", "tool", "system"]).nullable(),
  runId: id.nullable(),
  text: z.string(),
  status: z.enum(["complete", "interrupted", "failed"]).optional(),
  clientMessageId: z.string().optional(),
  createdAt: z.string(),
});

export type WireEntry = z.infer<typeof entrySchema>;

export const serverFrameSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("ready"),
    protocol: z.literal(PROTOCOL_VERSION),
    threadId: id,
    leafId: id.nullable(),
    agent: z.object({ name: z.string(), version: z.number().int() }),
  }),
  z.object({ type: z.literal("entry"), entry: entrySchema }),
  z.object({
    type: z.literal("run"),
    runId: id,
    status: z.enum(RUN_STATUSES),
    error: z
      .object({ code: z.enum(ERROR_CODES), reason: z.enum(ERROR_REASONS).optional(), message: z.string() })
      .optional(),
  }),
  z.object({ type: z.literal("delta"), runId: id, seq: z.number().int().min(1), text: z.string() }),
  z.object({ type: z.literal("history"), items: z.array(entrySchema), nextCursor: z.string().optional() }),
  z.object({
    type: z.literal("error"),
    code: z.enum(ERROR_CODES),
    reason: z.enum(ERROR_REASONS).optional(),
    message: z.string(),
  }),
  z.object({ type: z.literal("pong") }),
]);

export type ServerFrame = z.infer<typeof serverFrameSchema>;
