// A release refused by the agent's eval gate (409 `eval_gate`, docs/evals.md#the-release-gate): what failed, per
// version and suite, and a way past it that needs a written reason (recorded on the release).
import { useState } from "preact/hooks";
import { AgentThreadsError } from "../../client/http";
import { href } from "../router";
import { WriteButton } from "../ui/write";

export interface GateFailure {
  version: number;
  suiteId: string;
  reason: "suite_missing" | "no_completed_run" | "below_pass_rate";
  passRate?: number;
  minPassRate: number;
  failingCases?: string[];
}

/** The gate's failures when `error` is its refusal, else undefined. */
export function gateFailures(error: unknown): GateFailure[] | undefined {
  if (!(error instanceof AgentThreadsError) || error.reason !== "eval_gate") return undefined;
  const failing = (error.details as { failing?: unknown } | undefined)?.failing;
  return Array.isArray(failing) ? (failing as GateFailure[]) : [];
}

const pct = (rate: number | undefined) => (rate === undefined ? "" : `${Math.round(rate * 1000) / 10} %`);

function why(f: GateFailure): string {
  if (f.reason === "suite_missing") return "the suite no longer exists";
  if (f.reason === "no_completed_run")
    return "no completed run of the suite's current revision on this version";
  return `passed ${pct(f.passRate)}, needs ${pct(f.minPassRate)}`;
}

export function GateRefusal(props: {
  agentId: string;
  failures: GateFailure[];
  pending: boolean;
  /** Tries again with `force: true` and this reason. */
  onForce: (reason: string) => void;
}) {
  const [reason, setReason] = useState("");
  const evals = href(`/agents/${encodeURIComponent(props.agentId)}/evals`);
  return (
    <section class="note error gate-refusal" role="alert" aria-labelledby="gate-title">
      <h3 id="gate-title">Blocked by the release gate</h3>
      <ul>
        {props.failures.map((f) => (
          <li key={`${f.version}:${f.suiteId}`}>
            Version {f.version}, suite <code>{f.suiteId}</code>: {why(f)}
            {f.failingCases?.length ? `; failing cases: ${f.failingCases.join(", ")}` : ""}.
          </li>
        ))}
      </ul>
      <p>
        Run the suites on this version and fix what fails on the <a href={evals}>Evals</a> page, or go past
        the gate with a reason (it is recorded on the release).
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (reason.trim() !== "") props.onForce(reason.trim());
        }}
      >
        <div class="field">
          <label for="gate-force-reason">Reason to go past the gate</label>
          <input
            id="gate-force-reason"
            value={reason}
            maxLength={1000}
            onInput={(e) => setReason(e.currentTarget.value)}
          />
        </div>
        <WriteButton type="submit" class="danger" disabled={props.pending || reason.trim() === ""}>
          Force past the gate
        </WriteButton>
      </form>
    </section>
  );
}
