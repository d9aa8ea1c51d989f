// Launch and thread-over-HTTP response shapes (docs/api.md, docs/protocol.md), as the OpenAPI document and clients read them.
import { z } from "zod";
import { ERROR_REASONS } from "./error-reasons";
import { ERROR_CODES } from "./errors";
import { presentationSchema } from "./presentation";
import {
  APPROVAL_DECISIONS,
  APPROVERS,
  DECIDERS,
  entrySchema,
  feedbackSchema,
  MAX_DECISION_REASON_CHARS,
  RUN_STATUSES,
  THREAD_MODES,
} from "./protocol";

export const launchResponse = z.object({
  token: z
    .string()
    .describe("Launch token: Bearer for the thread's HTTP routes, `bearer.<token>` on the socket."),
  expiresAt: z.iso.datetime(),
  threadId: z.string(),
  websocketUrl: z.string(),
  threadUrl: z.string(),
  protocol: z.literal("agent.v1"),
  visitorToken: z.string().optional().describe("Public launches: keep it to resume this visitor's threads."),
  presentation: presentationSchema.optional(),
});

export const threadInfoResponse = z.object({
  threadId: z.string(),
  /** The pinned version: the one the thread was bound to. */
  agent: z.object({
    id: z.string(),
    name: z.string(),
    version: z.number().int(),
    versionId: z.string(),
    digest: z.string(),
  }),
  /** The version of the current leaf, which the next turn below it runs on (docs/api.md); the pin's until an upgrade. */
  version: z.number().int(),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  leafId: z.string().nullable(),
  mode: z.enum(THREAD_MODES),
});

export const entriesPageResponse = z.object({
  items: z.array(entrySchema),
  nextCursor: z.string().optional(),
});

export const messageReplyResponse = z.object({
  run: z
    .object({
      id: z.string(),
      status: z.enum(RUN_STATUSES),
      error: z
        .object({ code: z.enum(ERROR_CODES), reason: z.enum(ERROR_REASONS).optional(), message: z.string() })
        .loose()
        .optional(),
      reason: z.string().optional(),
    })
    .nullable()
    .describe("null: the thread is in handoff, so the message was stored and no run started."),
  entries: z.array(entrySchema),
});

export const cancelRunResponse = z.object({ runId: z.string(), status: z.literal("cancelling") });

export const feedbackResponse = z.object({ entryId: z.string(), feedback: feedbackSchema.nullable() });

/** `POST …/approvals/:approvalId` (docs/api.md#approvals): a decision, exactly once. */
export const approvalDecisionBody = z.strictObject({
  decision: z.enum(APPROVAL_DECISIONS),
  reason: z.string().max(MAX_DECISION_REASON_CHARS).optional(),
});
export type ApprovalDecisionBody = z.infer<typeof approvalDecisionBody>;

/** An approval as the API shows it (docs/api.md#approvals). */
export const approvalViewSchema = z.object({
  id: z.string(),
  threadId: z.string(),
  agentId: z.string(),
  runId: z.string(),
  toolCallId: z.string(),
  toolName: z.string(),
  status: z.enum(["pending", "approved", "denied", "expired", "cancelled"]),
  by: z.enum(APPROVERS),
  requestedAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
  decidedAt: z.iso.datetime().nullable(),
  decidedBy: z.enum(DECIDERS).nullable(),
  reason: z.string().nullable(),
});

export type ApprovalView = z.infer<typeof approvalViewSchema>;

export const approvalResponse = z.object({ approval: approvalViewSchema });

/** `POST /v1/threads/:threadId/tool-results` (docs/tools.md#client-tools): a client tool's answer. */
export const toolResultBody = z.strictObject({
  toolCallId: z.string().min(1).max(128),
  output: z.json().optional(),
  error: z.string().max(MAX_DECISION_REASON_CHARS).optional(),
});
export type ToolResultBody = z.infer<typeof toolResultBody>;

export const toolResultResponse = z.object({ toolCallId: z.string(), status: z.literal("answered") });

/** The thread's answer to a client tool's result: accepted, or refused with its output's issues. */
export type ToolAnswer =
  | { status: "answered" }
  | { status: "refused"; issues: { path: string; message: string }[] };
