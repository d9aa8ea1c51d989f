// Per-version analytics from the D1 rollup (docs/api.md): threads, turns, failures, tokens, feedback and first-delta
// percentiles of one tenant, by agent version or by day.
//
// The rollup tables (migrations/0010) are kept by triggers on the projected tables; this file only reads them and
// turns the first-delta histogram into percentiles. A 30-day query reads one rollup row per (day, agent, version)
// and one per non-empty histogram bucket of each, however many messages the tenant has.
import { z } from "zod";

/** Buckets per doubling of the first-delta time: bucket k ≥ 1 holds [2^((k-1)/4), 2^(k/4)) ms. */
const BUCKETS_PER_DOUBLING = 4;
/** The last bucket holds everything from 2^(95/4) ms (about 3.8 hours) up. */
export const FIRST_DELTA_MAX_BUCKET = 96;

/** The histogram bucket of a first-delta time: 0 under 1 ms, then four per doubling. */
export function firstDeltaBucket(ms: number): number {
  if (!(ms >= 1)) return 0;
  return Math.min(FIRST_DELTA_MAX_BUCKET, Math.floor(BUCKETS_PER_DOUBLING * Math.log2(ms)) + 1);
}

/**
 * The value reported for a bucket: its geometric middle, rounded to a millisecond. Any time in the bucket is within
 * 2^(1/8) − 1 ≈ 9.05% of it (plus the rounding), which is the percentiles' error.
 */
export function bucketValue(bucket: number): number {
  if (bucket <= 0) return 0;
  return Math.round(2 ** ((bucket - 0.5) / BUCKETS_PER_DOUBLING));
}

/** The p-quantile (0 < p ≤ 1) of a histogram, as its bucket's value; null when it is empty. */
export function histogramPercentile(counts: ReadonlyMap<number, number>, p: number): number | null {
  const buckets = [...counts.entries()].filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const [bucket, n] of buckets) {
    seen += n;
    if (seen >= rank) return bucketValue(bucket);
  }
  return bucketValue(buckets[buckets.length - 1]?.[0] ?? 0);
}

export type AnalyticsGroup = "version" | "day";

export interface AnalyticsItem {
  /** The version number as text (or `unknown`), or the UTC day. */
  key: string;
  agentId?: string;
  version?: number | null;
  threads: number;
  turns: number;
  failedTurns: number;
  inputTokens: number;
  outputTokens: number;
  firstDeltaMsP50: number | null;
  firstDeltaMsP95: number | null;
  feedbackUp: number;
  feedbackDown: number;
}

const SUMS = `SUM(d.threads) AS threads, SUM(d.turns) AS turns, SUM(d.failed_turns) AS failed_turns,
  SUM(d.input_tokens) AS input_tokens, SUM(d.output_tokens) AS output_tokens, SUM(d.feedback_up) AS feedback_up,
  SUM(d.feedback_down) AS feedback_down`;

const RANGE = "d.tenant_id = ? AND d.day >= ? AND d.day <= ?";

export const ANALYTICS_SQL = {
  totals: {
    version: {
      all: `SELECT d.agent_id AS agent_id, d.version_id AS group_key, NULL AS version, ${SUMS}
        FROM agent_analytics_daily d WHERE ${RANGE} GROUP BY d.agent_id, d.version_id`,
      agent: `SELECT d.agent_id AS agent_id, d.version_id AS group_key, NULL AS version, ${SUMS}
        FROM agent_analytics_daily d WHERE ${RANGE} AND d.agent_id = ? GROUP BY d.agent_id, d.version_id`,
    },
    day: {
      all: `SELECT '' AS agent_id, d.day AS group_key, NULL AS version, ${SUMS} FROM agent_analytics_daily d
        WHERE ${RANGE} GROUP BY d.day`,
      agent: `SELECT '' AS agent_id, d.day AS group_key, NULL AS version, ${SUMS} FROM agent_analytics_daily d
        WHERE ${RANGE} AND d.agent_id = ? GROUP BY d.day`,
    },
  },
  histogram: {
    version: {
      all: `SELECT d.agent_id AS agent_id, d.version_id AS group_key, d.bucket AS bucket, SUM(d.runs) AS runs
        FROM agent_analytics_first_delta d WHERE ${RANGE} GROUP BY d.agent_id, d.version_id, d.bucket`,
      agent: `SELECT d.agent_id AS agent_id, d.version_id AS group_key, d.bucket AS bucket, SUM(d.runs) AS runs
        FROM agent_analytics_first_delta d WHERE ${RANGE} AND d.agent_id = ?
        GROUP BY d.agent_id, d.version_id, d.bucket`,
    },
    day: {
      all: `SELECT '' AS agent_id, d.day AS group_key, d.bucket AS bucket, SUM(d.runs) AS runs
        FROM agent_analytics_first_delta d WHERE ${RANGE} GROUP BY d.day, d.bucket`,
      agent: `SELECT '' AS agent_id, d.day AS group_key, d.bucket AS bucket, SUM(d.runs) AS runs
        FROM agent_analytics_first_delta d WHERE ${RANGE} AND d.agent_id = ? GROUP BY d.day, d.bucket`,
    },
  },
  /** Version numbers live with the control plane (`DB`), the rollup in the tenant's shard: looked up by id after. */
  versions: `SELECT id, version FROM agent_versions WHERE tenant_id = ? AND id IN (SELECT value FROM json_each(?))`,
} as const;

