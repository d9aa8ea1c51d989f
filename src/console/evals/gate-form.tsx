// The agent's release gate: which suites a version must pass, and how well, before a release may raise its weight
// (PATCH /v1/agents/:id {releaseGate}, docs/evals.md#the-release-gate).
import { useEffect, useState } from "preact/hooks";
import type { SuiteResponse } from "../../client/evals";
import { api, canWrite, describeError } from "../api";
import { useLoad } from "../ui/hooks";
import { ErrorNote, StatusNote } from "../ui/page";
import { WriteButton } from "../ui/write";

export function GateForm(props: { agentId: string; suites: SuiteResponse[] }) {
  const agent = useLoad(() => api().agents.get(props.agentId), [props.agentId]);
  const gate = (
    agent.data as { releaseGate?: { suiteIds: string[]; minPassRate: number } | null } | undefined
  )?.releaseGate;
  const [ids, setIds] = useState<string[]>([]);
  const [percent, setPercent] = useState("100");
  const [pending, setPending] = useState(false);
  const [status, setStatus] = useState<string>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    setIds(gate?.suiteIds ?? []);
    setPercent(String(Math.round((gate?.minPassRate ?? 1) * 100)));
  }, [agent.data]);

  const save = async (releaseGate: { suiteIds: string[]; minPassRate: number } | null) => {
    setPending(true);
    setError(undefined);
    setStatus(undefined);
    try {
      await api().agents.update(props.agentId, { releaseGate } as never);
      setStatus(
        releaseGate
          ? `Gate saved: ${releaseGate.suiteIds.length} ${releaseGate.suiteIds.length === 1 ? "suite" : "suites"} at ${Math.round(releaseGate.minPassRate * 100)} %.`
          : "Gate removed.",
      );
      agent.reload();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setPending(false);
    }
  };
  const rate = Number(percent);
  const valid = ids.length > 0 && Number.isFinite(rate) && rate >= 0 && rate <= 100;
  return (
    <form
      aria-labelledby="gate-form-title"
      onSubmit={(event) => {
        event.preventDefault();
        if (valid) void save({ suiteIds: ids, minPassRate: rate / 100 });
      }}
    >
      <fieldset>
        <legend id="gate-form-title">Release gate</legend>
        <p class="hint">
          {gate
            ? `On: a release that raises a version's weight needs a completed run of each suite below on that version with at least ${Math.round(gate.minPassRate * 100)} % passed.`
            : "Off: releases are not checked against any suite."}
        </p>
        {props.suites.length === 0 ? <p>Create a suite first.</p> : null}
        {props.suites.map((s) => (
          <div class="row" key={s.id}>
            <input
              type="checkbox"
              id={`gate-suite-${s.id}`}
              checked={ids.includes(s.id)}
              disabled={!canWrite()}
              onChange={(e) =>
                setIds(e.currentTarget.checked ? [...ids, s.id] : ids.filter((id) => id !== s.id))
              }
            />
            <label for={`gate-suite-${s.id}`}>Gate on {s.name}</label>
          </div>
        ))}
        <div class="field">
          <label for="gate-rate">Minimum pass rate (%)</label>
          <input
            id="gate-rate"
            type="number"
            min={0}
            max={100}
            step={1}
            value={percent}
            onInput={(e) => setPercent(e.currentTarget.value)}
          />
        </div>
        <div class="form-actions">
          <WriteButton type="submit" class="primary" disabled={pending || !valid}>
            Save gate
          </WriteButton>
          {gate ? (
            <WriteButton disabled={pending} onClick={() => void save(null)}>
              Remove gate
            </WriteButton>
          ) : null}
        </div>
        {status ? <StatusNote>{status}</StatusNote> : null}
        {error ? <ErrorNote>{error}</ErrorNote> : null}
      </fieldset>
    </form>
  );
}
