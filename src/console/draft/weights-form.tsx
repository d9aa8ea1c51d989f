// The form for a new release: one row per version with a slider and a number, always holding what the API accepts
// (positive integers summing to 10,000: moving one weight rebalances the others in proportion).
import { useEffect, useRef, useState } from "preact/hooks";
import type { ReleaseResponse, VersionSummaryResponse } from "../../client/admin";
import { api, describeError } from "../api";
import { type GateFailure, GateRefusal, gateFailures } from "../evals/gate-refusal";
import { ErrorNote } from "../ui/page";
import { WriteButton } from "../ui/write";
import { adoptCss } from "./styles";
import { evenSplit, percent, rebalance, TOTAL } from "./weights";

export type Environment = "development" | "staging" | "production";

const CSS = `
.alloc{display:grid;grid-template-columns:minmax(120px,auto) 1fr minmax(90px,auto) auto;gap:8px 12px;align-items:center;margin-bottom:8px}
.alloc input[type=range]{width:100%;min-width:120px;accent-color:var(--accent)}
.alloc .pct{font-variant-numeric:tabular-nums;font-weight:600;min-width:5em;text-align:right}
.alloc input[type=number]{width:7em}
@media (max-width:640px){.alloc{grid-template-columns:1fr 1fr}.alloc input[type=range]{grid-column:1/-1}}
`;

export interface Row {
  version: number;
  weight: number;
}

/** "version 1 50 %, version 2 50 %". */
export const describeAllocations = (allocations: { version: number; weight: number }[]) =>
  allocations.map((a) => `version ${a.version} ${percent(a.weight)}`).join(", ");

/** What a key press on a weight slider moves it by: 1 % per arrow, 10 % per page, or to an end. */
function step(key: string, weight: number, max: number): number | null {
  switch (key) {
    case "ArrowUp":
    case "ArrowRight":
      return weight + 100;
    case "ArrowDown":
    case "ArrowLeft":
      return weight - 100;
    case "PageUp":
      return weight + 1000;
    case "PageDown":
      return weight - 1000;
    case "Home":
      return 1;
    case "End":
      return max;
    default:
      return null;
  }
}

