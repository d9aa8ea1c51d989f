// Tenant admin: tokens in/out and runs per day (`GET /v1/usage?from&to&agentId`), from the analytics rollup,
// which erasure and retention never lower (usage is billing data, docs/privacy.md).

import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { errors } from "../errors";
import type { AppEnv } from "../http/context";
import { parseWith } from "../http/json-body";
import { operation } from "../http/openapi";
import { tenantAuth } from "../http/tenant-auth";
import {
  USAGE_DEFAULT_DAYS,
  USAGE_MAX_DAYS,
  type UsageResponse,
  usageQuery,
  usageResponse,
} from "../shared/sessions-api";
import { usageByDay } from "../storage/d1/sessions-repository";
import { projectionReadDb } from "../storage/d1/shards";

const DAY_MS = 86_400_000;

/** Epoch ms of a `YYYY-MM-DD` that names a real calendar day, else null (2026-02-31 is not one). */
function dayStart(day: string): number | null {
  const ms = Date.parse(`${day}T00:00:00.000Z`);
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== day ? null : ms;
}

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export const usage = new Hono<AppEnv>().use("*", tenantAuth).get(
  "/",
  describeRoute(
    operation({
      tag: "Usage",
      summary: "Tokens in/out and runs per day",
      auth: "tenantKey",
      query: usageQuery,
      response: { status: 200, schema: usageResponse },
      errors: [400],
    }),
  ),
  async (c) => {
    const query = parseWith(usageQuery, c.req.query(), "Query");
    const to = query.to ?? dayOf(Date.now());
    const toMs = dayStart(to);
    if (toMs === null) throw errors.badRequest("to must be a calendar date (YYYY-MM-DD).");
    const from = query.from ?? dayOf(toMs - (USAGE_DEFAULT_DAYS - 1) * DAY_MS);
    const fromMs = dayStart(from);
    if (fromMs === null) throw errors.badRequest("from must be a calendar date (YYYY-MM-DD).");
    if (fromMs > toMs) throw errors.badRequest("from must not be after to.");
    if ((toMs - fromMs) / DAY_MS + 1 > USAGE_MAX_DAYS) {
      throw errors.badRequest(`A usage report covers at most ${USAGE_MAX_DAYS} days.`);
    }
    const items = await usageByDay(
      await projectionReadDb(c.env, c.get("tenant").tenantId),
      c.get("tenant").tenantId,
      {
        from,
        to,
        ...(query.agentId !== undefined ? { agentId: query.agentId } : {}),
      },
    );
    const totals = items.reduce(
      (sum, d) => ({
        runs: sum.runs + d.runs,
        inputTokens: sum.inputTokens + d.inputTokens,
        outputTokens: sum.outputTokens + d.outputTokens,
      }),
      { runs: 0, inputTokens: 0, outputTokens: 0 },
    );
    const body: UsageResponse = { from, to, agentId: query.agentId ?? null, items, totals };
    return c.json(body);
  },
);
