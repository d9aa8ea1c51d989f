// Tenant admin: the approval inbox (`GET /v1/approvals`), tool calls waiting for a decision across the tenant's
// threads, read from D1's `agent_approvals` (docs/api.md#approvals).
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { AppError } from "../errors";
import type { AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { parseWith } from "../http/json-body";
import { operation } from "../http/openapi";
import { listName } from "../http/session-views";
import { tenantAuth } from "../http/tenant-auth";
import { listResponse } from "../shared/api";
import { approvalListQuery, approvalView } from "../shared/approvals-api";
import { type ApprovalPosition, listApprovals } from "../storage/d1/approvals";
import { projectionReadDb } from "../storage/d1/shards";

const position = z.tuple([z.string(), z.string()]);

function decodePosition(text: string): ApprovalPosition {
  try {
    const parsed = position.safeParse(JSON.parse(text));
    if (parsed.success) return { requestedAt: parsed.data[0], id: parsed.data[1] };
  } catch {
    // Falls through to the same answer as any other unreadable cursor.
  }
  throw new AppError("bad_request", "Invalid cursor.");
}

export const approvals = new Hono<AppEnv>().use("*", tenantAuth).get(
  "/",
  describeRoute(
    operation({
      tag: "Approvals",
      summary: "List the tenant's approvals in one status (pending by default), newest first",
      description:
        "Tool calls that wait for (or had) a person's decision, across every thread of the tenant. Decide one with " +
        "`POST /v1/sessions/{threadId}/approvals/{approvalId}`.",
      auth: "tenantKey",
      query: approvalListQuery,
      response: { status: 200, schema: listResponse(approvalView) },
      errors: [400],
    }),
  ),
  async (c) => {
    const query = parseWith(approvalListQuery, c.req.query(), "Query");
    const status = query.status ?? "pending";
    const list = listName("approvals", [status, query.agentId ?? null]);
    const page = await readPage(c, list);
    const tenantId = c.get("tenant").tenantId;
    const result = await listApprovals(
      await projectionReadDb(c.env, tenantId),
      tenantId,
      { status, ...(query.agentId !== undefined ? { agentId: query.agentId } : {}) },
      {
        limit: page.limit,
        ...(page.after !== undefined ? { after: decodePosition(page.after) } : {}),
      },
    );
    const next =
      result.next === undefined ? undefined : JSON.stringify([result.next.requestedAt, result.next.id]);
    return c.json(await pageBody(c, list, result.items, next));
  },
);