/** Every statement this file sends, for the tenancy test. */
export function analyticsSql(): string[] {
  const out: string[] = [];
  for (const table of [ANALYTICS_SQL.totals, ANALYTICS_SQL.histogram]) {
    for (const group of [table.version, table.day]) out.push(group.all, group.agent);
  }
  out.push(ANALYTICS_SQL.versions);
  return out;
}

const totalsRow = z.object({
  agent_id: z.string(),
  group_key: z.string(),
  version: z.number().int().nullable(),
  threads: z.number(),
  turns: z.number(),
  failed_turns: z.number(),
  input_tokens: z.number(),
  output_tokens: z.number(),
  feedback_up: z.number(),
  feedback_down: z.number(),
});
const versionRow = z.object({ id: z.string(), version: z.number().int() });
const histogramRow = z.object({
  agent_id: z.string(),
  group_key: z.string(),
  bucket: z.number().int(),
  runs: z.number(),
});

/** Analytics of one tenant over UTC days `from`..`to` (inclusive); only groups with activity. */
export async function analytics(
  db: { shard: D1Database; control: D1Database },
  tenantId: string,
  query: { from: string; to: string; agentId?: string; groupBy: AnalyticsGroup },
): Promise<AnalyticsItem[]> {
  const which = query.agentId !== undefined ? "agent" : "all";
  const bindings = [tenantId, query.from, query.to, ...(query.agentId !== undefined ? [query.agentId] : [])];
  const shard = db.shard;
  const [totals, histogram] = await shard.batch([
    shard.prepare(ANALYTICS_SQL.totals[query.groupBy][which]).bind(...bindings),
    shard.prepare(ANALYTICS_SQL.histogram[query.groupBy][which]).bind(...bindings),
  ]);
  const versionNumbers = new Map<string, number>();
  if (query.groupBy === "version") {
    const ids = [...new Set((totals?.results ?? []).map((raw) => totalsRow.parse(raw).group_key))];
    if (ids.length > 0) {
      const { results } = await db.control
        .prepare(ANALYTICS_SQL.versions)
        .bind(tenantId, JSON.stringify(ids))
        .all();
      for (const r of results) {
        const v = versionRow.parse(r);
        versionNumbers.set(v.id, v.version);
      }
    }
  }
  const groupId = (agentId: string, key: string) => `${agentId}\u0000${key}`;
  const buckets = new Map<string, Map<number, number>>();
  for (const raw of histogram?.results ?? []) {
    const r = histogramRow.parse(raw);
    const id = groupId(r.agent_id, r.group_key);
    const counts = buckets.get(id) ?? new Map<number, number>();
    counts.set(r.bucket, (counts.get(r.bucket) ?? 0) + r.runs);
    buckets.set(id, counts);
  }
  const items = (totals?.results ?? []).map((raw): AnalyticsItem => {
    const parsed = totalsRow.parse(raw);
    const r = { ...parsed, version: versionNumbers.get(parsed.group_key) ?? null };
    const counts = buckets.get(groupId(r.agent_id, r.group_key)) ?? new Map<number, number>();
    const common = {
      threads: r.threads,
      turns: r.turns,
      failedTurns: r.failed_turns,
      inputTokens: r.input_tokens,
      outputTokens: r.output_tokens,
      firstDeltaMsP50: histogramPercentile(counts, 0.5),
      firstDeltaMsP95: histogramPercentile(counts, 0.95),
      feedbackUp: r.feedback_up,
      feedbackDown: r.feedback_down,
    };
    return query.groupBy === "day"
      ? { key: r.group_key, ...common }
      : {
          key: r.version === null ? "unknown" : String(r.version),
          agentId: r.agent_id,
          version: r.version,
          ...common,
        };
  });
  return items.sort((a, b) =>
    query.groupBy === "day"
      ? a.key.localeCompare(b.key)
      : (a.agentId ?? "").localeCompare(b.agentId ?? "") || (a.version ?? 0) - (b.version ?? 0),
  );
}
