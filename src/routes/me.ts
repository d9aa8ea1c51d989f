// An end user's own threads with one agent (`GET /v1/me/threads`), scoped by the launch token's tenant, agent and
// subject; `DELETE /v1/me/threads` erases them all (docs/privacy.md) and revokes the visitor.
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import { AppError } from "../errors";
import type { AppEnv } from "../http/context";
import { DEFAULT_PAGE_LIMIT, decodeCursor, encodeCursor, MAX_PAGE_LIMIT } from "../http/cursor";
import { parseWith } from "../http/json-body";
import { launchAccess, launchBearer } from "../http/launch-access";
import { threadCors } from "../http/launch-cors";
import { operation } from "../http/openapi";
import { listName, myThreadView, positions } from "../http/session-views";
import { eraseOwnThreads, erasureAnswer } from "../services/subject-erasure";
import { listResponse } from "../shared/api";
import { erasureResponse } from "../shared/erasure-api";
import { myThreadResponse, pageQuery } from "../shared/sessions-api";
import { listSessions, type ReadScope } from "../storage/d1/sessions-repository";
import { projectionReadDb } from "../storage/d1/shards";

const limitSchema = z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT);

function readLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_PAGE_LIMIT;
  const parsed = /^[0-9]{1,4}$/.test(raw) ? limitSchema.safeParse(raw) : null;
  if (parsed === null || !parsed.success) {
    throw new AppError("bad_request", `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}.`);
  }
  return parsed.data;
}

export const me = new Hono<AppEnv>()
  .use("/me/*", threadCors.response)
  .options("/me/*", threadCors.preflight)
  .get(
    "/me/threads",
    describeRoute(
      operation({
        tag: "Threads",
        summary: "This subject's threads with this agent",
        auth: "launchToken",
        query: pageQuery,
        response: { status: 200, schema: listResponse(myThreadResponse) },
        errors: [400, 403, 404],
      }),
    ),
    async (c) => {
      // The token's own thread must still be live and its subject's: the same gate as every thread route.
      const claims = await launchAccess(c, launchBearer(c.req.header("Authorization")), {
        threadFromPath: false,
      });
      const query = parseWith(pageQuery, c.req.query(), "Query");
      const scope: ReadScope = {
        kind: "subject",
        tenantId: claims.tenantId,
        agentId: claims.agentId,
        subject: claims.sub,
      };
      const list = listName("me-threads", [claims.agentId, claims.sub]);
      const after =
        query.cursor === undefined
          ? undefined
          : positions.session.decode(await decodeCursor(c.env, claims.tenantId, list, query.cursor));
      const result = await listSessions(
        await projectionReadDb(c.env, claims.tenantId),
        scope,
        {},
        { limit: readLimit(query.limit), ...(after !== undefined ? { after } : {}) },
      );
      const items = result.items.map(myThreadView);
      if (result.next === undefined) return c.json({ items });
      const nextCursor = await encodeCursor(
        c.env,
        claims.tenantId,
        list,
        positions.session.encode(result.next),
      );
      return c.json({ items, nextCursor });
    },
  )
  .delete(
    "/me/threads",
    describeRoute(
      operation({
        tag: "Privacy",
        summary: 'Erase all of this subject\'s threads with this agent ("Delete my conversations")',
        description:
          "The launch token's subject, with the token's agent: every thread erased as `POST /v1/subject-erasures` " +
          "does, and a visitor's token revoked (later launches with it answer 401). 200 with the receipt, or 202 " +
          "with `remaining` when the call must be repeated to finish.",
        auth: "launchToken",
        response: { status: 200, schema: erasureResponse },
        extraResponses: { 202: { description: "Part way: repeat to continue.", schema: erasureResponse } },
        errors: [404, 409, 502],
      }),
    ),
    async (c) => {
      const claims = await launchAccess(c, launchBearer(c.req.header("Authorization")), {
        threadFromPath: false,
      });
      const outcome = await eraseOwnThreads(c.env, claims);
      const answer = erasureAnswer(outcome);
      return c.json(answer.body, answer.status);
    },
  );
