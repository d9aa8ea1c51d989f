// Two runs of one suite side by side (the draft and the active version): per case, passed or failed in each, and the
// failing expectations with what was seen (docs/evals.md#runs).
import type { CaseResult, ExpectationFailure, RunResponse } from "../../client/evals";
import { Table } from "../ui/table";

export interface Side {
  label: string;
  run: RunResponse | undefined;
}

/** A case's outcome over its repeats: passed only when every repeat passed; the failures of the first that did not. */
function outcome(
  run: RunResponse | undefined,
  caseId: string,
): { passed: boolean; failures: ExpectationFailure[] } | undefined {
  const results = run?.cases.filter((c: CaseResult) => c.caseId === caseId) ?? [];
  if (results.length === 0) return undefined;
  const failed = results.find((c) => !c.passed);
  return { passed: failed === undefined, failures: failed?.failures ?? [] };
}

const seenText = (seen: unknown): string => {
  if (seen === undefined) return "";
  const text = typeof seen === "string" ? seen : JSON.stringify(seen);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
};

function Failures(props: { failures: ExpectationFailure[] }) {
  if (props.failures.length === 0) return null;
  return (
    <ul class="eval-failures">
      {props.failures.map((f) => (
        <li key={`${f.index}:${f.type}`}>
          <strong>{f.type}</strong>: {f.message}
          {f.seen !== undefined ? (
            <>
              {" "}
              — seen <code class="wrap">{seenText(f.seen)}</code>
            </>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

function Cell(props: { side: Side; caseId: string }) {
  const run = props.side.run;
  if (!run || (run.status !== "completed" && run.status !== "failed")) return <td>Running…</td>;
  const o = outcome(run, props.caseId);
  if (!o) return <td class="muted">Not run</td>;
  return (
    <td data-outcome={o.passed ? "passed" : "failed"}>
      <span class={o.passed ? "eval-pass" : "eval-fail"}>{o.passed ? "Passed" : "Failed"}</span>
      <Failures failures={o.failures} />
    </td>
  );
}

const summary = (side: Side): string => {
  const run = side.run;
  if (!run) return `${side.label}: starting…`;
  if (run.status !== "completed" && run.status !== "failed") return `${side.label}: ${run.status}…`;
  return `${side.label}: ${run.passed} of ${run.total} passed`;
};

export function RunDiff(props: { caseIds: string[]; sides: [Side, Side] }) {
  const [a, b] = props.sides;
  const ids = [
    ...new Set([
      ...props.caseIds,
      ...(a.run?.cases.map((c) => c.caseId) ?? []),
      ...(b.run?.cases.map((c) => c.caseId) ?? []),
    ]),
  ];
  const changed = ids.filter((id) => outcome(a.run, id)?.passed !== outcome(b.run, id)?.passed).length;
  const done = [a, b].every((s) => s.run?.status === "completed" || s.run?.status === "failed");
  return (
    <section aria-labelledby="diff-title">
      <h3 id="diff-title">
        {a.label} and {b.label}, case by case
      </h3>
      <p role="status">
        {summary(a)}; {summary(b)}
        {done ? `; ${changed} ${changed === 1 ? "case differs" : "cases differ"}.` : "."}
      </p>
      <Table label={`Cases on ${a.label} and ${b.label}`} head={["Case", a.label, b.label]}>
        {ids.map((id) => (
          <tr key={id} data-case={id}>
            <th scope="row">
              <code>{id}</code>
            </th>
            <Cell side={a} caseId={id} />
            <Cell side={b} caseId={id} />
          </tr>
        ))}
      </Table>
    </section>
  );
}
