// The edge gate for thread traffic: verify the launch token and Origin, derive the object, call it with the claims.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { requireLaunchStanding } from "../auth/launch-standing";
import type { LaunchClaims } from "../auth/launch-token";
import { AppError, failureError, unwrap } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { DEFAULT_MAX_BODY_BYTES, parseWith, readJsonText } from "../http/json-body";
import { launchAccess, launchBearer } from "../http/launch-access";
import { threadCors } from "../http/launch-cors";
import { operation } from "../http/openapi";
import { BEARER_PREFIX, LIMITS, PROTOCOL } from "../shared/protocol";
import {
  approvalDecisionBody,
  approvalResponse,
  cancelRunResponse,
  entriesPageResponse,
  feedbackResponse,
  messageReplyResponse,
  threadInfoResponse,
  toolResultBody,
  toolResultResponse,
} from "../shared/thread-api";
import {
  CLAIMS_HEADER,
  feedbackBodySchema,
  type PostMessage,
  postMessageSchema,
  REQUEST_META_HEADER,
  type RequestMeta,
  responseRefusal,
  threadClaimsFrom,
  threadStub,
} from "../thread/contract";

const INTERNAL_ORIGIN = "https://thread.internal";
const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;
const ENTRY_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** `Sec-WebSocket-Protocol` must offer `agent.v1` and exactly one `bearer.<token>`. */
function tokenFromSubprotocols(header: string | undefined): string | null {
  if (!header) return null;
  const offered = header.split(",").map((p) => p.trim());
  const bearers = offered.filter((p) => p.startsWith(BEARER_PREFIX));
  if (!offered.includes(PROTOCOL) || bearers.length !== 1) return null;
  return bearers[0]!.slice(BEARER_PREFIX.length);
}

/** This request as the object learns it: its id, and the host the client reached the platform on. */
function requestMeta(c: AppContext): RequestMeta {
  return { requestId: c.get("requestId"), host: new URL(c.req.url).host };
}

/** A request built from scratch for the object's streaming paths: no client header reaches it unless named here. */
function internalRequest(
  c: AppContext,
  path: string,
  claims: LaunchClaims,
  pass: readonly string[],
  body?: string,
): Request {
  const headers = new Headers();
  for (const name of pass) {
    const value = c.req.header(name);
    if (value !== undefined) headers.set(name, value);
  }
  headers.set(CLAIMS_HEADER, JSON.stringify(threadClaimsFrom(claims)));
  headers.set(REQUEST_META_HEADER, JSON.stringify(requestMeta(c)));
  if (body !== undefined) headers.set("Content-Type", "application/json");
  return new Request(new URL(path, INTERNAL_ORIGIN), {
    method: body === undefined ? "GET" : "POST",
    headers,
    ...(body !== undefined ? { body } : {}),
  });
}

/** The object's refusal on a streaming path becomes the Worker's (same taxonomy, this request's id). */
async function refused(res: Response): Promise<never> {
  throw failureError(await responseRefusal(res));
}

/** The message body under the thread API's limits; its 413 keeps the thread API's own message. */
async function readMessage(c: AppContext): Promise<PostMessage> {
  let value: unknown;
  try {
    value = await readJsonText(c, DEFAULT_MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof AppError && error.code === "payload_too_large") {
      throw new AppError("payload_too_large", "Request body too large.");
    }
    throw error;
  }
  return parseWith(postMessageSchema, value);
}

/**
 * The launch token's claims for this request's thread, and that thread's object. A token whose key, agent, tenant or
 * visitor was revoked or disabled since its launch is refused here, before the object is called (docs/security.md,
 * "Launch tokens over HTTP"); the WebSocket path is watched by the thread itself.
 */
async function launchThread(c: AppContext) {
  const claims = await launchAccess(c, launchBearer(c.req.header("Authorization")));
  await requireLaunchStanding(c.env, claims);
  return { claims, threadClaims: threadClaimsFrom(claims), stub: await threadStub(c.env, claims) };
}

const WS_PASS = [
  "Upgrade",
  "Connection",
  "Sec-WebSocket-Key",
  "Sec-WebSocket-Version",
  "Sec-WebSocket-Extensions",
];
const SSE_PASS = ["Accept", "Last-Event-ID"];

