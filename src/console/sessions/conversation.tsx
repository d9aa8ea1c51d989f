// One branch of a conversation, root → leaf, with a switcher at every fork ("2 of 3") that moves to another branch
// without losing the place, tool calls and their results, feedback and each run's model input.
import type { MessageResponse } from "../../client/admin";
import { TextBlock } from "../ui/text-block";
import { RelativeTime } from "../ui/time";
import { MessageFiles } from "./files";
import {
  type ActionView,
  actionOf,
  deciderLabel,
  forkLabel,
  jsonText,
  roleLabel,
  type ToolCallView,
  toolCallsOf,
  versionChangeOf,
} from "./message-parts";
import { RunInput } from "./run-input";
import { siblingsOf, type Tree, type TreeNode } from "./tree";

type Node = TreeNode<MessageResponse>;

function ToolCalls(props: { calls: ToolCallView[] }) {
  return (
    <ul class="tool-calls" aria-label="Tool calls">
      {props.calls.map((call, i) => (
        <li key={call.toolCallId || i}>
          <details>
            <summary>
              Tool call <code>{call.toolName}</code>
              {call.isError ? <span class="badge error">error</span> : null}
            </summary>
            <h4>Input</h4>
            <TextBlock>{jsonText(call.input)}</TextBlock>
            <h4>Result</h4>
            <TextBlock>{jsonText(call.output)}</TextBlock>
          </details>
        </li>
      ))}
    </ul>
  );
}

function Switcher(props: {
  tree: Tree<MessageResponse>;
  node: Node;
  onPick: (sibling: Node, direction: "previous" | "next") => void;
}) {
  const { siblings, index } = siblingsOf(props.tree, props.node);
  if (siblings.length < 2) return null;
  const what = forkLabel(siblings.map((s) => s.item));
  const label = `Alternative ${index + 1} of ${siblings.length}: ${what}`;
  return (
    <fieldset class="switcher">
      <legend class="sr-only">{label}</legend>
      <button
        type="button"
        class="small"
        aria-label={`Previous alternative (${what})`}
        disabled={index === 0}
        data-direction="previous"
        onClick={() => props.onPick(siblings[index - 1]!, "previous")}
      >
        ‹
      </button>
      <span aria-hidden="true">
        {index + 1} of {siblings.length}
      </span>
      <button
        type="button"
        class="small"
        aria-label={`Next alternative (${what})`}
        disabled={index === siblings.length - 1}
        data-direction="next"
        onClick={() => props.onPick(siblings[index + 1]!, "next")}
      >
        ›
      </button>
      <span class="muted">{what}</span>
    </fieldset>
  );
}

function Feedback(props: { feedback: NonNullable<MessageResponse["feedback"]> }) {
  const { rating, comment, at } = props.feedback;
  return (
    <p class="feedback">
      Feedback: <strong>{rating === "up" ? "helpful" : "not helpful"}</strong>
      {comment ? <> — “{comment}”</> : null} <RelativeTime iso={at} />
    </p>
  );
}

/** An approval request, its decision, or a client tool request, as a line in the branch. */
function Action(props: { action: ActionView; createdAt: string }) {
  const a = props.action;
  if (a.kind === "approval_decision") {
    const approved = a.decision === "approve";
    return (
      <p>
        <span class={`badge ${approved ? "ok" : "error"}`}>{approved ? "approved" : "denied"}</span> by{" "}
        {deciderLabel(a.by)}
        {a.reason ? <> — “{a.reason}”</> : null} <code class="muted wrap">{a.approvalId}</code>{" "}
        <RelativeTime iso={props.createdAt} />
      </p>
    );
  }
  return (
    <>
      <p>
        {a.kind === "approval_request" ? "Approval requested for " : "Client tool requested: "}
        <code>{a.toolName}</code>
        {a.kind === "approval_request" ? <> (decided by {deciderLabel(a.by)})</> : null}
        {a.expiresAt ? (
          <>
            , expires <RelativeTime iso={a.expiresAt} />
          </>
        ) : null}
      </p>
      {a.kind === "approval_request" && a.title ? <p>{a.title}</p> : null}
      <details>
        <summary>Input</summary>
        <TextBlock>{jsonText(a.input)}</TextBlock>
      </details>
    </>
  );
}

function Message(props: {
  threadId: string;
  tree: Tree<MessageResponse>;
  node: Node;
  highlight: boolean;
  /** Show the model-input toggle: the reply of its run (or the user message of a run that wrote none). */
  audit: boolean;
  onPick: (sibling: Node, direction: "previous" | "next") => void;
}) {
  const m = props.node.item;
  const change = versionChangeOf(m);
  if (change) {
    return (
      <li class="divider" id={`entry-${m.id}`}>
        <Switcher tree={props.tree} node={props.node} onPick={props.onPick} />
        <p>
          Version changed from v{change.fromVersion} to v{change.toVersion} (by {change.by}),{" "}
          <RelativeTime iso={m.createdAt} />
        </p>
      </li>
    );
  }
  const action = actionOf(m);
  if (action) {
    return (
      <li class={`msg action ${m.kind}`} id={`entry-${m.id}`} data-kind={m.kind}>
        <Switcher tree={props.tree} node={props.node} onPick={props.onPick} />
        <article aria-label={m.kind === "approval_decision" ? "Approval decision" : roleLabel(m)}>
          <Action action={action} createdAt={m.createdAt} />
        </article>
      </li>
    );
  }
  const calls = toolCallsOf(m);
  const text = m.kind === "message" ? m.content : jsonText(m.content);
  return (
    <li
      class={`msg ${m.role ?? m.kind}${props.highlight ? " match" : ""}`}
      id={`entry-${m.id}`}
      aria-current={props.highlight ? "true" : undefined}
    >
      <Switcher tree={props.tree} node={props.node} onPick={props.onPick} />
      <article aria-label={`${roleLabel(m)} message`}>
        <header class="msg-head">
          <strong>{roleLabel(m)}</strong>
          {m.version !== null ? <span class="badge">v{m.version}</span> : null}
          {m.status && m.status !== "complete" ? <span class="badge error">{m.status}</span> : null}
          <RelativeTime iso={m.createdAt} />
        </header>
        {calls.length > 0 ? <ToolCalls calls={calls} /> : null}
        {text ? <p class="text">{text}</p> : <p class="muted">(no text kept)</p>}
        <MessageFiles threadId={props.threadId} files={m.attachments} />
        {m.feedback ? <Feedback feedback={m.feedback} /> : null}
        {props.audit && m.runId ? <RunInput threadId={props.threadId} runId={m.runId} /> : null}
      </article>
    </li>
  );
}

export function Conversation(props: {
  threadId: string;
  tree: Tree<MessageResponse>;
  path: Node[];
  highlightId: string | undefined;
  label: string;
  onPick: (sibling: Node, direction: "previous" | "next") => void;
}) {
  return (
    <ol class="conversation" aria-label={props.label}>
      {props.path.map((node) => {
        const m = node.item;
        const replyOfRun = node.children.some((c) => c.item.runId === m.runId);
        const audit = m.runId !== null && (m.role === "assistant" || (m.role === "user" && !replyOfRun));
        return (
          <Message
            key={m.id}
            threadId={props.threadId}
            tree={props.tree}
            node={node}
            highlight={m.id === props.highlightId}
            audit={audit}
            onPick={props.onPick}
          />
        );
      })}
    </ol>
  );
}
