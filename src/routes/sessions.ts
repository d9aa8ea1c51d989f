// Tenant admin over projected threads: list, read, messages and holds (D1); export, handoff, messages, upgrade and
// erasure go through src/services/sessions.ts to the thread object itself.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { errors } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { parseWith, readJson } from "../http/json-body";
import { operation } from "../http/openapi";
import { holdView, listName, messageView, positions, sessionView } from "../http/session-views";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import {
  changeHandoff,
  eraseSession,
  exportSession,
  postHumanMessage,
  sessionRunInput,
  upgradeSession,
} from "../services/sessions";
import { listResponse } from "../shared/api";
import { entrySchema } from "../shared/protocol";
import {
  handoffRequest,
  handoffResponse,
  holdRequest,
  holdResponse,
  humanMessageRequest,
  messageResponse,
  pageQuery,
  runInputQuery,
  runInputResponse,
  sessionListItem,
  sessionListQuery,
  sessionResponse,
  upgradeRequest,
  upgradeResponse,
} from "../shared/sessions-api";
import { findHold, holdsForSessions, putHold, removeHold } from "../storage/d1/legal-holds";
import { searchSessions } from "../storage/d1/session-search";
import { getSession, listMessages, listSessions, type ReadScope } from "../storage/d1/sessions-repository";
import { projectionReadDb } from "../storage/d1/shards";
import { findThread, type ThreadRecord } from "../storage/d1/thread-registry";

const THREAD_ID = /^[A-Za-z0-9_-]{1,128}$/;
const RUN_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** The D1 shard holding the caller's tenant's projection (src/storage/d1/shards.ts). */
function projectionDb(c: AppContext): Promise<D1Database> {
  return projectionReadDb(c.env, c.get("tenant").tenantId);
}

function tenantScope(c: AppContext): ReadScope {
  return { kind: "tenant", tenantId: c.get("tenant").tenantId };
}

/** The path's thread id, or 404 for anything that cannot be one (no lookup, no oracle). */
function threadIdParam(c: AppContext): string {
  const threadId = c.req.param("threadId") ?? "";
  if (!THREAD_ID.test(threadId)) throw errors.notFound("Session");
  return threadId;
}

/** The registry row of one of the caller's threads; other tenants' threads are simply not found. */
async function registryRow(c: AppContext, options: { includeDeleted: boolean }): Promise<ThreadRecord> {
  const thread = await findThread(c.env.DB, c.get("tenant").tenantId, threadIdParam(c));
  if (thread === null || (thread.deletedAt !== null && !options.includeDeleted))
    throw errors.notFound("Session");
  return thread;
}

