// Every branch of the conversation in one list (each leaf is one), so any branch is one click away, not only the
// neighbours a fork's switcher reaches.
import type { MessageResponse } from "../../client/admin";
import { plural } from "../kit/format";
import { pathTo, type Tree, type TreeNode } from "./tree";

type Node = TreeNode<MessageResponse>;

const SNIPPET_CHARS = 60;

/**
 * What tells the branch apart: its newest user message (branches differ where a message was edited or resent),
 * else its newest message with text.
 */
function snippetOf(path: Node[]): string {
  const texts = path.map((n) => n.item).filter((m) => m.kind === "message" && m.content);
  const pick = texts.filter((m) => m.role === "user").at(-1) ?? texts.at(-1);
  if (!pick) return "(no text)";
  const line = pick.content.replace(/\s+/g, " ").trim();
  return line.length > SNIPPET_CHARS ? `${line.slice(0, SNIPPET_CHARS - 1)}…` : line;
}

export function BranchOutline(props: {
  tree: Tree<MessageResponse>;
  shown: Node;
  /** The thread's own leaf: where its next turn goes. */
  threadLeafId: string | null;
  onShow: (leaf: Node) => void;
}) {
  const { leaves } = props.tree;
  return (
    <nav class="branches" aria-labelledby="branches-title">
      <h2 id="branches-title">{plural(leaves.length, "branch", "branches")}</h2>
      <ol>
        {leaves.map((leaf, i) => {
          const path = pathTo(leaf);
          const shown = leaf === props.shown;
          const current = leaf.item.id === props.threadLeafId;
          return (
            <li key={leaf.item.id}>
              <button
                type="button"
                class={shown ? "branch shown" : "branch"}
                aria-pressed={shown}
                onClick={() => props.onShow(leaf)}
              >
                <span class="branch-name">
                  Branch {i + 1}
                  {current ? " (current)" : ""}
                </span>
                <span class="muted">
                  {plural(path.filter((n) => n.item.kind === "message").length, "message")}
                  {leaf.item.version !== null ? ` · v${leaf.item.version}` : ""}
                </span>
                <span class="branch-snippet">{snippetOf(path)}</span>
              </button>
            </li>
          );
        })}
      </ol>
    </nav>
  );
}
