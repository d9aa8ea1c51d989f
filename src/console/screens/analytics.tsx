// Usage and analytics (/console/analytics): turns, failures, tokens and first-delta latency by day, and the versions
// of an agent's release side by side (docs/api.md). Preview threads are never counted (the API leaves them out).
import { useEffect, useState } from "preact/hooks";
import type { ReleaseResponse, UsageResponse } from "../../client/admin";
import type { AnalyticsItem, AnalyticsResponse } from "../../client/analytics";
import { api, describeError } from "../api";
import { Chart } from "../charts/chart";
import { daysBetween, perDay } from "../charts/scale";
import { formatCount, formatMs, utcDay } from "../kit/format";
import type { ScreenProps } from "../screens";
import { useLoad } from "../ui/hooks";
import { ErrorNote, Loading, Page } from "../ui/page";
import { Table } from "../ui/table";

interface Range {
  agentId: string;
  from: string;
  to: string;
}

interface Data {
  days: AnalyticsResponse;
  usage: UsageResponse;
  /** With an agent chosen: its versions, and its releases (to compare a release's versions). */
  versions?: AnalyticsItem[];
  releases?: ReleaseResponse[];
}

const DEFAULT_DAYS = 30;

async function load(range: Range): Promise<Data> {
  const client = api();
  const agent = range.agentId ? { agentId: range.agentId } : {};
  const [days, usage, versions, releases] = await Promise.all([
    client.analytics({ ...agent, from: range.from, to: range.to, groupBy: "day" }),
    client.usage({ ...agent, from: range.from, to: range.to }),
    range.agentId
      ? client.analytics({ ...agent, from: range.from, to: range.to, groupBy: "version" })
      : undefined,
    range.agentId ? client.releases.list(range.agentId, { limit: 50 }) : undefined,
  ]);
  return {
    days,
    usage,
    ...(versions ? { versions: versions.items } : {}),
    ...(releases ? { releases: releases.items } : {}),
  };
}

const sum = (values: (number | null)[]) => values.reduce<number>((a, b) => a + (b ?? 0), 0);
const percent = (part: number, whole: number) =>
  whole === 0 ? "—" : `${((part / whole) * 100).toFixed(1)}%`;

/** "Peak 12 on 2026-12-02" for a summary, or nothing when every value is 0. */
function peak(labels: string[], values: (number | null)[], format: (n: number) => string): string {
  let best = -1;
  values.forEach((v, i) => {
    if (v !== null && (best < 0 || v > (values[best] ?? 0))) best = i;
  });
  return best >= 0 && (values[best] ?? 0) > 0 ? ` Peak ${format(values[best]!)} on ${labels[best]}.` : "";
}