export const sessions = new Hono<AppEnv>()
  .use("*", tenantAuth, requireAdminForWrites)
  .get(
    "/",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "List conversations, or search their messages with q",
        auth: "tenantKey",
        query: sessionListQuery,
        response: { status: 200, schema: listResponse(sessionListItem) },
        errors: [400],
      }),
    ),
    async (c) => {
      const query = parseWith(sessionListQuery, c.req.query(), "Query");
      const list = listName("sessions", [
        query.agentId ?? null,
        query.subject ?? null,
        query.updatedAfter ?? null,
        ...(query.mode !== undefined ? [query.mode] : []),
        ...(query.q !== undefined ? [`q:${query.q}`] : []),
        ...(query.preview === "true" ? ["preview"] : []),
      ]);
      const page = await readPage(c, list);
      const filter = {
        ...(query.agentId !== undefined ? { agentId: query.agentId } : {}),
        ...(query.subject !== undefined ? { subject: query.subject } : {}),
        ...(query.mode !== undefined ? { mode: query.mode } : {}),
        ...(query.preview === "true" ? { preview: true } : {}),
        ...(query.updatedAfter !== undefined
          ? { updatedAfter: new Date(query.updatedAfter).toISOString() }
          : {}),
      };
      if (query.q !== undefined) {
        const found = await searchSessions(await projectionDb(c), c.get("tenant").tenantId, query.q, filter, {
          limit: page.limit,
          ...(page.after !== undefined ? { after: positions.search.decode(page.after) } : {}),
        });
        const held = await holdsForSessions(
          c.env.DB,
          c.get("tenant").tenantId,
          found.items.map((i) => i.session),
        );
        const items = found.items.map((i) => ({
          ...sessionView(i.session, held.get(i.session.threadId) ?? null),
          match: i.match,
        }));
        const next = found.next === undefined ? undefined : positions.search.encode(found.next);
        return c.json(await pageBody(c, list, items, next));
      }
      const result = await listSessions(await projectionDb(c), tenantScope(c), filter, {
        limit: page.limit,
        ...(page.after !== undefined ? { after: positions.session.decode(page.after) } : {}),
      });
      const next = result.next === undefined ? undefined : positions.session.encode(result.next);
      const holds = await holdsForSessions(c.env.DB, c.get("tenant").tenantId, result.items);
      const items = result.items.map((s) => sessionView(s, holds.get(s.threadId) ?? null));
      return c.json(await pageBody(c, list, items, next));
    },
  )
  .get(
    "/:threadId",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "Get a conversation",
        auth: "tenantKey",
        response: { status: 200, schema: sessionResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const session = await getSession(await projectionDb(c), tenantScope(c), threadIdParam(c));
      if (session === null) throw errors.notFound("Session");
      const hold = await findHold(c.env.DB, session.tenantId, session.threadId, session.subject);
      return c.json(sessionView(session, hold));
    },
  )
  .put(
    "/:threadId/hold",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "Place a legal hold on a conversation (retention skips it, erasure is refused)",
        auth: "tenantKey",
        body: holdRequest,
        response: { status: 200, schema: holdResponse },
        errors: [404],
      }),
    ),
    async (c) => {
      const body = await readJson(c, holdRequest);
      const thread = await registryRow(c, { includeDeleted: false });
      const hold = await putHold(c.env.DB, thread.tenantId, {
        scope: "thread",
        target: thread.id,
        reason: body.reason,
        createdAt: new Date().toISOString(),
        createdByKey: c.get("tenant").apiKeyId,
      });
      return c.json(holdView(hold));
    },
  )
  .delete(
    "/:threadId/hold",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "Lift a conversation's legal hold (its subject's hold, if any, still applies)",
        auth: "tenantKey",
        response: { status: 204, description: "Lifted." },
        errors: [404],
      }),
    ),
    async (c) => {
      const thread = await registryRow(c, { includeDeleted: false });
      if (!(await removeHold(c.env.DB, thread.tenantId, "thread", thread.id))) throw errors.notFound("Hold");
      return c.body(null, 204);
    },
  )
  .get(
    "/:threadId/messages",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "A conversation's messages, oldest first",
        auth: "tenantKey",
        query: pageQuery,
        response: { status: 200, schema: listResponse(messageResponse) },
        errors: [400, 404],
      }),
    ),
    async (c) => {
      parseWith(pageQuery, c.req.query(), "Query");
      const threadId = threadIdParam(c);
      const list = listName("messages", [threadId]);
      const page = await readPage(c, list);
      const result = await listMessages(await projectionDb(c), tenantScope(c), threadId, {
        limit: page.limit,
        ...(page.after !== undefined ? { after: positions.message.decode(page.after) } : {}),
      });
      if (result === null) throw errors.notFound("Session");
      const next = result.next === undefined ? undefined : positions.message.encode(result.next);
      return c.json(await pageBody(c, list, result.items.map(messageView), next));
    },
  )
  .get(
    "/:threadId/export",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "Export a conversation as one JSON document (streamed, as an attachment)",
        auth: "tenantKey",
        response: {
          status: 200,
          contentType: "application/json",
          description: "The thread export (docs/storage.md).",
        },
        errors: [404, 502],
      }),
    ),
    async (c) => {
      const thread = await registryRow(c, { includeDeleted: false });
      // The document streams through without being held here.
      const body = await exportSession(c.env, thread);
      if (body === null) throw errors.notFound("Session");
      return c.body(body, 200, {
        "Content-Type": "application/json",
        "Content-Disposition": `attachment; filename="thread-${thread.id}.json"`,
      });
    },
  )
  .get(
    "/:threadId/runs/:runId/input",
    describeRoute(
      operation({
        tag: "Sessions",
        summary:
          "A run's model input of one model call (its last by default), rebuilt from storage, with its audit record",
        auth: "tenantKey",
        query: runInputQuery,
        response: { status: 200, schema: runInputResponse },
        errors: [400, 404, 409, 502],
      }),
    ),
    async (c) => {
      const { step } = parseWith(runInputQuery, c.req.query(), "Query");
      const runId = c.req.param("runId");
      if (!RUN_ID.test(runId)) throw errors.notFound("Run");
      const thread = await registryRow(c, { includeDeleted: false });
      const view = await sessionRunInput(c.env, thread, runId, step);
      if (view === null) throw errors.notFound("Run");
      return c.json(runInputResponse.parse(view));
    },
  )
  .post(
    "/:threadId/handoff",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "Start or end a human handoff",
        auth: "tenantKey",
        body: handoffRequest,
        response: { status: 200, schema: handoffResponse },
        errors: [404, 502],
      }),
    ),
    async (c) => {
      const thread = await registryRow(c, { includeDeleted: false });
      const body = await readJson(c, handoffRequest);
      const view = await changeHandoff(c.env, thread, body);
      if (view === null) throw errors.notFound("Session");
      return c.json(view);
    },
  )
  .post(
    "/:threadId/messages",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "Post a human agent's message into the conversation",
        auth: "tenantKey",
        body: humanMessageRequest,
        response: { status: 201, schema: z.object({ entry: entrySchema }) },
        errors: [404, 409, 502],
      }),
    ),
    async (c) => {
      const thread = await registryRow(c, { includeDeleted: false });
      const body = await readJson(c, humanMessageRequest);
      const entry = await postHumanMessage(c.env, thread, body);
      if (entry === null) throw errors.notFound("Session");
      return c.json({ entry }, 201);
    },
  )
  .post(
    "/:threadId/upgrade",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "Move a conversation to another published version of its agent, from its current leaf on",
        auth: "tenantKey",
        body: upgradeRequest,
        response: { status: 200, schema: upgradeResponse },
        errors: [400, 404, 409, 502],
      }),
    ),
    async (c) => {
      const thread = await registryRow(c, { includeDeleted: false });
      const body = await readJson(c, upgradeRequest);
      const reply = await upgradeSession(c.env, thread, body);
      if (reply === null) throw errors.notFound("Session");
      return c.json(reply);
    },
  )
  .delete(
    "/:threadId",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "Erase a conversation (thread object and stored rows)",
        auth: "tenantKey",
        response: { status: 204, description: "Erased." },
        errors: [404, 409, 502],
      }),
    ),
    async (c) => {
      await eraseSession(c.env, await registryRow(c, { includeDeleted: true }));
      return c.body(null, 204);
    },
  );
