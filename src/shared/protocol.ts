// The `agent.v1` wire protocol: one zod discriminated union per direction, imported by the Worker and the widget.
import { z } from "zod";
import { ERROR_REASONS } from "./error-reasons";
import { ERROR_CODES } from "./errors";
import { presentationSchema } from "./presentation";
import { RUN_STATUSES, type RunStatus } from "./run-states";

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
  /** Turns waiting behind a live run (the `enqueue`, `interrupt` and `rollback` strategies); one more is `conflict`. */
  maxQueuedSends: 5,
  historyPageMax: 200,
} as const;

const id = z.string().min(1).max(128);

/**
 * A JSON object as the wire carries it (a tool's arguments), typed shallowly: the thread object's RPC stubs map every
 * type they return, and a recursive JSON type is too deep for them.
 */
export type JsonObject = Record<string, string | number | boolean | null | object>;
const isJsonObject = (value: unknown): boolean =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const clientMessageId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{8,128}$/, "must be 8-128 characters of [A-Za-z0-9_-]");

export { RUN_STATUSES, type RunStatus };

/** What a send, edit or regenerate does while a run is live (the artifact's `conversation.multitask`, docs/protocol.md). */
export const MULTITASK_STRATEGIES = ["reject", "enqueue", "interrupt", "rollback"] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

/** Who answers the user: the model (`agent`) or a person of the tenant's team (`handoff`, docs/protocol.md). */
export const THREAD_MODES = ["agent", "handoff"] as const;
export type ThreadMode = (typeof THREAD_MODES)[number];

export const FEEDBACK_RATINGS = ["up", "down"] as const;
export type FeedbackRating = (typeof FEEDBACK_RATINGS)[number];
export const MAX_FEEDBACK_COMMENT_CHARS = 2000;
/** A human agent's display name, as the tenant's backend names it. */
export const MAX_AGENT_NAME_CHARS = 100;

/** An approval's decision, and who made it (docs/tools.md#approvals). */
export const APPROVAL_DECISIONS = ["approve", "deny"] as const;
export type ApprovalDecision = (typeof APPROVAL_DECISIONS)[number];
/** Who may decide an approval, as the tool's `approval.by` says. */
export const APPROVERS = ["user", "tenant", "any"] as const;
export type Approver = (typeof APPROVERS)[number];
/** Who decided: a person (the thread's user, the tenant), the clock, or the thread itself (a cancelled run). */
export const DECIDERS = ["user", "tenant", "timeout", "system"] as const;
export type Decider = (typeof DECIDERS)[number];
export const MAX_DECISION_REASON_CHARS = 1000;
/** A client tool's answer, as JSON text, is at most this many bytes (docs/tools.md#client-tools). */
export const MAX_TOOL_RESULT_BYTES = 64 * 1024;

/** Event entries the thread writes into its own tree (never a client). */
export const ENTRY_EVENTS = ["handoff_started", "handoff_ended"] as const;

/** An attachment's id: "att_" + 26 lowercase base32 characters, like every server-generated id. */
export const ATTACHMENT_ID_PATTERN = /^att_[a-z2-7]{26}$/;
/** Attachments one `send` may name (the artifact's `attachments.maxFiles` is at most this). */
export const MAX_ATTACHMENTS_PER_MESSAGE = 10;

/**
 * An uploaded file as a thread and its user entries name it (docs/api.md, "Attachments"): metadata only, the bytes
 * stay in the tenant's object storage under their SHA-256.
 */
export const attachmentRef = z.object({
  id: z.string().regex(ATTACHMENT_ID_PATTERN),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  mediaType: z.string().min(1).max(255),
  size: z.number().int().min(0),
  name: z.string().min(1).max(255),
});
export type AttachmentRef = z.infer<typeof attachmentRef>;

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
    multitask: z.enum(MULTITASK_STRATEGIES).optional(),
    /** Ids of attachments uploaded to this thread (docs/api.md, "Attachments"). */
    attachments: z
      .array(z.string().regex(ATTACHMENT_ID_PATTERN))
      .min(1)
      .max(MAX_ATTACHMENTS_PER_MESSAGE)
      .optional(),
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
  /** A new launch token for this socket's thread, answered with `token` (docs/protocol.md, "Token refresh"). */
  z.strictObject({ type: z.literal("refresh") }),
  z.strictObject({
    type: z.literal("feedback"),
    entryId: id,
    // null clears the feedback (and its comment).
    rating: z.enum(FEEDBACK_RATINGS).nullable(),
    comment: z.string().max(MAX_FEEDBACK_COMMENT_CHARS).optional(),
  }),
  /** Accepts the upgrade `ready.upgrade` offered (docs/api.md); any other version is refused. */
  z.strictObject({ type: z.literal("upgrade"), version: z.number().int().positive() }),
  /** Decides a pending approval of this thread (docs/tools.md#approvals). */
  z.strictObject({
    type: z.literal("approval"),
    approvalId: id,
    decision: z.enum(APPROVAL_DECISIONS),
    reason: z.string().max(MAX_DECISION_REASON_CHARS).optional(),
  }),
  /** Answers a client tool's `tool_request` (docs/tools.md#client-tools): `output`, or `error` when it failed. */
  z.strictObject({
    type: z.literal("tool_result"),
    toolCallId: id,
    output: z.unknown().optional(),
    error: z.string().max(MAX_DECISION_REASON_CHARS).optional(),
  }),
]);

export type ClientFrame = z.infer<typeof clientFrameSchema>;

// ---- server → client ----

