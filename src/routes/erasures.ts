// Erasure by subject (docs/privacy.md): `POST /v1/subject-erasures` (sk_, the subject in the body), the kept receipts at
// `GET /v1/erasures/:id`, the tenant's subject digest key, and the receipt keys at `/.well-known/jwks.json`.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { receiptJwks } from "../auth/receipt-keys";
import { subjectDigestKey } from "../auth/subject-digest";
import { AppError, errors } from "../errors";
import type { AppEnv } from "../http/context";
import { readJson } from "../http/json-body";
import { operation, retiredOperation } from "../http/openapi";
import { deploymentStore } from "../http/store";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import { eraseSubject, erasureAnswer, receiptSubjectDigest } from "../services/subject-erasure";
import { base64urlEncode } from "../shared/bytes";
import {
  erasureResponse,
  type SubjectDigestKeyResponse,
  subjectDigestKeyResponse,
  subjectErasureRequest,
} from "../shared/erasure-api";
import { findJob } from "../storage/d1/erasures";

const ERASURE_ID = /^era_[a-z2-7]{26}$/;

export const subjectErasures = new Hono<AppEnv>().use("*", tenantAuth, requireAdminForWrites).post(
  "/",
  describeRoute(
    operation({
      tag: "Privacy",
      summary: "Erase every conversation of a subject, with a signed receipt",
      description:
        "The subject goes in the JSON body, never in the URL (URLs reach request logs and traces). Erases the " +
        "subject's threads (all agents, or `agentId`'s) from the thread objects, the D1 projection, the registry, " +
        'pins and the webhook payload store. 200 with the receipt; 202 `{status: "pending", remaining}` when more ' +
        "threads remain than one call erases: repeat the same request, which continues the same job (same `id`). " +
        "The threads' attachment objects no other live thread uses are deleted and listed in `attachments`. " +
        "A repeat after completion with no new thread answers the same receipt. The receipt's `subjectDigest` is " +
        "HMAC-SHA-256 of the subject under the key of `GET /v1/subject-digest-key`.",
      auth: "tenantKey",
      body: subjectErasureRequest,
      response: { status: 200, schema: erasureResponse },
      extraResponses: { 202: { description: "Part way: repeat to continue.", schema: erasureResponse } },
      errors: [400, 404, 409, 413, 415, 502],
    }),
  ),
  async (c) => {
    const body = await readJson(c, subjectErasureRequest);
    const { tenantId } = c.get("tenant");
    if (body.agentId !== undefined && (await deploymentStore(c).getAgent(tenantId, body.agentId)) === null)
      throw errors.notFound("Agent");
    const outcome = await eraseSubject(c.env, {
      tenantId,
      subject: body.subject,
      scope: { kind: "subject", ...(body.agentId !== undefined ? { agentId: body.agentId } : {}) },
    });
    const answer = erasureAnswer(outcome);
    return c.json(answer.body, answer.status);
  },
);

/** `GET /v1/subject-digest-key`: derived per tenant on each call (src/auth/subject-digest.ts), never stored. */
export const subjectDigestKeys = new Hono<AppEnv>().use("*", tenantAuth).get(
  "/",
  describeRoute(
    operation({
      tag: "Privacy",
      summary: "The tenant's key for the `subjectDigest` of erasure receipts",
      description:
        "A receipt names its subject only as `subjectDigest`: base64url (unpadded) HMAC-SHA-256 of the subject's " +
        "UTF-8 bytes under this key. Compute it for a subject id to show which subject a receipt covers. The key " +
        "is the tenant's alone and never changes.",
      auth: "tenantKey",
      response: { status: 200, schema: subjectDigestKeyResponse },
    }),
  ),
  async (c) => {
    const key = await subjectDigestKey(c.env, c.get("tenant").tenantId);
    const body: SubjectDigestKeyResponse = { algorithm: "HMAC-SHA-256", key: base64urlEncode(key) };
    return c.json(body, 200, { "Cache-Control": "no-store" });
  },
);

/** The retired path forms, which put the end user's id in the URL: 410 naming the new route, nothing done. */
export function retiredSubjectRoute(replacement: string): never {
  throw new AppError(
    "gone",
    `This route took the subject in the URL and was retired; use ${replacement} with the subject in the JSON body.`,
  );
}

const ERASE = "POST /v1/subject-erasures {subject, agentId?}";
const HOLD = "PUT /v1/subject-holds {subject, reason}";
const LIFT = "DELETE /v1/subject-holds {subject}";

export const retiredSubjects = new Hono<AppEnv>()
  .delete(
    "/:subject",
    describeRoute(
      retiredOperation({ tag: "Privacy", summary: "Retired subject erasure", replacement: ERASE }),
    ),
    () => retiredSubjectRoute(ERASE),
  )
  .put(
    "/:subject/hold",
    describeRoute(retiredOperation({ tag: "Privacy", summary: "Retired subject hold", replacement: HOLD })),
    () => retiredSubjectRoute(HOLD),
  )
  .delete(
    "/:subject/hold",
    describeRoute(
      retiredOperation({ tag: "Privacy", summary: "Retired subject hold lift", replacement: LIFT }),
    ),
    () => retiredSubjectRoute(LIFT),
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
    const receipt = job.receipt ?? "";
    const digest = receiptSubjectDigest(receipt);
    return c.json({
      id: job.id,
      status: "completed" as const,
      receipt,
      scope: job.scope,
      threadIds: job.threadIds,
      erasedAt: job.erasedAt ?? job.createdAt,
      ...(digest !== undefined ? { subjectDigest: digest } : {}),
      attachments: job.attachments,
    });
  },
);

/** The public halves of the receipt keys; cacheable, since keys change only by rotation. */
export const wellKnown = new Hono<AppEnv>().get("/.well-known/jwks.json", async (c) =>
  c.json(await receiptJwks(c.env), 200, { "Cache-Control": "public, max-age=300" }),
);
