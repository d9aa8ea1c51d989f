// Analytics (docs/api.md): turns, failures, tokens, first-delta latency and feedback, by version or by day.
import type { z } from "zod";
import type { AnalyticsResponse, analyticsQuery } from "../shared/sessions-api";
import type { Transport } from "./http";

export type { AnalyticsResponse } from "../shared/sessions-api";
export type AnalyticsQuery = z.input<typeof analyticsQuery>;
export type AnalyticsItem = AnalyticsResponse["items"][number];

/** `GET /v1/analytics`: `from`/`to` are inclusive UTC days (default the last 30); `groupBy` defaults to `version`. */
export function readAnalytics(t: Transport, query: AnalyticsQuery = {}): Promise<AnalyticsResponse> {
  return t.json("GET", "/v1/analytics", { query: { ...query } });
}