export function WeightsForm(props: {
  environment: Environment;
  versions: VersionSummaryResponse[];
  initial: Row[];
  onCreated: (release: ReleaseResponse) => void;
  agentId: string;
}) {
  adoptCss("weights", CSS);
  const [rows, setRows] = useState<Row[]>(props.initial);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string>();
  const [gate, setGate] = useState<GateFailure[]>();
  // A new starting point only when its content changes: a parent re-render or a late load with the same allocations
  // must not undo what the person has picked.
  const initialKey = JSON.stringify(props.initial);
  const shownKey = useRef(initialKey);
  useEffect(() => {
    if (shownKey.current === initialKey) return;
    shownKey.current = initialKey;
    setRows(props.initial);
  }, [initialKey]);

  const used = new Set(rows.map((r) => r.version));
  const free = props.versions.filter((v) => !used.has(v.version));
  const weights = rows.map((r) => r.weight);
  const max = TOTAL - (rows.length - 1);
  const setWeight = (index: number, value: number) => {
    const next = rebalance(weights, index, value);
    setRows(rows.map((r, i) => ({ ...r, weight: next[i] ?? r.weight })));
  };
  const withEven = (list: { version: number }[]) => {
    const split = evenSplit(list.length);
    return list.map((r, i) => ({ version: r.version, weight: split[i] ?? 0 }));
  };
  const add = () => {
    const next = free[0];
    if (next) setRows(withEven([...rows, { version: next.version, weight: 0 }]));
  };
  const remove = (index: number) => setRows(withEven(rows.filter((_, i) => i !== index)));

  const create = async (force?: string) => {
    setPending(true);
    setError(undefined);
    setGate(undefined);
    try {
      const release = await api().releases.create(props.agentId, {
        environment: props.environment,
        allocations: rows.map((r) => ({ version: r.version, weight: r.weight })),
        ...(force !== undefined ? { force: true, reason: force } : {}),
      });
      props.onCreated(release);
    } catch (e) {
      const failures = gateFailures(e);
      if (failures) setGate(failures);
      else setError(describeError(e));
    } finally {
      setPending(false);
    }
  };
  const submit = (event: SubmitEvent) => {
    event.preventDefault();
    void create();
  };

  return (
    <form onSubmit={submit} aria-labelledby="new-release-title">
      <fieldset>
        <legend id="new-release-title">New release for {props.environment}</legend>
        <p class="hint">
          New threads are split by weight; a thread keeps the version it started on. Weights always add up to
          10,000 (100 %): moving one slider shares the rest among the others in proportion. Arrow keys move 1
          %, Page Up and Page Down 10 %.
        </p>
        {rows.map((row, i) => {
          const choices = [row.version, ...free.map((v) => v.version)].sort((a, b) => b - a);
          return (
            <div class="alloc" key={row.version}>
              <div>
                <label for={`alloc-version-${i}`}>Allocation {i + 1}</label>
                <select
                  id={`alloc-version-${i}`}
                  value={String(row.version)}
                  onChange={(e) => {
                    const version = Number(e.currentTarget.value);
                    setRows(rows.map((r, j) => (j === i ? { ...r, version } : r)));
                  }}
                >
                  {choices.map((v) => (
                    <option key={v} value={String(v)}>
                      Version {v}
                    </option>
                  ))}
                </select>
              </div>
              <input
                type="range"
                min={1}
                max={max}
                step={1}
                value={row.weight}
                disabled={rows.length === 1}
                aria-label={`Weight of version ${row.version}`}
                aria-valuetext={`${percent(row.weight)} (${row.weight} of ${TOTAL})`}
                onInput={(e) => setWeight(i, Number(e.currentTarget.value))}
                onKeyDown={(e) => {
                  const target = step(e.key, row.weight, max);
                  if (target === null) return;
                  e.preventDefault();
                  setWeight(i, target);
                }}
              />
              <div class="row">
                <span class="pct" aria-hidden="true">
                  {percent(row.weight)}
                </span>
                <label class="sr-only" for={`alloc-weight-${i}`}>
                  Weight of version {row.version} out of {TOTAL}
                </label>
                <input
                  id={`alloc-weight-${i}`}
                  type="number"
                  min={1}
                  max={max}
                  step={1}
                  value={row.weight}
                  disabled={rows.length === 1}
                  onChange={(e) => {
                    const n = Number(e.currentTarget.value);
                    setWeight(i, Number.isFinite(n) ? n : row.weight);
                  }}
                />
              </div>
              <button type="button" disabled={rows.length === 1} onClick={() => remove(i)}>
                Remove version {row.version}
              </button>
            </div>
          );
        })}
        <p class="muted" aria-live="polite">
          Total {weights.reduce((a, b) => a + b, 0).toLocaleString()} of {TOTAL.toLocaleString()}:{" "}
          {describeAllocations(rows)}.
        </p>
        <div class="form-actions">
          <button type="button" disabled={free.length === 0} onClick={add}>
            Add a version
          </button>
          <button type="button" disabled={rows.length < 2} onClick={() => setRows(withEven(rows))}>
            Split evenly
          </button>
          <WriteButton type="submit" class="primary" disabled={pending || rows.length === 0}>
            {pending ? "Creating…" : `Create release for ${props.environment}`}
          </WriteButton>
        </div>
        {error ? <ErrorNote>{error}</ErrorNote> : null}
        {gate ? (
          <GateRefusal
            agentId={props.agentId}
            failures={gate}
            pending={pending}
            onForce={(reason) => void create(reason)}
          />
        ) : null}
      </fieldset>
    </form>
  );
}
