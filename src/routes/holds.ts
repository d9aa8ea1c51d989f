// Tenant admin: legal holds (docs/privacy.md) — the tenant's holds listed, and holds on a subject (every thread of it).
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { AppError, errors } from "../errors";
import type { AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { readJson } from "../http/json-body";
import { operation } from "../http/openapi";
import { holdView } from "../http/session-views";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import { listResponse } from "../shared/api";
import { holdResponse, pageQuery, subjectHoldRelease, subjectHoldRequest } from "../shared/sessions-api";
import { listHolds, putHold, removeHold } from "../storage/d1/legal-holds";

const holdPosition = z.tuple([z.string(), z.enum(["thread", "subject"]), z.string()]);

function decodePosition(text: string): { createdAt: string; scope: string; target: string } {
  try {
    const parsed = holdPosition.safeParse(JSON.parse(text));
    if (parsed.success) {
      const [createdAt, scope, target] = parsed.data;
      return { createdAt, scope, target };
    }
  } catch {
    // Falls through to the same answer as any other unreadable cursor.
  }
  throw new AppError("bad_request", "Invalid cursor.");
}

export const holds = new Hono<AppEnv>().use("*", tenantAuth, requireAdminForWrites).get(
  "/",
  describeRoute(
    operation({
      tag: "Privacy",
      summary: "List the tenant's legal holds, oldest first",
      auth: "tenantKey",
      query: pageQuery,
      response: { status: 200, schema: listResponse(holdResponse) },
      errors: [400],
    }),
  ),
  async (c) => {
    const page = await readPage(c, "holds");
    const result = await listHolds(c.env.DB, c.get("tenant").tenantId, {
      limit: page.limit,
      ...(page.after !== undefined ? { after: decodePosition(page.after) } : {}),
    });
    const next =
      result.next === undefined
        ? undefined
        : JSON.stringify([result.next.createdAt, result.next.scope, result.next.target]);
    return c.json(await pageBody(c, "holds", result.items.map(holdView), next));
  },
);

/**
 * Holds on a subject (every thread of it, present and future). The subject travels in the JSON body, never in the
 * URL: URLs reach request logs and traces (docs/privacy.md#end-user-ids-stay-out-of-urls).
 */
export const subjectHolds = new Hono<AppEnv>()
  .use("*", tenantAuth, requireAdminForWrites)
  .put(
    "/",
    describeRoute(
      operation({
        tag: "Privacy",
        summary: "Place a legal hold on a subject: every thread of it, present and future, is held",
        description: "A repeated PUT re-words the reason and keeps the original time. `reason` is optional.",
        auth: "tenantKey",
        body: subjectHoldRequest,
        response: { status: 200, schema: holdResponse },
      }),
    ),
    async (c) => {
      const body = await readJson(c, subjectHoldRequest);
      const hold = await putHold(c.env.DB, c.get("tenant").tenantId, {
        scope: "subject",
        target: body.subject,
        reason: body.reason ?? "",
        createdAt: new Date().toISOString(),
        createdByKey: c.get("tenant").apiKeyId,
      });
      return c.json(holdView(hold));
    },
  )
  .delete(
    "/",
    describeRoute(
      operation({
        tag: "Privacy",
        summary: "Lift a subject's legal hold (threads with their own hold stay held)",
        description:
          "DELETE with a JSON body `{subject, reason?}` (the reason is not kept once the hold is lifted).",
        auth: "tenantKey",
        body: subjectHoldRelease,
        response: { status: 204, description: "Lifted." },
        errors: [404],
      }),
    ),
    async (c) => {
      const body = await readJson(c, subjectHoldRelease);
      if (!(await removeHold(c.env.DB, c.get("tenant").tenantId, "subject", body.subject)))
        throw errors.notFound("Hold");
      return c.body(null, 204);
    },
  );
