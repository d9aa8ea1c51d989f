// Tenant admin: per-version analytics from the projection's rollup (`GET /v1/analytics`, docs/api.md).
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import type { AppEnv } from "../http/context";
import { dayRange } from "../http/day-range";
import { parseWith } from "../http/json-body";
import { operation } from "../http/openapi";
import { tenantAuth } from "../http/tenant-auth";
import { type AnalyticsResponse, analyticsQuery, analyticsResponse } from "../shared/sessions-api";
import { analytics as readAnalytics } from "../storage/d1/analytics";
import { projectionReadDb } from "../storage/d1/shards";

/** As for usage: 30 days by default, at most 366. */
const DEFAULT_DAYS = 30;
const MAX_DAYS = 366;

export const analytics = new Hono<AppEnv>().use("*", tenantAuth).get(
  "/",
  describeRoute(
    operation({
      tag: "Analytics",
      summary: "Threads, turns, failures, tokens, first-delta percentiles and feedback by version or by day",
      auth: "tenantKey",
      query: analyticsQuery,
      response: { status: 200, schema: analyticsResponse },
      errors: [400],
    }),
  ),
  async (c) => {
    const query = parseWith(analyticsQuery, c.req.query(), "Query");
    const { from, to } = dayRange(query, { defaultDays: DEFAULT_DAYS, maxDays: MAX_DAYS });
    const groupBy = query.groupBy ?? "version";
    const tenantId = c.get("tenant").tenantId;
    const items = await readAnalytics(
      { shard: await projectionReadDb(c.env, tenantId), control: c.env.DB },
      tenantId,
      {
        from,
        to,
        groupBy,
        ...(query.agentId !== undefined ? { agentId: query.agentId } : {}),
      },
    );
    const body: AnalyticsResponse = { from, to, groupBy, agentId: query.agentId ?? null, items };
    return c.json(body);
  },
);
