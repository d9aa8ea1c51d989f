// The approvals API contract (docs/api.md#approvals): an approval as every route, webhook and the console show it,
// and the query of the tenant's approval inbox.
import { z } from "zod";
import { APPROVAL_DECISIONS, APPROVERS, DECIDERS, MAX_DECISION_REASON_CHARS } from "./protocol";
import { pageLimit } from "./sessions-api";

export const APPROVAL_STATUSES = ["pending", "approved", "denied", "expired", "cancelled"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

const isoTime = z.iso.datetime();
const id = z.string().min(1).max(256);

/** One approval: what a run asked for, who may decide it, and what became of it. */
export const approvalView = z.object({
  id,
  threadId: id,
  agentId: id,
  runId: id,
  toolCallId: id,
  toolName: z.string(),
  status: z.enum(APPROVAL_STATUSES),
  /** Who may decide it. */
  by: z.enum(APPROVERS),
  requestedAt: isoTime,
  expiresAt: isoTime,
  decidedAt: isoTime.nullable(),
  /** Who decided it: the thread's user, the tenant, the clock (`timeout`) or the platform (`system`). */
  decidedBy: z.enum(DECIDERS).nullable(),
  reason: z.string().nullable(),
});
export type ApprovalView = z.infer<typeof approvalView>;

/** `GET /v1/approvals`: the tenant's approvals in one status (default `pending`), newest first. */
export const approvalListQuery = z.strictObject({
  status: z.enum(APPROVAL_STATUSES).optional(),
  agentId: id.optional(),
  cursor: z.string().optional(),
  limit: pageLimit,
});

/** `POST /v1/threads/:threadId/approvals/:approvalId` and `POST /v1/sessions/:threadId/approvals/:approvalId`. */
export const approvalDecisionRequest = z.strictObject({
  decision: z.enum(APPROVAL_DECISIONS),
  reason: z.string().max(MAX_DECISION_REASON_CHARS).optional(),
});

export const approvalDecisionResponse = z.object({ approval: approvalView });
