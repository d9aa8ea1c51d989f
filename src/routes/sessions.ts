// Tenant admin over projected threads: list, read, messages (D1), export and erasure (the thread object itself).
import { Hono } from "hono";
import { z } from "zod";
import { threadStubFor } from "../auth/thread-stub";
import { AppError, errors } from "../errors";
import type { AppContext, AppEnv } from "../http/context";
import { pageBody, readPage } from "../http/cursor";
import { parseWith } from "../http/json-body";
import { listName, messageView, positions, sessionView } from "../http/session-views";
import { requireAdminForWrites, tenantAuth } from "../http/tenant-auth";
import { ERROR_CODES } from "../shared/errors";
import { pageQuery, sessionListQuery } from "../shared/sessions-api";
import {
  eraseSessionRows,
  getSession,
  listMessages,
  listSessions,
  type ReadScope,
} from "../storage/d1/sessions-repository";
import { findThread, markThreadDeleted, type ThreadRecord } from "../storage/d1/thread-registry";
import { threadExportSchema } from "../storage/thread-export";

const THREAD_ID = /^[A-Za-z0-9_-]{1,128}$/;

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

const rpcFailure = z.object({ ok: z.literal(false), code: z.enum(ERROR_CODES), message: z.string() });
const rpcSuccess = z.object({ ok: z.literal(true), value: z.unknown() });

/** An RPC answer as a value: JSON text is parsed, a Result is unwrapped, anything else is taken as is. */
function rpcValue(answer: unknown): unknown {
  let value = answer;
  if (typeof answer === "string") {
    try {
      value = JSON.parse(answer);
    } catch (error) {
      throw new AppError("internal", "Internal error.", { cause: error });
    }
  }
  const failed = rpcFailure.safeParse(value);
  if (failed.success) throw new AppError(failed.data.code, failed.data.message);
  const succeeded = rpcSuccess.safeParse(value);
  return succeeded.success ? succeeded.data.value : value;
}

function unavailable(cause: unknown): AppError {
  return new AppError("upstream_unavailable", "The thread is unavailable; try again.", { cause });
}

export const sessions = new Hono<AppEnv>()
  .use("*", tenantAuth, requireAdminForWrites)
  .get("/", async (c) => {
    const query = parseWith(sessionListQuery, c.req.query(), "Query");
    const list = listName("sessions", [
      query.agentId ?? null,
      query.subject ?? null,
      query.updatedAfter ?? null,
    ]);
    const page = await readPage(c, list);
    const result = await listSessions(
      c.env.DB,
      tenantScope(c),
      {
        ...(query.agentId !== undefined ? { agentId: query.agentId } : {}),
        ...(query.subject !== undefined ? { subject: query.subject } : {}),
        ...(query.updatedAfter !== undefined
          ? { updatedAfter: new Date(query.updatedAfter).toISOString() }
          : {}),
      },
      {
        limit: page.limit,
        ...(page.after !== undefined ? { after: positions.session.decode(page.after) } : {}),
      },
    );
    const next = result.next === undefined ? undefined : positions.session.encode(result.next);
    return c.json(await pageBody(c, list, result.items.map(sessionView), next));
  })
  .get("/:threadId", async (c) => {
    const session = await getSession(c.env.DB, tenantScope(c), threadIdParam(c));
    if (session === null) throw errors.notFound("Session");
    return c.json(sessionView(session));
  })
  .get("/:threadId/messages", async (c) => {
    parseWith(pageQuery, c.req.query(), "Query");
    const threadId = threadIdParam(c);
    const list = listName("messages", [threadId]);
    const page = await readPage(c, list);
    const result = await listMessages(c.env.DB, tenantScope(c), threadId, {
      limit: page.limit,
      ...(page.after !== undefined ? { after: positions.message.decode(page.after) } : {}),
    });
    if (result === null) throw errors.notFound("Session");
    const next = result.next === undefined ? undefined : positions.message.encode(result.next);
    return c.json(await pageBody(c, list, result.items.map(messageView), next));
  })
  .get("/:threadId/export", async (c) => {
    const thread = await registryRow(c, { includeDeleted: false });
    const stub = await threadStubFor(c.env, thread);
    let answer: unknown;
    try {
      answer = await stub.exportThread();
    } catch (error) {
      throw unavailable(error);
    }
    const value = rpcValue(answer);
    if (value === null || value === undefined) throw errors.notFound("Session");
    const exported = threadExportSchema.safeParse(typeof value === "string" ? JSON.parse(value) : value);
    if (!exported.success) throw new AppError("internal", "Internal error.", { cause: exported.error });
    if (exported.data.tenantId !== thread.tenantId || exported.data.threadId !== thread.id) {
      throw new AppError("internal", "Internal error.");
    }
    return c.json(exported.data, 200, {
      "Content-Disposition": `attachment; filename="thread-${thread.id}.json"`,
    });
  })
  .delete("/:threadId", async (c) => {
    // Deleted first, so tokens for the thread are refused and late projections write nothing from here on.
    const thread = await registryRow(c, { includeDeleted: true });
    if (thread.deletedAt === null) {
      await markThreadDeleted(c.env.DB, thread.tenantId, thread.id, new Date().toISOString());
    }
    await eraseSessionRows(c.env.DB, thread.tenantId, thread.id);
    const stub = await threadStubFor(c.env, thread);
    try {
      rpcValue(await stub.eraseThread());
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw unavailable(error);
    }
    return c.body(null, 204);
  });
