// Pieces the draft, playground, versions and releases screens share: the agent's name, the list of problems and
// a diff table. Text only: no value from the API is ever markup.
import { api } from "../api";
import { useLoad } from "../ui/hooks";
import { Table } from "../ui/table";
import { TextBlock } from "../ui/text-block";
import { type Change, showValue } from "./diff";
import type { Issue } from "./schema";

/** The agent's name for titles (its id until it loads, or if it cannot). */
export function useAgentName(agentId: string): string {
  const agent = useLoad(() => api().agents.get(agentId), [agentId]);
  return agent.data?.name ?? agentId;
}

/** Every problem of the draft, by path; with `locate`, each path is a button that takes focus to where it is. */
export function IssueList(props: { issues: Issue[]; locate?: (path: string) => void; title?: string }) {
  const { issues } = props;
  if (issues.length === 0) return null;
  return (
    <section class="issues" aria-labelledby="issues-title">
      <h2 id="issues-title">
        {props.title ?? `${issues.length} ${issues.length === 1 ? "problem" : "problems"} in the draft`}
      </h2>
      <ul>
        {issues.map((issue) => (
          <li key={`${issue.source}:${issue.path}:${issue.message}`}>
            {props.locate ? (
              <button type="button" onClick={() => props.locate?.(issue.path)}>
                <code>{issue.path}</code>
              </button>
            ) : (
              <code>{issue.path}</code>
            )}{" "}
            {issue.message}
            {issue.source === "server" ? <span class="muted"> (from the server)</span> : null}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Value(props: { value: unknown }) {
  const { value } = props;
  if (typeof value === "string" && value.includes("\n")) return <TextBlock>{value}</TextBlock>;
  return <code>{showValue(value)}</code>;
}

/** Changes from `before` to `after` as a table (its label names both sides). */
export function DiffTable(props: { changes: Change[]; before: string; after: string; caption: string }) {
  const count = props.changes.length;
  if (count === 0) return <p class="note">No differences: {props.caption}.</p>;
  return (
    <div class="diff">
      <p class="muted">
        {count} {count === 1 ? "difference" : "differences"}: {props.caption}.
      </p>
      <Table label={`Differences, ${props.caption}`} head={["Field", "Change", props.before, props.after]}>
        {props.changes.map((change) => (
          <tr key={change.path}>
            <th scope="row">
              <code>{change.path}</code>
            </th>
            <td class={change.kind}>{change.kind}</td>
            <td>
              <Value value={change.before} />
            </td>
            <td>
              <Value value={change.after} />
            </td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
