// The tenant's conversations (/console/sessions): filters (agent, subject, mode, updated since), full-text search of
// message text (`q`), and paging. The filters live in the address, so a search can be shared, reloaded and gone back to.
import { useEffect, useState } from "preact/hooks";
import type { AgentResponse, SessionResponse } from "../../client/admin";
import { api } from "../api";
import { plural } from "../kit/format";
import { href } from "../router";
import type { ScreenProps } from "../screens";
import { useLoad, usePaged } from "../ui/hooks";
import { ErrorNote, Loading, Page } from "../ui/page";
import { Pager } from "../ui/pager";
import { RelativeTime } from "../ui/time";

type Item = SessionResponse & { match?: { entryId: string; snippet: string } };

interface Filters {
  q: string;
  agentId: string;
  subject: string;
  mode: "" | "agent" | "handoff";
  /** A UTC day, `YYYY-MM-DD`. */
  since: string;
}

const FIELDS = ["q", "agentId", "subject", "mode", "since"] as const;
const EMPTY: Filters = { q: "", agentId: "", subject: "", mode: "", since: "" };
const PAGE_SIZE = 25;

/**
 * The filters live in the address's fragment (`#q=…&subject=…`), which the browser never sends: a reload or a shared
 * link keeps them without putting a person's id or words in a request URL (docs/privacy.md#end-user-ids-stay-out-of-urls).
 * An old link's query is read once and moved to the fragment.
 */
function filtersFromUrl(): Filters {
  const params = new URLSearchParams(location.hash.slice(1) || location.search);
  const mode = params.get("mode");
  return {
    q: params.get("q") ?? "",
    agentId: params.get("agentId") ?? "",
    subject: params.get("subject") ?? "",
    mode: mode === "agent" || mode === "handoff" ? mode : "",
    since: /^\d{4}-\d{2}-\d{2}$/.test(params.get("since") ?? "") ? (params.get("since") ?? "") : "",
  };
}

