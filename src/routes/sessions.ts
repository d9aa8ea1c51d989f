// Tenant admin over projected threads: list and search (POST /v1/sessions/search), read, messages and holds (D1); export,
// handoff, messages, upgrade and erasure go through src/services/sessions.ts to the thread object itself.
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { AppError, errors } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { pageBody, pageFrom, readPage } from "../http/cursor";
import { parseWith, readJson } from "../http/json-body";
import { operation } from "../http/openapi";
import { holdView, listName, messageView, positions, sessionView } from "../http/session-views";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import {
  changeHandoff,
  decideApproval,
  eraseSession,
  exportSession,
  postHumanMessage,
  sessionRunInput,
  upgradeSession,
} from "../services/sessions";
import { listResponse } from "../shared/api";
import { entrySchema, type ThreadMode } from "../shared/protocol";
import {
  handoffRequest,
  handoffResponse,
  holdRequest,
  holdResponse,
  humanMessageRequest,
  messageResponse,
  pageQuery,
  RETIRED_SESSION_LIST_PARAMETERS,
  runInputQuery,
  runInputResponse,
  sessionListItem,
  sessionListQuery,
  sessionResponse,
  sessionSearchRequest,
  upgradeRequest,
  upgradeResponse,
} from "../shared/sessions-api";
import { approvalDecisionBody, approvalResponse } from "../shared/thread-api";
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

/** The list's filters, whichever form carried them (the query string, or the search body). */
interface SessionFilters {
  agentId?: string | undefined;
  subject?: string | undefined;
  q?: string | undefined;
  mode?: ThreadMode | undefined;
  updatedAfter?: string | undefined;
  preview?: boolean | undefined;
}

/** What a cursor is bound to: the same filters continue the same list, from either form. */
function sessionListName(filters: SessionFilters): string {
  return listName("sessions", [
    filters.agentId ?? null,
    filters.subject ?? null,
    filters.updatedAfter ?? null,
    ...(filters.mode !== undefined ? [filters.mode] : []),
    ...(filters.q !== undefined ? [`q:${filters.q}`] : []),
    ...(filters.preview === true ? ["preview"] : []),
  ]);
}

/** One page of the session list or, with `q`, of the search: the one implementation behind GET and POST. */
async function sessionPage(c: AppContext, filters: SessionFilters, page: { limit: number; after?: string }) {
  const list = sessionListName(filters);
  const filter = {
    ...(filters.agentId !== undefined ? { agentId: filters.agentId } : {}),
    ...(filters.subject !== undefined ? { subject: filters.subject } : {}),
    ...(filters.mode !== undefined ? { mode: filters.mode } : {}),
    ...(filters.preview === true ? { preview: true } : {}),
    ...(filters.updatedAfter !== undefined
      ? { updatedAfter: new Date(filters.updatedAfter).toISOString() }
      : {}),
  };
  if (filters.q !== undefined) {
    const found = await searchSessions(await projectionDb(c), c.get("tenant").tenantId, filters.q, filter, {
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
    return pageBody(c, list, items, next);
  }
  const result = await listSessions(await projectionDb(c), tenantScope(c), filter, {
    limit: page.limit,
    ...(page.after !== undefined ? { after: positions.session.decode(page.after) } : {}),
  });
  const next = result.next === undefined ? undefined : positions.session.encode(result.next);
  const holds = await holdsForSessions(c.env.DB, c.get("tenant").tenantId, result.items);
  const items = result.items.map((s) => sessionView(s, holds.get(s.threadId) ?? null));
  return pageBody(c, list, items, next);
}

const SEARCH_ROUTE = "POST /v1/sessions/search";

/**
 * `GET /v1/sessions?subject=` or `?q=`: 410 naming the search route, before any credential is read and without
 * echoing or logging the value (docs/privacy.md#end-user-ids-stay-out-of-urls).
 */
const retiredListFilters = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD") {
    const query = c.req.query();
    const taken = RETIRED_SESSION_LIST_PARAMETERS.filter((name) => name in query);
    if (taken.length > 0) {
      throw new AppError(
        "gone",
        `GET /v1/sessions no longer takes ${taken.join(" or ")} in the URL; use ${SEARCH_ROUTE} with ` +
          "the filters in the JSON body.",
      );
    }
  }
  await next();
});

/** A read key may search: this POST only reads (its body keeps the filters out of the URL). */
const requireAdminForChanges = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method === "POST" && c.req.path === "/v1/sessions/search") return next();
  return requireAdminForWrites(c, next);
});

export const sessions = new Hono<AppEnv>()
  .use("/", retiredListFilters)
  .use("*", tenantAuth, requireAdminForChanges)
  .get(
    "/",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "List conversations",
        description:
          "Filters that name no end user only. `subject` or `q` here answers `410 gone` naming " +
          `\`${SEARCH_ROUTE}\`, which takes them in its JSON body.`,
        auth: "tenantKey",
        query: sessionListQuery,
        response: { status: 200, schema: listResponse(sessionListItem) },
        errors: [400, 410],
      }),
    ),
    async (c) => {
      const query = parseWith(sessionListQuery, c.req.query(), "Query");
      const filters: SessionFilters = {
        agentId: query.agentId,
        mode: query.mode,
        updatedAfter: query.updatedAfter,
        preview: query.preview === "true",
      };
      return c.json(await sessionPage(c, filters, await readPage(c, sessionListName(filters))));
    },
  )
  .post(
    "/search",
    describeRoute(
      operation({
        tag: "Sessions",
        summary:
          "List conversations by any filter, the end user's id included, or search their messages with q",
        description:
          "The list of `GET /v1/sessions` (same items, order and cursors) with the filters in the body, so an end " +
          "user's id and search text never reach a URL. A read key may call it.",
        auth: "tenantKey",
        body: sessionSearchRequest,
        response: { status: 200, schema: listResponse(sessionListItem) },
        errors: [400],
      }),
    ),
    async (c) => {
      const { cursor, limit, ...filters } = await readJson(c, sessionSearchRequest);
      const page = await pageFrom(c, sessionListName(filters), { limit, cursor });
      return c.json(await sessionPage(c, filters, page));
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
    "/:threadId/approvals/:approvalId",
    describeRoute(
      operation({
        tag: "Sessions",
        summary: "Decide a pending approval as the agent's owner (exactly once)",
        auth: "tenantKey",
        body: approvalDecisionBody,
        response: { status: 200, schema: approvalResponse },
        errors: [400, 403, 404, 409, 502],
      }),
    ),
    async (c) => {
      const thread = await registryRow(c, { includeDeleted: false });
      const body = await readJson(c, approvalDecisionBody);
      const view = await decideApproval(c.env, thread, c.req.param("approvalId"), body);
      if (view === null) throw errors.notFound("Session");
      return c.json({ approval: view });
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
