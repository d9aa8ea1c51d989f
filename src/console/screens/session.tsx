// One conversation (/console/sessions/:threadId): its facts, every branch as a tree (switchers at forks and an
// outline of all branches), tool calls, feedback, each run's model input, export as JSON, and erasure.
import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import type { MessageResponse, SessionResponse } from "../../client/admin";
import { AgentThreadsError } from "../../client/http";
import { api, describeError } from "../api";
import { MakeTest } from "../evals/make-test";
import { plural } from "../kit/format";
import { href } from "../router";
import type { ScreenProps } from "../screens";
import { BranchOutline } from "../sessions/branch-outline";
import { Conversation } from "../sessions/conversation";
import { Files } from "../sessions/files";
import {
  buildTree,
  initialLeaf,
  leafAfterSwitch,
  newestLeafUnder,
  pathTo,
  type TreeNode,
} from "../sessions/tree";
import { ConfirmDialog } from "../ui/confirm";
import { ErrorNote, Loading, Page, StatusNote } from "../ui/page";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";

/** Pages of 200: a conversation longer than this is shown up to here, with a note. */
const MAX_PAGES = 50;

type Loaded =
  | { state: "loading" }
  | { state: "missing" }
  | { state: "failed"; error: string }
  | { state: "ready"; session: SessionResponse; messages: MessageResponse[]; truncated: boolean };

async function loadAll(threadId: string): Promise<Loaded> {
  try {
    const client = api();
    const sessionP = client.sessions.get(threadId);
    const messages: MessageResponse[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.sessions.messages(threadId, { limit: 200, ...(cursor ? { cursor } : {}) });
      messages.push(...page.items);
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined && pages < MAX_PAGES);
    return { state: "ready", session: await sessionP, messages, truncated: cursor !== undefined };
  } catch (error) {
    if (error instanceof AgentThreadsError && error.status === 404) return { state: "missing" };
    return { state: "failed", error: describeError(error) };
  }
}

/** The entry a link asked to see (a search match: `?entry=<id>`). */
const requestedEntry = (): string | undefined =>
  new URLSearchParams(location.search).get("entry") ?? undefined;