export const feedbackSchema = z.object({
  rating: z.enum(FEEDBACK_RATINGS),
  comment: z.string().optional(),
  at: z.string(),
});
export type WireFeedback = z.infer<typeof feedbackSchema>;

/** A tool call waiting for a person's decision: a run's `actions` and an `approval_request` entry's `approval`. */
export const approvalActionSchema = z.object({
  approvalId: id,
  toolCallId: id,
  name: z.string(),
  /** The model's arguments after the runtime wrote the caller's identity into them. */
  input: z.custom<JsonObject>(isJsonObject),
  by: z.enum(APPROVERS),
  expiresAt: z.string(),
  /** The artifact's `approval.title` and `approval.description`, when set. */
  title: z.string().optional(),
  description: z.string().optional(),
});
export type ApprovalAction = z.infer<typeof approvalActionSchema>;

/** A client tool call waiting for its answer: the `tool_request` frame and entry. */
export const toolRequestSchema = z.object({
  toolCallId: id,
  name: z.string(),
  input: z.custom<JsonObject>(isJsonObject),
  expiresAt: z.string(),
});
export type ToolRequest = z.infer<typeof toolRequestSchema>;

export const approvalDecisionSchema = z.object({
  approvalId: id,
  decision: z.enum(APPROVAL_DECISIONS),
  by: z.enum(DECIDERS),
  reason: z.string().nullable(),
});
export type ApprovalDecisionRecord = z.infer<typeof approvalDecisionSchema>;

/** What a thread entry is (docs/protocol.md): the one list the wire schema and the thread's storage both use. */
export const ENTRY_KINDS = [
  "message",
  "event",
  "model_change",
  "label",
  "summary",
  "custom",
  "version_change",
  "approval_request",
  "approval_decision",
  "tool_request",
] as const;

export const entrySchema = z.object({
  id,
  parentId: id.nullable(),
  kind: z.enum(ENTRY_KINDS),
  role: z.enum(["user", "assistant", "tool", "system", "human_agent"]).nullable(),
  runId: id.nullable(),
  text: z.string(),
  status: z.enum(["complete", "interrupted", "failed"]).optional(),
  clientMessageId: z.string().optional(),
  /** User messages: the files sent with it (absent when none). */
  attachments: z.array(attachmentRef).optional(),
  /** `human_agent` messages: the person's display name, when the tenant gave one. */
  authorName: z.string().optional(),
  /** Zero retention (docs/privacy.md): the thread's text was deleted after it went idle; `text` is empty. */
  purged: z.literal(true).optional(),
  /** `approval_request` entries: the call waiting for a decision. */
  approval: approvalActionSchema.optional(),
  /** `approval_decision` entries: the decision. */
  decision: approvalDecisionSchema.optional(),
  /** `tool_request` entries: the client tool call. */
  toolRequest: toolRequestSchema.optional(),
  /** `event` entries: what happened. */
  event: z.object({ type: z.enum(ENTRY_EVENTS), agentName: z.string().optional() }).optional(),
  /** `version_change` entries: the version the turns below it run on, and the one before (docs/api.md). */
  versionChange: z.object({ fromVersion: z.number().int(), toVersion: z.number().int() }).optional(),
  /** Assistant entries in `history` pages: the user's current rating. */
  feedback: feedbackSchema.optional(),
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
    /** The pinned version's presentation (docs/protocol.md); the greeting is expanded with the thread's context. */
    presentation: presentationSchema.optional(),
    mode: z.enum(THREAD_MODES),
    /** In handoff: the person answering, when the tenant named one. */
    agentName: z.string().optional(),
    /** A newer version the visitor may move the thread to with `{type: "upgrade", version}` (docs/api.md). */
    upgrade: z.object({ version: z.number().int() }).optional(),
  }),
  z.object({ type: z.literal("mode"), mode: z.enum(THREAD_MODES), agentName: z.string().optional() }),
  /** The current feedback on an assistant entry after a `feedback` frame (null: cleared), to every socket. */
  z.object({ type: z.literal("feedback"), entryId: id, feedback: feedbackSchema.nullable() }),
  z.object({ type: z.literal("entry"), entry: entrySchema }),
  z.object({
    type: z.literal("run"),
    runId: id,
    status: z.enum(RUN_STATUSES),
    error: z
      .object({ code: z.enum(ERROR_CODES), reason: z.enum(ERROR_REASONS).optional(), message: z.string() })
      .optional(),
    /** Only while `queued` behind another run: 1 is next. */
    position: z.number().int().min(1).optional(),
    /** Only when `aborted`: `cancelled`, `interrupted` (by a later turn, or by the object's death), … */
    reason: z.string().optional(),
    /** Only when `requires_action`: the approvals still waiting for a decision. */
    actions: z.array(approvalActionSchema).optional(),
  }),
  /** A client tool call for the page or app holding the thread to run (docs/tools.md#client-tools). */
  z.object({ type: z.literal("tool_request"), runId: id, ...toolRequestSchema.shape }),
  z.object({ type: z.literal("delta"), runId: id, seq: z.number().int().min(1), text: z.string() }),
  z.object({ type: z.literal("history"), items: z.array(entrySchema), nextCursor: z.string().optional() }),
  z.object({
    type: z.literal("error"),
    code: z.enum(ERROR_CODES),
    reason: z.enum(ERROR_REASONS).optional(),
    message: z.string(),
  }),
  z.object({ type: z.literal("pong") }),
  /** The answer to `refresh`: a launch token for the same thread, subject and origin, and when it expires. */
  z.object({ type: z.literal("token"), token: z.string(), expiresAt: z.string() }),
]);

export type ServerFrame = z.infer<typeof serverFrameSchema>;
