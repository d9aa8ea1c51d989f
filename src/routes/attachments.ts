// Attachments over HTTP (docs/api.md, "Attachments"): the thread's upload and download with its launch token, and the
// tenant's download of a session's attachment with an sk_ key.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { requireLaunchStanding } from "../auth/launch-standing";
import { DEFAULT_ATTACHMENT_TYPES } from "../control/artifact";
import { errors, unwrap } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { launchAccess, launchBearer } from "../http/launch-access";
import { threadCors } from "../http/launch-cors";
import { operation } from "../http/openapi";
import { tenantAuth } from "../http/tenant-auth";
import {
  attachmentName,
  attachmentResponse,
  contentLength,
  mediaTypeOf,
  uploadAttachment,
} from "../services/attachments";
import { ATTACHMENT_ID_PATTERN, attachmentRef } from "../shared/protocol";
import { findThread } from "../storage/d1/thread-registry";
import { rowAddress, threadClaimsFrom, threadStub, threadStubFor } from "../thread/contract";

const THREAD_ID = /^[A-Za-z0-9_-]{1,128}$/;

const DOWNLOAD_HEADERS = {
  "Content-Disposition": "`inline` for images, `attachment` otherwise, with `filename*=UTF-8''<name>`.",
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy": "sandbox",
  "Cache-Control": "private, max-age=300",
};

/** The path's attachment id, or 404 for anything that cannot be one (no lookup). */
function attachmentIdParam(c: AppContext): string {
  const id = c.req.param("attachmentId") ?? "";
  if (!ATTACHMENT_ID_PATTERN.test(id)) throw errors.notFound("Attachment");
  return id;
}

/** The launch token's claims for the path's thread (refused when revoked or disabled since), and its object. */
async function launchThread(c: AppContext) {
  const claims = await launchAccess(c, launchBearer(c.req.header("Authorization")));
  await requireLaunchStanding(c.env, claims);
  return { claims: threadClaimsFrom(claims), stub: await threadStub(c.env, claims) };
}

/** Mounted before the thread routes, whose catch-all answers every other `/threads/:threadId/*` path. */
export const threadAttachments = new Hono<AppEnv>()
  .use("/threads/:threadId/attachments", threadCors.response)
  .use("/threads/:threadId/attachments/*", threadCors.response)
  .post(
    "/threads/:threadId/attachments",
    describeRoute(
      operation({
        tag: "Threads",
        summary: "Upload a file to the thread (raw body), to send with a message",
        description:
          "The body is the file itself, streamed; `Content-Length` is required. The agent's `attachments` policy " +
          "decides the media types, the largest file and the files per thread; images and PDF must carry their " +
          "type's signature. Uploads count against the thread's sends per minute and the visitor's frame budget.",
        auth: "launchToken",
        headers: {
          "Content-Type": "Required. The file's media type (one the agent accepts).",
          "Content-Length": "Required. The file's size in bytes.",
          "X-Attachment-Name":
            'The file\'s name, percent-encoded UTF-8, at most 255 characters (default "attachment").',
        },
        rawBody: { contentTypes: DEFAULT_ATTACHMENT_TYPES, description: "The file's bytes." },
        response: { status: 201, schema: attachmentRef },
        errors: [403, 404, 409, 429],
      }),
    ),
    async (c) => {
      try {
        const { claims, stub } = await launchThread(c);
        const length = contentLength(c.req.header("Content-Length"));
        const ref = await uploadAttachment(c.env, {
          claims,
          stub,
          body: c.req.raw.body,
          length,
          mediaType: mediaTypeOf(c.req.header("Content-Type")),
          name: attachmentName(c.req.header("X-Attachment-Name")),
        });
        return c.json(ref, 201);
      } catch (error) {
        // A refusal before (or while) the body is read: the rest of it is not wanted.
        if (c.req.raw.body !== null && !c.req.raw.bodyUsed) await c.req.raw.body.cancel().catch(() => {});
        throw error;
      }
    },
  )
  .get(
    "/threads/:threadId/attachments/:attachmentId",
    describeRoute(
      operation({
        tag: "Threads",
        summary: "Download one of the thread's attachments",
        auth: "launchToken",
        response: {
          status: 200,
          contentType: "application/octet-stream",
          description: "The file's bytes, with its own media type.",
          headers: DOWNLOAD_HEADERS,
        },
        errors: [404],
      }),
    ),
    async (c) => {
      const { claims, stub } = await launchThread(c);
      const id = attachmentIdParam(c);
      const ref = unwrap(await stub.attachmentOf(claims, id));
      const res = await attachmentResponse(c.env, claims.tenantId, ref);
      if (res === null) throw errors.notFound("Attachment");
      return res;
    },
  );

/** Mounted at `/sessions` before the session routes. */
export const sessionAttachments = new Hono<AppEnv>().get(
  "/:threadId/attachments/:attachmentId",
  describeRoute(
    operation({
      tag: "Sessions",
      summary: "Download an attachment of one of the tenant's conversations",
      auth: "tenantKey",
      response: {
        status: 200,
        contentType: "application/octet-stream",
        description: "The file's bytes, with its own media type.",
        headers: DOWNLOAD_HEADERS,
      },
      errors: [404, 502],
    }),
  ),
  tenantAuth,
  async (c) => {
    const threadId = c.req.param("threadId");
    if (!THREAD_ID.test(threadId)) throw errors.notFound("Session");
    const id = attachmentIdParam(c);
    const tenantId = c.get("tenant").tenantId;
    // Another tenant's thread is simply not found.
    const thread = await findThread(c.env.DB, tenantId, threadId);
    if (thread === null || thread.deletedAt !== null) throw errors.notFound("Session");
    const stub = await threadStubFor(c.env, thread);
    const ref = unwrap(await stub.getAttachment(rowAddress(thread), id));
    const res = await attachmentResponse(c.env, tenantId, ref);
    if (res === null) throw errors.notFound("Attachment");
    return res;
  },
);