function Facts(props: { session: SessionResponse }) {
  const s = props.session;
  const facts: [string, ComponentChildren][] = [
    [
      "Agent",
      <>
        <a href={href(`/agents/${encodeURIComponent(s.agentId)}`)}>{s.agentName}</a> ({s.environment})
      </>,
    ],
    [
      "Version",
      `v${s.version}${s.version !== s.agentVersion ? ` (pinned v${s.agentVersion}, upgraded)` : ""}`,
    ],
    ["Subject", <code class="wrap">{s.subject}</code>],
    ["Messages", String(s.messageCount)],
    ["Last run", s.lastRun ? s.lastRun.status : "none"],
    ["Mode", s.mode === "handoff" ? "handed off to a person" : "agent"],
    [
      "Legal hold",
      s.hold ? `${s.hold.reason} (${s.hold.scope}, since ${s.hold.since.slice(0, 10)})` : "none",
    ],
    ["Started", <RelativeTime iso={s.createdAt} />],
    ["Updated", <RelativeTime iso={s.updatedAt} />],
    ["Thread id", <code class="wrap">{s.threadId}</code>],
  ];
  return (
    <dl class="fact-grid">
      {facts.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** Fetches the export and hands it to the browser as a file (a plain link could not carry the CSRF header). */
async function download(threadId: string): Promise<string> {
  const document_ = await api().sessions.export(threadId);
  const blob = new Blob([`${JSON.stringify(document_, null, 2)}\n`], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const name = `conversation-${threadId}.json`;
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  return name;
}

function Erased(props: { threadId: string }) {
  return (
    <Page title="Conversation erased">
      <StatusNote>
        The conversation <code class="wrap">{props.threadId}</code> was erased: its messages, runs, tool calls
        and search entries are gone, and its tokens no longer work. This cannot be undone.
      </StatusNote>
      <p>
        <a href={href("/sessions")}>Back to the sessions</a>
      </p>
    </Page>
  );
}

export default function SessionScreen(props: ScreenProps) {
  const threadId = props.params.threadId ?? "";
  const [loaded, setLoaded] = useState<Loaded>({ state: "loading" });
  const [leafId, setLeafId] = useState<string | undefined>(undefined);
  const [highlight] = useState(requestedEntry);
  const [announce, setAnnounce] = useState("");
  // A switch replaces the message its switcher sat on: focus goes to the same switcher on the one shown now.
  const [refocus, setRefocus] = useState<{ entryId: string; direction: "previous" | "next" }>();
  const [exported, setExported] = useState<{ ok?: string; error?: string }>({});
  const [erase, setErase] = useState<{ open: boolean; pending?: boolean; error?: string; done?: boolean }>({
    open: false,
  });

  useEffect(() => {
    let live = true;
    setLoaded({ state: "loading" });
    void loadAll(threadId).then((result) => live && setLoaded(result));
    return () => {
      live = false;
    };
  }, [threadId]);

  const tree = useMemo(() => (loaded.state === "ready" ? buildTree(loaded.messages) : undefined), [loaded]);

  useEffect(() => {
    if (!tree || loaded.state !== "ready") return;
    const asked = highlight ? tree.nodes.get(highlight) : undefined;
    const start = asked ? newestLeafUnder(asked) : initialLeaf(tree, loaded.session.leafId);
    setLeafId(start?.item.id);
  }, [tree]);

  useEffect(() => {
    if (highlight && leafId)
      document.getElementById(`entry-${highlight}`)?.scrollIntoView({ block: "center" });
  }, [leafId === undefined]);

  useEffect(() => {
    if (!refocus) return;
    const switcher = document.getElementById(`entry-${refocus.entryId}`)?.querySelector(".switcher");
    const buttons = [...(switcher?.querySelectorAll("button") ?? [])];
    const same = buttons.find((b) => b.dataset.direction === refocus.direction && !b.disabled);
    (same ?? buttons.find((b) => !b.disabled))?.focus();
  }, [refocus]);

  if (erase.done) return <Erased threadId={threadId} />;
  if (loaded.state === "loading") return <Loading label="Loading the conversation…" />;
  if (loaded.state === "missing") {
    return (
      <Page title="Conversation not found">
        <ErrorNote>
          No conversation <code class="wrap">{threadId}</code> in this tenant: it may have been erased, or
          removed by retention.
        </ErrorNote>
        <p>
          <a href={href("/sessions")}>Back to the sessions</a>
        </p>
      </Page>
    );
  }
  if (loaded.state === "failed") {
    return (
      <Page title="Conversation">
        <ErrorNote>Could not load this conversation: {loaded.error}</ErrorNote>
      </Page>
    );
  }

  const { session, truncated } = loaded;
  const leaf =
    (leafId ? tree?.nodes.get(leafId) : undefined) ?? (tree ? initialLeaf(tree, session.leafId) : undefined);
  const path = leaf ? pathTo(leaf) : [];
  const branchNumber = leaf && tree ? tree.leaves.indexOf(leaf) + 1 : 0;
  const branchCount = tree?.leaves.length ?? 0;

  const show = (next: TreeNode<MessageResponse>) => {
    setLeafId(next.item.id);
    const n = tree ? tree.leaves.indexOf(next) + 1 : 0;
    setAnnounce(`Showing branch ${n} of ${branchCount}.`);
  };

  const doExport = async () => {
    setExported({});
    try {
      setExported({ ok: `Downloaded ${await download(threadId)}.` });
    } catch (error) {
      setExported({ error: `Could not export: ${describeError(error)}` });
    }
  };

  const doErase = async () => {
    setErase({ open: true, pending: true });
    try {
      await api().sessions.delete(threadId);
      setErase({ open: false, done: true });
    } catch (error) {
      const held = error instanceof AgentThreadsError && error.reason === "legal_hold";
      setErase({
        open: true,
        error: held
          ? "This conversation is under a legal hold: nothing was erased. Lift the hold first."
          : describeError(error),
      });
    }
  };

  return (
    <Page
      title={session.title ?? "Untitled conversation"}
      actions={
        <>
          <button type="button" onClick={() => void doExport()}>
            Export JSON
          </button>
          <WriteButton class="danger" onClick={() => setErase({ open: true })}>
            Erase…
          </WriteButton>
        </>
      }
    >
      <p>
        <a href={href("/sessions")}>← All sessions</a>
      </p>
      {exported.ok ? <StatusNote>{exported.ok}</StatusNote> : null}
      {exported.error ? <ErrorNote>{exported.error}</ErrorNote> : null}
      <section class="card session-facts" aria-label="Details">
        <Facts session={session} />
      </section>
      <Files threadId={threadId} />
      {truncated ? (
        <p class="note">
          This conversation is long: only its first {MAX_PAGES * 200} entries are shown. Export it for all.
        </p>
      ) : null}
      {!tree || !leaf ? (
        <p class="muted">No messages yet.</p>
      ) : (
        <div class="session-body">
          <BranchOutline tree={tree} shown={leaf} threadLeafId={session.leafId} onShow={show} />
          <section aria-labelledby="conversation-title" class="session-conversation">
            <h2 id="conversation-title">
              Conversation{branchCount > 1 ? `, branch ${branchNumber} of ${branchCount}` : ""}
            </h2>
            <p class="sr-only" role="status">
              {announce}
            </p>
            <div class="form-actions">
              <MakeTest agentId={session.agentId} threadId={threadId} entryId={leaf.item.id} />
            </div>
            <Conversation
              threadId={threadId}
              tree={tree}
              path={path}
              highlightId={highlight}
              label={`Messages of branch ${branchNumber}, ${plural(path.length, "entry", "entries")}`}
              onPick={(sibling, direction) => {
                show(leafAfterSwitch(sibling, leaf));
                setRefocus({ entryId: sibling.item.id, direction });
              }}
            />
          </section>
        </div>
      )}
      <ConfirmDialog
        open={erase.open}
        title="Erase this conversation?"
        confirmLabel="Erase conversation"
        danger
        pending={erase.pending ?? false}
        error={erase.error}
        onConfirm={() => void doErase()}
        onClose={() => setErase({ open: false })}
      >
        <p>
          Every message, branch, run, tool call and search entry of this conversation is deleted everywhere,
          and its links stop working. Usage counts stay. This cannot be undone.
        </p>
      </ConfirmDialog>
    </Page>
  );
}
