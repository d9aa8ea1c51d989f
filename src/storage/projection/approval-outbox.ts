// Queues an approval for D1's `agent_approvals` (docs/api.md#approvals): unlike runs, the record travels in its outbox
// row, so the row always holds the newest view of it.
import type { Environment } from "../../shared/api";
import type { ApprovalView } from "../../shared/approvals-api";
import type { RunAction } from "../thread/action-store";
import type { ThreadBinding } from "../thread/pin-store";

/**
 * What the drain writes to `agent_approvals`: the approval as the API shows it, and where it belongs (the drain
 * takes the tenant and environment from the thread's binding when they are left out).
 */
export interface ApprovalProjection extends ApprovalView {
  tenantId?: string;
  environment?: Environment;
}

/**
 * Queues the approval's current view for the D1 projection, at `revision` (its `run_actions.revision`). Call it
 * inside the `transactionSync` that writes the change, on every change (request, decision, expiry, cancellation).
 * A row already waiting for this approval takes the newer view and revision, so the drain always sends the newest;
 * the drain deletes the row once the run action is still at the revision it sent. Returns the row's seq.
 */
export function enqueueApproval(
  storage: DurableObjectStorage,
  view: ApprovalProjection,
  revision: number,
  now: number,
): number {
  const payload = JSON.stringify(view);
  const waiting = storage.sql
    .exec<{ seq: number }>(
      "UPDATE outbox SET version = ?, payload_json = ? WHERE kind = 'approval' AND ref_id = ? RETURNING seq",
      revision,
      payload,
      view.id,
    )
    .toArray()[0];
  if (waiting !== undefined) return waiting.seq;
  return storage.sql
    .exec<{ seq: number }>(
      `INSERT INTO outbox (kind, ref_id, version, payload_json, attempts, next_attempt_at)
       VALUES ('approval', ?, ?, ?, 0, ?) RETURNING seq`,
      view.id,
      revision,
      payload,
      now,
    )
    .one().seq;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** An approval as the API, the console and D1 show it, from its run action (an answered call counts as approved). */
export function approvalViewOf(binding: ThreadBinding, action: RunAction): ApprovalView {
  return {
    id: action.id,
    threadId: binding.threadId,
    agentId: binding.agentId,
    runId: action.runId,
    toolCallId: action.toolCallId,
    toolName: action.name,
    status: action.status === "answered" ? "approved" : action.status,
    by: action.approver ?? "any",
    requestedAt: iso(action.createdAt),
    expiresAt: iso(action.expiresAt),
    decidedAt: action.decidedAt === null ? null : iso(action.decidedAt),
    decidedBy: action.decidedBy,
    reason: action.reason,
  };
}

/** An approval's projection with where it belongs; the reconciliation rebuilds D1's rows with it. */
export function approvalProjection(binding: ThreadBinding, action: RunAction): ApprovalProjection {
  return { ...approvalViewOf(binding, action), tenantId: binding.tenantId, environment: binding.environment };
}