export const threads = new Hono<AppEnv>()
  .use("/threads/*", threadCors.response)
  .options("/threads/*", threadCors.preflight)
  .get(
    "/threads/:threadId/ws",
    describeRoute(
      operation({
        tag: "Threads",
        summary: "The thread's WebSocket (frames: docs/protocol.md)",
        description:
          'Open with `new WebSocket(websocketUrl, ["agent.v1", "bearer." + token])`; the token goes in the subprotocol list, never the query string. Frames are JSON text validated by `src/shared/protocol.ts`; see docs/protocol.md.',
        auth: "launchToken",
        headers: {
          Upgrade: "Required. websocket",
          "Sec-WebSocket-Protocol": "Required. agent.v1, bearer.<launch token>",
        },
        response: { status: 101, description: "Switching Protocols: `Sec-WebSocket-Protocol: agent.v1`." },
        errors: [403, 404, 426, 429],
      }),
    ),
    async (c) => {
      if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
        throw new AppError("bad_request", "This endpoint needs a WebSocket upgrade.", {
          status: 426,
          headers: { Upgrade: "websocket" },
        });
      }
      const claims = await launchAccess(c, tokenFromSubprotocols(c.req.header("Sec-WebSocket-Protocol")));
      const stub = await threadStub(c.env, claims);
      const request = internalRequest(c, "/ws", claims, WS_PASS);
      request.headers.set("Sec-WebSocket-Protocol", PROTOCOL);
      const res = await stub.fetch(request);
      if (res.status !== 101 || res.webSocket === null) return refused(res);
      return new Response(null, {
        status: 101,
        webSocket: res.webSocket,
        headers: { "Sec-WebSocket-Protocol": PROTOCOL },
      });
    },
  )
  .get(
    "/threads/:threadId",
    describeRoute(
      operation({
        tag: "Threads",
        summary: "The thread: pinned agent version, digest, times, leaf",
        auth: "launchToken",
        response: { status: 200, schema: threadInfoResponse },
        errors: [403, 404],
      }),
    ),
    async (c) => {
      const { threadClaims, stub } = await launchThread(c);
      return c.json(unwrap(await stub.threadInfo(threadClaims)));
    },
  )
  .get("/threads/:threadId/", async (c) => {
    const { threadClaims, stub } = await launchThread(c);
    return c.json(unwrap(await stub.threadInfo(threadClaims)));
  })
  .get(
    "/threads/:threadId/entries",
    describeRoute(
      operation({
        tag: "Threads",
        summary: "One branch, root to leaf, a page at a time",
        auth: "launchToken",
        query: {
          leafId: "The branch's leaf (default: the latest).",
          cursor: "From the previous page's nextCursor.",
          limit: {
            description: "Entries per page, 1–200 (default 50).",
            schema: { type: "integer", minimum: 1, maximum: LIMITS.historyPageMax, default: 50 },
          },
        },
        response: { status: 200, schema: entriesPageResponse },
        errors: [400, 403, 404],
      }),
    ),
    async (c) => {
      const { threadClaims, stub } = await launchThread(c);
      const leafId = c.req.query("leafId");
      const cursor = c.req.query("cursor");
      const limit = c.req.query("limit");
      const page = await stub.threadEntries(threadClaims, {
        ...(leafId !== undefined ? { leafId } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
        // Checked by the object, after an empty thread has answered with no items.
        ...(limit !== undefined ? { limit: Number(limit) } : {}),
      });
      return c.json(unwrap(page));
    },
  )
  .post(
    "/threads/:threadId/messages",
    describeRoute(
      operation({
        tag: "Threads",
        summary: "Send a message; waits for the reply, or streams it as SSE",
        description:
          "With `Accept: text/event-stream` the run streams as server-sent events (`Last-Event-ID` resumes); otherwise the answer is the run and its entries once it settles. 201 for a new message, 200 for a retried clientMessageId.",
        auth: "launchToken",
        headers: {
          Accept: "application/json (default) or text/event-stream",
          "Last-Event-ID": "SSE: resume after this event.",
        },
        body: postMessageSchema,
        response: { status: 201, schema: messageReplyResponse },
        extraResponses: {
          200: { description: "A retried clientMessageId: the existing run.", schema: messageReplyResponse },
        },
        errors: [403, 404, 409, 429, 502],
      }),
    ),
    async (c) => {
      const { claims, threadClaims, stub } = await launchThread(c);
      const message = await readMessage(c);
      if ((c.req.header("Accept") ?? "").includes("text/event-stream")) {
        const res = await stub.fetch(
          internalRequest(c, "/messages", claims, SSE_PASS, JSON.stringify(message)),
        );
        return res.status < 400 ? new Response(res.body, res) : refused(res);
      }
      const { created, reply } = unwrap(await stub.postMessage(threadClaims, message, requestMeta(c)));
      return c.json(reply, created ? 201 : 200);
    },
  )
  .post(
    "/threads/:threadId/entries/:entryId/feedback",
    describeRoute(
      operation({
        tag: "Threads",
        summary: "Rate an assistant message (latest wins; null clears)",
        auth: "launchToken",
        body: feedbackBodySchema,
        response: { status: 200, schema: feedbackResponse },
        errors: [403, 404],
      }),
    ),
    async (c) => {
      const { threadClaims, stub } = await launchThread(c);
      const entryId = c.req.param("entryId");
      const body = parseWith(feedbackBodySchema, await readJsonText(c, DEFAULT_MAX_BODY_BYTES));
      // Entry ids are URL-safe; anything else cannot name one.
      if (!ENTRY_ID.test(entryId)) throw new AppError("not_found", "Entry not found.");
      return c.json(unwrap(await stub.giveFeedback(threadClaims, entryId, body)));
    },
  )
  .post(
    "/threads/:threadId/approvals/:approvalId",
    describeRoute(
      operation({
        tag: "Threads",
        summary: "Decide a pending approval of this thread (exactly once)",
        auth: "launchToken",
        body: approvalDecisionBody,
        response: { status: 200, schema: approvalResponse },
        errors: [400, 403, 404, 409],
      }),
    ),
    async (c) => {
      const { threadClaims, stub } = await launchThread(c);
      const approvalId = c.req.param("approvalId");
      const body = parseWith(approvalDecisionBody, await readJsonText(c, DEFAULT_MAX_BODY_BYTES));
      if (!ENTRY_ID.test(approvalId)) throw new AppError("not_found", "Approval not found.");
      return c.json({ approval: unwrap(await stub.decideApproval(threadClaims, approvalId, body)) });
    },
  )
  .post(
    "/threads/:threadId/tool-results",
    describeRoute(
      operation({
        tag: "Threads",
        summary: "Answer a client tool's request (the first valid answer wins)",
        auth: "launchToken",
        body: toolResultBody,
        response: { status: 200, schema: toolResultResponse },
        errors: [400, 403, 404, 409],
      }),
    ),
    async (c) => {
      const { threadClaims, stub } = await launchThread(c);
      const body = parseWith(toolResultBody, await readJsonText(c, DEFAULT_MAX_BODY_BYTES));
      const answer = unwrap(await stub.answerToolRequest(threadClaims, body));
      if (answer.status === "refused") {
        throw new AppError("bad_request", "The tool's answer was refused; the model was told it failed.", {
          details: { issues: answer.issues },
        });
      }
      return c.json({ toolCallId: body.toolCallId, status: "answered" as const });
    },
  )
  .post(
    "/threads/:threadId/runs/:runId/cancel",
    describeRoute(
      operation({
        tag: "Threads",
        summary: "Cancel a live or queued run",
        auth: "launchToken",
        response: { status: 202, schema: cancelRunResponse },
        errors: [400, 403, 404, 409],
      }),
    ),
    async (c) => {
      const { threadClaims, stub } = await launchThread(c);
      const runId = c.req.param("runId");
      // Run ids are URL-safe; anything else (an undecodable escape included) cannot name one.
      if (!RUN_ID.test(runId)) throw new AppError("bad_request", "That is not a run id.");
      return c.json(unwrap(await stub.cancelRun(threadClaims, runId)), 202);
    },
  )
  .on(["GET", "POST"], ["/threads/:threadId", "/threads/:threadId/*"], async (c) => {
    // Authenticated first, so an unknown path says nothing to a caller without a valid token.
    await launchThread(c);
    throw new AppError("not_found", "Not found.");
  });