function Tiles(props: { data: Data }) {
  const items = props.data.days.items;
  const turns = sum(items.map((i) => i.turns));
  const failed = sum(items.map((i) => i.failedTurns));
  const up = sum(items.map((i) => i.feedbackUp));
  const down = sum(items.map((i) => i.feedbackDown));
  const { totals } = props.data.usage;
  const tiles: [string, string][] = [
    ["Conversations started", formatCount(sum(items.map((i) => i.threads)))],
    ["Turns", formatCount(turns)],
    ["Failed turns", `${formatCount(failed)} (${percent(failed, turns)})`],
    ["Tokens in", formatCount(totals.inputTokens)],
    ["Tokens out", formatCount(totals.outputTokens)],
    ["Feedback", `${formatCount(up)} helpful · ${formatCount(down)} not`],
  ];
  return (
    <dl class="tiles">
      {tiles.map(([name, value]) => (
        <div class="tile" key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function DayCharts(props: { data: Data }) {
  const { days: analytics, usage } = props.data;
  const days = daysBetween(analytics.from, analytics.to);
  const dayOf = (i: { key: string }) => i.key;
  const turns = perDay(days, analytics.items, dayOf, (i) => i.turns);
  const failed = perDay(days, analytics.items, dayOf, (i) => i.failedTurns);
  const tokensIn = perDay(
    days,
    usage.items,
    (i) => i.day,
    (i) => i.inputTokens,
  );
  const tokensOut = perDay(
    days,
    usage.items,
    (i) => i.day,
    (i) => i.outputTokens,
  );
  const p50 = perDay(days, analytics.items, dayOf, (i) => i.firstDeltaMsP50, null);
  const p95 = perDay(days, analytics.items, dayOf, (i) => i.firstDeltaMsP95, null);
  const range = `from ${analytics.from} to ${analytics.to}`;
  const latencyDays = p50.filter((v) => v !== null).length;
  return (
    <div class="charts">
      <Chart
        title="Turns and failures per day"
        summary={`${formatCount(sum(turns))} turns ${range}, ${formatCount(sum(failed))} failed.${peak(days, turns, formatCount)}`}
        labels={days}
        series={[
          { name: "Turns", values: turns },
          { name: "Failed", values: failed },
        ]}
        kind="bars"
        labelHeading="Day (UTC)"
      />
      <Chart
        title="Tokens per day"
        summary={`${formatCount(sum(tokensIn))} tokens in and ${formatCount(sum(tokensOut))} out ${range}.${peak(
          days,
          tokensIn.map((v, i) => (v ?? 0) + (tokensOut[i] ?? 0)),
          formatCount,
        )}`}
        labels={days}
        series={[
          { name: "Input tokens", values: tokensIn },
          { name: "Output tokens", values: tokensOut },
        ]}
        kind="stacked"
        labelHeading="Day (UTC)"
      />
      <Chart
        title="Time to first delta per day"
        summary={
          latencyDays === 0
            ? `No turn streamed ${range}.`
            : `Median and 95th percentile of the time from a turn's acceptance to its first streamed text, on ${latencyDays} days ${range}.${peak(days, p95, formatMs).replace("Peak", "Slowest 95th percentile")}`
        }
        labels={days}
        series={[
          { name: "Median (p50)", values: p50 },
          { name: "95th percentile", values: p95 },
        ]}
        kind="lines"
        format={formatMs}
        labelHeading="Day (UTC)"
      />
    </div>
  );
}

function VersionComparison(props: { versions: AnalyticsItem[]; releases: ReleaseResponse[] }) {
  const ordered = [...props.releases].sort((a, b) => Number(b.active) - Number(a.active));
  const [releaseId, setReleaseId] = useState(ordered[0]?.id ?? "");
  useEffect(() => setReleaseId(ordered[0]?.id ?? ""), [props.releases]);
  const release = ordered.find((r) => r.id === releaseId);
  const weights = new Map(release?.allocations.map((a) => [String(a.version), a.weight]) ?? []);
  const rows = release ? props.versions.filter((v) => weights.has(v.key)) : props.versions;
  // Versions of the release with no activity yet still get a row, with zeros.
  const empty = (key: string): AnalyticsItem => ({
    key,
    threads: 0,
    turns: 0,
    failedTurns: 0,
    inputTokens: 0,
    outputTokens: 0,
    firstDeltaMsP50: null,
    firstDeltaMsP95: null,
    feedbackUp: 0,
    feedbackDown: 0,
  });
  const all = release
    ? release.allocations.map(
        (a) => rows.find((r) => r.key === String(a.version)) ?? empty(String(a.version)),
      )
    : rows;
  const labels = all.map((v) => (v.key === "unknown" ? "unknown" : `v${v.key}`));
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">By version</h2>
      {ordered.length > 0 ? (
        <div class="field inline-field">
          <label for="release">Release</label>
          <select id="release" value={releaseId} onChange={(e) => setReleaseId(e.currentTarget.value)}>
            {ordered.map((r) => (
              <option key={r.id} value={r.id}>
                {r.environment}: {r.allocations.map((a) => `v${a.version} ${a.weight / 100}%`).join(", ")}
                {r.active ? " (active)" : ""}
              </option>
            ))}
            <option value="">Every version</option>
          </select>
        </div>
      ) : null}
      {all.length === 0 ? (
        <p class="muted">No activity for this agent in the range.</p>
      ) : (
        <>
          <Table
            label="Versions compared"
            head={[
              "Version",
              ...(release ? ["Weight"] : []),
              "Conversations",
              "Turns",
              "Failed",
              "First delta p50",
              "p95",
              "Tokens per turn (in / out)",
              "Helpful",
            ]}
          >
            {all.map((v, i) => (
              <tr key={v.key}>
                <th scope="row">{labels[i]}</th>
                {release ? <td>{((weights.get(v.key) ?? 0) / 100).toFixed(2)}%</td> : null}
                <td>{formatCount(v.threads)}</td>
                <td>{formatCount(v.turns)}</td>
                <td>
                  {formatCount(v.failedTurns)} ({percent(v.failedTurns, v.turns)})
                </td>
                <td>{formatMs(v.firstDeltaMsP50)}</td>
                <td>{formatMs(v.firstDeltaMsP95)}</td>
                <td>
                  {v.turns === 0
                    ? "—"
                    : `${formatCount(Math.round(v.inputTokens / v.turns))} / ${formatCount(Math.round(v.outputTokens / v.turns))}`}
                </td>
                <td>
                  {percent(v.feedbackUp, v.feedbackUp + v.feedbackDown)}{" "}
                  <span class="muted">
                    ({v.feedbackUp} up, {v.feedbackDown} down)
                  </span>
                </td>
              </tr>
            ))}
          </Table>
          <div class="charts">
            <Chart
              title="Turns by version"
              summary={all
                .map((v, i) => `${labels[i]}: ${v.turns} turns, ${v.failedTurns} failed`)
                .join("; ")}
              labels={labels}
              series={[
                { name: "Turns", values: all.map((v) => v.turns) },
                { name: "Failed", values: all.map((v) => v.failedTurns) },
              ]}
              kind="bars"
              labelHeading="Version"
            />
            <Chart
              title="Time to first delta by version"
              summary={all
                .map(
                  (v, i) =>
                    `${labels[i]}: median ${formatMs(v.firstDeltaMsP50)}, p95 ${formatMs(v.firstDeltaMsP95)}`,
                )
                .join("; ")}
              labels={labels}
              series={[
                { name: "Median (p50)", values: all.map((v) => v.firstDeltaMsP50) },
                { name: "95th percentile", values: all.map((v) => v.firstDeltaMsP95) },
              ]}
              kind="bars"
              format={formatMs}
              labelHeading="Version"
            />
          </div>
        </>
      )}
    </section>
  );
}

export default function AnalyticsScreen(_props: ScreenProps) {
  const [range, setRange] = useState<Range>(() => ({
    agentId: new URLSearchParams(location.search).get("agentId") ?? "",
    from: utcDay(-(DEFAULT_DAYS - 1)),
    to: utcDay(0),
  }));
  const agents = useLoad(async () => (await api().agents.list({ limit: 200 })).items, []);
  const [data, setData] = useState<{ value?: Data; error?: string; loading: boolean }>({ loading: true });

  useEffect(() => {
    let live = true;
    setData((d) => ({ ...d, loading: true }));
    load(range).then(
      (value) => live && setData({ value, loading: false }),
      (error: unknown) => live && setData({ error: describeError(error), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [range]);

  return (
    <Page title="Usage and analytics">
      <form
        class="filters card"
        aria-label="Range"
        onSubmit={(event) => {
          event.preventDefault();
          const form = new FormData(event.currentTarget as HTMLFormElement);
          setRange({
            agentId: String(form.get("agentId") ?? ""),
            from: String(form.get("from") ?? range.from),
            to: String(form.get("to") ?? range.to),
          });
        }}
      >
        <div class="field">
          <label for="a-agent">Agent</label>
          <select id="a-agent" name="agentId" defaultValue={range.agentId}>
            <option value="">All agents</option>
            {(agents.data ?? []).map((a) => (
              <option key={a.id} value={a.id} selected={a.id === range.agentId}>
                {a.name} ({a.slug})
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="a-from">From (UTC day)</label>
          <input id="a-from" name="from" type="date" required defaultValue={range.from} max={utcDay(0)} />
        </div>
        <div class="field">
          <label for="a-to">To (UTC day)</label>
          <input id="a-to" name="to" type="date" required defaultValue={range.to} />
        </div>
        <div class="filter-actions">
          <button class="primary" type="submit">
            Show
          </button>
        </div>
      </form>
      {agents.error ? <ErrorNote>Could not list the agents: {agents.error}</ErrorNote> : null}
      {data.error ? <ErrorNote>{data.error}</ErrorNote> : null}
      {data.loading && !data.value ? <Loading /> : null}
      {data.value ? (
        <div aria-busy={data.loading}>
          <Tiles data={data.value} />
          <DayCharts data={data.value} />
          {data.value.versions ? (
            <VersionComparison versions={data.value.versions} releases={data.value.releases ?? []} />
          ) : (
            <p class="muted">Choose an agent to compare its versions.</p>
          )}
        </div>
      ) : null}
    </Page>
  );
}