function writeUrl(filters: Filters): void {
  const params = new URLSearchParams();
  for (const field of FIELDS) if (filters[field]) params.set(field, filters[field]);
  const query = params.toString();
  history.replaceState(null, "", `${location.pathname}${query ? `#${query}` : ""}`);
}

/** The search body: the subject and words travel in it, never in a request URL (docs/privacy.md#end-user-ids-stay-out-of-urls). */
function listQuery(filters: Filters, cursor?: string) {
  return {
    limit: PAGE_SIZE,
    ...(filters.q ? { q: filters.q } : {}),
    ...(filters.agentId ? { agentId: filters.agentId } : {}),
    ...(filters.subject ? { subject: filters.subject } : {}),
    ...(filters.mode ? { mode: filters.mode } : {}),
    ...(filters.since ? { updatedAfter: `${filters.since}T00:00:00.000Z` } : {}),
    ...(cursor ? { cursor } : {}),
  };
}

/** The snippet with the searched words marked: split into text pieces, never markup. */
function Snippet(props: { text: string; q: string }) {
  const words = props.q
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
  if (words.length === 0) return <>{props.text}</>;
  const pieces = props.text.split(/([\p{L}\p{N}]+)/u);
  return (
    <>
      {pieces.map((piece, i) => (words.includes(piece.toLowerCase()) ? <mark key={i}>{piece}</mark> : piece))}
    </>
  );
}

function Row(props: { item: Item; q: string }) {
  const s = props.item;
  const to = `/sessions/${encodeURIComponent(s.threadId)}${s.match ? `?entry=${encodeURIComponent(s.match.entryId)}` : ""}`;
  return (
    <li class="session-row">
      <a class="session-title" href={href(to)}>
        {s.title ?? "Untitled conversation"}
      </a>
      {s.match ? (
        <p class="snippet">
          <Snippet text={s.match.snippet} q={props.q} />
        </p>
      ) : null}
      <p class="muted session-meta">
        <span>
          {s.agentName} v{s.version}
        </span>
        <span>{plural(s.messageCount, "message")}</span>
        <span>
          subject <code class="wrap">{s.subject}</code>
        </span>
        <span>
          updated <RelativeTime iso={s.updatedAt} />
        </span>
        {s.lastRun && s.lastRun.status !== "succeeded" ? (
          <span class="badge error">last run {s.lastRun.status}</span>
        ) : null}
        {s.mode === "handoff" ? <span class="badge">handoff</span> : null}
        {s.hold ? <span class="badge">legal hold</span> : null}
      </p>
    </li>
  );
}

function FilterForm(props: { agents: AgentResponse[]; value: Filters; onApply: (f: Filters) => void }) {
  const [draft, setDraft] = useState(props.value);
  useEffect(() => setDraft(props.value), [props.value]);
  const set = (field: keyof Filters) => (event: Event) =>
    setDraft({ ...draft, [field]: (event.currentTarget as HTMLInputElement).value });
  return (
    <search aria-label="Filter sessions">
      <form
        class="filters card"
        onSubmit={(event) => {
          event.preventDefault();
          props.onApply({ ...draft, q: draft.q.trim(), subject: draft.subject.trim() });
        }}
      >
        <div class="field wide">
          <label for="f-q">Search messages</label>
          <input
            id="f-q"
            type="search"
            value={draft.q}
            onInput={set("q")}
            maxLength={200}
            placeholder="Words that appear in a message"
          />
        </div>
        <div class="field">
          <label for="f-agent">Agent</label>
          <select id="f-agent" value={draft.agentId} onChange={set("agentId")}>
            <option value="">All agents</option>
            {props.agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name} ({a.slug})
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="f-subject">Subject (user id)</label>
          <input id="f-subject" value={draft.subject} onInput={set("subject")} spellcheck={false} />
        </div>
        <div class="field">
          <label for="f-mode">Mode</label>
          <select id="f-mode" value={draft.mode} onChange={set("mode")}>
            <option value="">Any</option>
            <option value="agent">Agent answering</option>
            <option value="handoff">Handed off to a person</option>
          </select>
        </div>
        <div class="field">
          <label for="f-since">Updated since (UTC day)</label>
          <input id="f-since" type="date" value={draft.since} onInput={set("since")} />
        </div>
        <div class="filter-actions">
          <button class="primary" type="submit">
            {draft.q ? "Search" : "Apply filters"}
          </button>
          <button type="button" onClick={() => props.onApply(EMPTY)}>
            Clear
          </button>
        </div>
      </form>
    </search>
  );
}

export default function SessionsScreen(_props: ScreenProps) {
  const [filters, setFilters] = useState<Filters>(filtersFromUrl);
  const agents = useLoad(async () => (await api().agents.list({ limit: 200 })).items, []);
  const paged = usePaged<Item>((cursor) => api().sessions.search(listQuery(filters, cursor)), [filters]);
  useEffect(() => writeUrl(filters), [filters]);
  // A link or a typed address that changes only the fragment reloads nothing: read the filters again.
  useEffect(() => {
    const reread = () => setFilters(filtersFromUrl());
    addEventListener("hashchange", reread);
    return () => removeEventListener("hashchange", reread);
  }, []);

  const searching = filters.q !== "";
  const anyFilter = FIELDS.some((f) => filters[f] !== "");
  const { items } = paged;
  return (
    <Page title="Sessions">
      <FilterForm agents={agents.data ?? []} value={filters} onApply={setFilters} />
      {agents.error ? <ErrorNote>Could not list the agents: {agents.error}</ErrorNote> : null}
      <h2 id="results-title">{searching ? `Conversations matching “${filters.q}”` : "Conversations"}</h2>
      {paged.error ? <ErrorNote>Could not list the conversations: {paged.error}</ErrorNote> : null}
      <p role="status" class="muted">
        {paged.loading
          ? ""
          : items.length === 0
            ? paged.page > 1
              ? "No more conversations."
              : anyFilter
                ? "No conversation matches."
                : "No conversations yet."
            : `Page ${paged.page}: ${plural(items.length, "conversation")}${paged.hasNext ? ", more on the next page" : ""}.`}
      </p>
      {paged.loading && !paged.data ? <Loading label="Loading the conversations…" /> : null}
      {items.length > 0 ? (
        <ul class="session-list" aria-labelledby="results-title" aria-busy={paged.loading}>
          {items.map((item) => (
            <Row key={item.threadId} item={item} q={filters.q} />
          ))}
        </ul>
      ) : null}
      <Pager paged={paged} label="Conversation pages" />
    </Page>
  );
}
