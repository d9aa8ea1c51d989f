// Pieces the draft, playground, versions and releases screens share: the agent's sub-navigation, the list of
// problems, a diff table and a confirmation dialog. Text only: no value from the API is ever markup.
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { api } from "../api";
import { href } from "../router";
import { useLoad } from "../ui/hooks";
import { type Change, showValue } from "./diff";
import type { Issue } from "./schema";
import { adoptCss, SHARED_CSS } from "./styles";

const TABS: [string, string][] = [
  ["", "Overview"],
  ["/draft", "Draft"],
  ["/playground", "Playground"],
  ["/versions", "Versions"],
  ["/releases", "Releases"],
];

/** The agent's name for titles (its id until it loads, or if it cannot). */
export function useAgentName(agentId: string): string {
  const agent = useLoad(() => api().agents.get(agentId), [agentId]);
  return agent.data?.name ?? agentId;
}

export function AgentTabs(props: { agentId: string; current: string }) {
  adoptCss("shared", SHARED_CSS);
  const base = `/agents/${encodeURIComponent(props.agentId)}`;
  return (
    <nav class="agent-tabs" aria-label="Agent">
      <ul>
        {TABS.map(([to, label]) => (
          <li key={to}>
            <a href={href(base + to)} aria-current={props.current === to ? "page" : undefined}>
              {label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/**
 * Every problem of the draft, by path: a button per problem moves focus to its field when the form shows it
 * (`locate` answers false when no field has that path; then the path is the pointer into the JSON).
 */
export function IssueList(props: { issues: Issue[]; locate?: (path: string) => boolean; title?: string }) {
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
  if (typeof value === "string" && value.includes("\n")) return <pre>{value}</pre>;
  return <code>{showValue(value)}</code>;
}

const KIND: Record<Change["kind"], string> = { added: "added", removed: "removed", changed: "changed" };

/** Changes from `before` to `after` as a table (a caption names both sides). */
export function DiffTable(props: { changes: Change[]; before: string; after: string; caption: string }) {
  if (props.changes.length === 0) return <p class="note">No differences: {props.caption}.</p>;
  return (
    <div class="table-wrap">
      <table class="diff">
        <caption class="muted">
          {props.caption}: {props.changes.length} {props.changes.length === 1 ? "difference" : "differences"}
        </caption>
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Change</th>
            <th scope="col">{props.before}</th>
            <th scope="col">{props.after}</th>
          </tr>
        </thead>
        <tbody>
          {props.changes.map((change) => (
            <tr key={change.path}>
              <th scope="row">
                <code>{change.path}</code>
              </th>
              <td class={`kind ${change.kind}`}>{KIND[change.kind]}</td>
              <td>
                <Value value={change.before} />
              </td>
              <td>
                <Value value={change.after} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * A modal confirmation (`<dialog>`: focus stays inside, Escape cancels). Focus starts on Cancel, the choice that
 * changes nothing, and returns to the control that opened it.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  confirmLabel: string;
  pending?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const opener = useRef<Element | null>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) {
      opener.current = document.activeElement;
      dialog.showModal();
      cancel.current?.focus();
    } else if (!props.open && dialog.open) {
      dialog.close();
      if (opener.current instanceof HTMLElement) opener.current.focus();
    }
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby="confirm-title"
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id="confirm-title">{props.title}</h2>
      {props.children}
      <div class="actions">
        <button type="button" ref={cancel} onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="primary" disabled={props.pending} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
