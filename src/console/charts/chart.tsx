// Hand-drawn SVG charts (docs/decisions.md, "Console charts"): bars (grouped or stacked) or lines over a row of
// labels (days or versions). Each is a <figure> whose SVG is an image with a title and a summary, and whose data is
// also a table, so nothing is only visual.
import { useId } from "preact/hooks";
import { formatCount } from "../kit/format";
import { Table } from "../ui/table";
import { maxOf, niceTicks } from "./scale";

export interface Series {
  name: string;
  /** One per label; null: no value (a gap in a line, nothing in a bar). */
  values: (number | null)[];
}

export interface ChartProps {
  title: string;
  /** One or two sentences a screen reader hears instead of the picture: the range, totals, the peak. */
  summary: string;
  labels: string[];
  series: Series[];
  kind: "bars" | "stacked" | "lines";
  /** How a value reads in ticks, tooltips and the table (default: a count). */
  format?: (value: number) => string;
  /** The labels' column heading in the table ("Day", "Version"). */
  labelHeading: string;
}

const W = 640;
const H = 220;
const PAD = { top: 12, right: 12, bottom: 34, left: 56 };
const PLOT_W = W - PAD.left - PAD.right;
const PLOT_H = H - PAD.top - PAD.bottom;

const MAX_BAR_W = 36;
/** At most this many labels are written under the axis; the rest are in tooltips and the table. */
const MAX_AXIS_LABELS = 8;

function shortLabel(label: string): string {
  // Days read as "12-02" under the axis; the table has the full day.
  return /^\d{4}-\d{2}-\d{2}$/.test(label) ? label.slice(5) : label;
}

export function Chart(props: ChartProps) {
  const id = useId();
  const format = props.format ?? formatCount;
  const { labels, series } = props;
  const { top, ticks } = niceTicks(
    maxOf(
      series.map((s) => s.values),
      props.kind === "stacked",
    ),
  );
  const y = (v: number) => PAD.top + PLOT_H - (v / top) * PLOT_H;
  const band = labels.length > 0 ? PLOT_W / labels.length : PLOT_W;
  const x = (i: number) => PAD.left + i * band;
  const every = Math.max(1, Math.ceil(labels.length / MAX_AXIS_LABELS));

  const marks =
    props.kind === "lines"
      ? series.map((s, si) => {
          // A line per run of consecutive values; a null breaks it.
          const runs: string[][] = [[]];
          s.values.forEach((v, i) => {
            if (v === null) runs.push([]);
            else runs.at(-1)!.push(`${x(i) + band / 2},${y(v)}`);
          });
          return (
            <g key={s.name} class={`series series-${si + 1}`}>
              {runs
                .filter((r) => r.length > 1)
                .map((r) => (
                  <polyline key={r[0]} points={r.join(" ")} fill="none" />
                ))}
              {s.values.map((v, i) =>
                v === null ? null : (
                  <circle key={i} cx={x(i) + band / 2} cy={y(v)} r={3}>
                    <title>{`${labels[i]}: ${s.name} ${format(v)}`}</title>
                  </circle>
                ),
              )}
            </g>
          );
        })
      : labels.map((label, i) => {
          // Bars stay slim when there are few labels (versions): at most MAX_BAR_W each, centred in their band.
          const groups = props.kind === "stacked" ? 1 : Math.max(1, series.length);
          const inner = Math.min(band * 0.8, groups * MAX_BAR_W);
          const barW = inner / groups;
          let base = 0;
          return (
            <g key={label}>
              {series.map((s, si) => {
                const v = s.values[i] ?? null;
                if (v === null || v <= 0) return null;
                const left = x(i) + (band - inner) / 2 + (props.kind === "stacked" ? 0 : si * barW);
                const bottom = props.kind === "stacked" ? base : 0;
                if (props.kind === "stacked") base += v;
                return (
                  <rect
                    key={s.name}
                    class={`series series-${si + 1}`}
                    x={left}
                    y={y(bottom + v)}
                    width={Math.max(1, barW - 1)}
                    height={Math.max(1, y(bottom) - y(bottom + v))}
                  >
                    <title>{`${label}: ${s.name} ${format(v)}`}</title>
                  </rect>
                );
              })}
            </g>
          );
        });

  return (
    <figure class="chart" aria-labelledby={`${id}-cap`}>
      <figcaption id={`${id}-cap`}>{props.title}</figcaption>
      <ul class="legend" aria-label={`${props.title}: series`}>
        {series.map((s, si) => (
          <li key={s.name}>
            <span
              class={`swatch series-${si + 1}${props.kind === "lines" ? " line" : ""}`}
              aria-hidden="true"
            />
            {s.name}
          </li>
        ))}
      </ul>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        preserveAspectRatio="xMidYMid meet"
      >
        <title id={`${id}-title`}>{props.title}</title>
        <desc id={`${id}-desc`}>{props.summary}</desc>
        <g class="axis">
          {ticks.map((t) => (
            <g key={t}>
              <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} class="grid" />
              <text x={PAD.left - 6} y={y(t) + 4} text-anchor="end">
                {format(t)}
              </text>
            </g>
          ))}
          {labels.map((label, i) =>
            i % every === 0 ? (
              <text key={label} x={x(i) + band / 2} y={H - PAD.bottom + 16} text-anchor="middle">
                {shortLabel(label)}
              </text>
            ) : null,
          )}
          <line x1={PAD.left} x2={W - PAD.right} y1={y(0)} y2={y(0)} class="baseline" />
        </g>
        {marks}
      </svg>
      <details class="chart-data">
        <summary>
          Data table<span class="sr-only">: {props.title}</span>
        </summary>
        <Table label={`${props.title}: data`} head={[props.labelHeading, ...series.map((s) => s.name)]}>
          {labels.map((label, i) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              {series.map((s) => {
                const v = s.values[i] ?? null;
                return <td key={s.name}>{v === null ? "—" : format(v)}</td>;
              })}
            </tr>
          ))}
        </Table>
      </details>
    </figure>
  );
}
