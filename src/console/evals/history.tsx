// A suite's pass rate over time, per target (each published version, each draft revision), from its latest runs.
import type { RunSummary } from "../../client/evals";
import { api } from "../api";
import { useLoad } from "../ui/hooks";
import { EmptyNote, ErrorNote } from "../ui/page";
import { Table } from "../ui/table";
import { RelativeTime } from "../ui/time";

const targetLabel = (t: RunSummary["target"]) =>
  "version" in t ? `Version ${t.version}` : `Draft revision ${t.draftRevision}`;

const rate = (r: RunSummary) =>
  r.passRate === null ? r.status : `${Math.round(r.passRate * 1000) / 10} % (${r.passed}/${r.total})`;

export function RunHistory(props: { agentId: string; suiteId: string; tick: number }) {
  const runs = useLoad(
    () => api().evals.runs(props.agentId, props.suiteId),
    [props.agentId, props.suiteId, props.tick],
  );
  const items = runs.data?.items ?? [];
  // Grouped by target, versions first (newest), then drafts; runs newest first inside each.
  const groups = new Map<string, RunSummary[]>();
  for (const run of items) {
    const key = targetLabel(run.target);
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  const order = [...groups.entries()].sort(([, a], [, b]) => {
    const va = "version" in a[0]!.target ? a[0]!.target.version : -1;
    const vb = "version" in b[0]!.target ? b[0]!.target.version : -1;
    return vb - va;
  });
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">Pass rate per version</h2>
      {runs.error ? <ErrorNote>Could not list the runs: {runs.error}</ErrorNote> : null}
      {runs.data && items.length === 0 ? <EmptyNote>No runs of this suite yet.</EmptyNote> : null}
      {order.length > 0 ? (
        <Table
          label="Runs of this suite by target"
          head={["Target", "Latest", "Earlier runs", "Suite revision"]}
        >
          {order.map(([label, list]) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              <td>
                {rate(list[0]!)}, <RelativeTime iso={list[0]!.createdAt} />
              </td>
              <td>{list.slice(1).map(rate).join(" · ") || "none"}</td>
              <td>{list[0]!.suiteRevision}</td>
            </tr>
          ))}
        </Table>
      ) : null}
    </section>
  );
}
