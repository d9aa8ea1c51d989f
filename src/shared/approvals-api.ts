// The approval inbox's contract (docs/api.md#approvals): the statuses an approval goes through and the query of
// `GET /v1/approvals`; the approval's one view is the thread API's (`approvalViewSchema`).
import { z } from "zod";
import { pageLimit } from "./sessions-api";
import { type ApprovalView, approvalViewSchema } from "./thread-api";

export const APPROVAL_STATUSES = ["pending", "approved", "denied", "expired", "cancelled"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** An approval as every route, webhook and the console show it. */
export const approvalView = approvalViewSchema;
export type { ApprovalView };

const id = z.string().min(1).max(256);

/** `GET /v1/approvals`: the tenant's approvals in one status (default `pending`), newest first. */
export const approvalListQuery = z.strictObject({
  status: z.enum(APPROVAL_STATUSES).optional(),
  agentId: id.optional(),
  cursor: z.string().optional(),
  limit: pageLimit,
});
