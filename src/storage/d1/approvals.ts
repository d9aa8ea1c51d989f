// The tenant's approval inbox read from D1's `agent_approvals` (docs/api.md#approvals): every statement binds the tenant.
import { z } from "zod";
import { type ApprovalStatus, type ApprovalView, approvalView } from "../../shared/approvals-api";

/** Keyset position: approvals newest first by (requested_at, id). */
export interface ApprovalPosition {
  requestedAt: string;
  id: string;
}

const COLUMNS = `id, thread_id, agent_id, run_id, tool_call_id, tool_name, status, by, requested_at, expires_at,
  decided_at, decided_by, reason`;
const AFTER = " AND (requested_at < ? OR (requested_at = ? AND id < ?))";
const ORDER = " ORDER BY requested_at DESC, id DESC LIMIT ?";

/** Each variant of the list, by whether it filters by agent and continues after a cursor. */
export const APPROVALS_SQL = {
  list: `SELECT ${COLUMNS} FROM agent_approvals WHERE tenant_id = ? AND status = ?${ORDER}`,
  listAfter: `SELECT ${COLUMNS} FROM agent_approvals WHERE tenant_id = ? AND status = ?${AFTER}${ORDER}`,
  listAgent: `SELECT ${COLUMNS} FROM agent_approvals WHERE tenant_id = ? AND agent_id = ? AND status = ?${ORDER}`,
  listAgentAfter: `SELECT ${COLUMNS} FROM agent_approvals WHERE tenant_id = ? AND agent_id = ? AND status = ?${AFTER}${ORDER}`,
} as const;

const approvalRow = z
  .object({
    id: z.string(),
    thread_id: z.string(),
    agent_id: z.string(),
    run_id: z.string(),
    tool_call_id: z.string(),
    tool_name: z.string(),
    status: z.string(),
    by: z.string(),
    requested_at: z.string(),
    expires_at: z.string(),
    decided_at: z.string().nullable(),
    decided_by: z.string().nullable(),
    reason: z.string().nullable(),
  })
  .transform((r) =>
    approvalView.parse({
      id: r.id,
      threadId: r.thread_id,
      agentId: r.agent_id,
      runId: r.run_id,
      toolCallId: r.tool_call_id,
      toolName: r.tool_name,
      status: r.status,
      by: r.by,
      requestedAt: r.requested_at,
      expiresAt: r.expires_at,
      decidedAt: r.decided_at,
      decidedBy: r.decided_by,
      reason: r.reason,
    }),
  );

/** One page of the tenant's approvals in one status (optionally one agent's), newest first. */
export async function listApprovals(
  db: D1Database,
  tenantId: string,
  filter: { status: ApprovalStatus; agentId?: string },
  page: { limit: number; after?: ApprovalPosition },
): Promise<{ items: ApprovalView[]; next?: ApprovalPosition }> {
  const bindings: (string | number)[] = [tenantId];
  if (filter.agentId !== undefined) bindings.push(filter.agentId);
  bindings.push(filter.status);
  if (page.after !== undefined) bindings.push(page.after.requestedAt, page.after.requestedAt, page.after.id);
  bindings.push(page.limit + 1);
  const sql =
    filter.agentId === undefined
      ? page.after === undefined
        ? APPROVALS_SQL.list
        : APPROVALS_SQL.listAfter
      : page.after === undefined
        ? APPROVALS_SQL.listAgent
        : APPROVALS_SQL.listAgentAfter;
  const { results } = await db
    .prepare(sql)
    .bind(...bindings)
    .all();
  const rows = results.map((r) => approvalRow.parse(r));
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  return rows.length > page.limit && last !== undefined
    ? { items, next: { requestedAt: last.requestedAt, id: last.id } }
    : { items };
}
