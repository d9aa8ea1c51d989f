// Erasure by subject (SPEC §12): `DELETE /v1/subjects/:subject` (sk_), the kept receipts at `GET /v1/erasures/:id`,
// and the receipt keys at `/.well-known/jwks.json`.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { receiptJwks } from "../auth/receipt-keys";
import { errors } from "../errors";
import type { AppEnv } from "../http/context";
import { parseWith } from "../http/json-body";
import { operation } from "../http/openapi";
import { deploymentStore } from "../http/store";
import { eraseSubject, erasureAnswer } from "../http/subject-erasure";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import { erasureResponse, subjectErasureQuery } from "../shared/erasure-api";
import { findJob } from "../storage/d1/erasures";

/** A subject as private launches accept it (`POST /v1/agent-sessions`), URL-decoded by the router. */
const MAX_SUBJECT_CHARS = 256;
const ERASURE_ID = /^era_[a-z2-7]{26}$/;

export const subjects = new Hono<AppEnv>().use("*", tenantAuth, requireAdminForWrites).delete(
  "/:subject",
  describeRoute(
    operation({
      tag: "Privacy",
      summary: "Erase every conversation of a subject, with a signed receipt",
      description:
        "Erases the subject's threads (all agents, or `agentId`'s) from the thread objects, the D1 projection, the " +
        'registry, pins and the webhook payload store. 200 with the receipt; 202 `{status: "pending", remaining}` ' +
        "when more threads remain than one call erases: repeat the same request, which continues the same job " +
        "(same `id`). A repeat after completion with no new thread answers the same receipt.",
      auth: "tenantKey",
      query: subjectErasureQuery,
      response: { status: 200, schema: erasureResponse },
      extraResponses: { 202: { description: "Part way: repeat to continue.", schema: erasureResponse } },
      errors: [400, 404, 409, 502],
    }),
  ),
  async (c) => {
    const subject = c.req.param("subject");
    if (subject.length === 0 || subject.length > MAX_SUBJECT_CHARS) throw errors.notFound("Subject");
    const query = parseWith(subjectErasureQuery, c.req.query(), "Query");
    const { tenantId } = c.get("tenant");
    if (query.agentId !== undefined && (await deploymentStore(c).getAgent(tenantId, query.agentId)) === null)
      throw errors.notFound("Agent");
    const outcome = await eraseSubject(c.env, {
      tenantId,
      subject,
      scope: { kind: "subject", ...(query.agentId !== undefined ? { agentId: query.agentId } : {}) },
    });
    return erasureAnswer(c, outcome);
  },
);

export const erasures = new Hono<AppEnv>().use("*", tenantAuth, requireAdminForWrites).get(
  "/:erasureId",
  describeRoute(
    operation({
      tag: "Privacy",
      summary: "An erasure and its kept receipt (ids only: no subject, no content)",
      auth: "tenantKey",
      response: { status: 200, schema: erasureResponse },
      errors: [404],
    }),
  ),
  async (c) => {
    const id = c.req.param("erasureId");
    const job = ERASURE_ID.test(id) ? await findJob(c.env.DB, c.get("tenant").tenantId, id) : null;
    if (job === null) throw errors.notFound("Erasure");
    if (job.status === "pending") {
      return c.json({
        id: job.id,
        status: "pending" as const,
        scope: job.scope,
        remaining: job.threadIds.length - job.done,
      });
    }
    return c.json({
      id: job.id,
      status: "completed" as const,
      receipt: job.receipt ?? "",
      scope: job.scope,
      threadIds: job.threadIds,
      erasedAt: job.erasedAt ?? job.createdAt,
    });
  },
);

/** The public halves of the receipt keys; cacheable, since keys change only by rotation. */
export const wellKnown = new Hono<AppEnv>().get("/.well-known/jwks.json", async (c) =>
  c.json(await receiptJwks(c.env), 200, { "Cache-Control": "public, max-age=300" }),
);
