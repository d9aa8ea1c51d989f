// The conversation on screen: one node per message, keyed so replays, retries and history never duplicate text.
import type { ApprovalAction, ApprovalDecisionRecord, WireEntry } from "../shared/protocol";
import { h } from "./dom";
import { MarkdownView } from "./render-markdown";
import type { DrawCard } from "./tools";

/** `tool`: an approval's card (docs/widget.md#approvals-and-client-tools). */
export type Role = "user" | "assistant" | "tool";
export type ItemState = "pending" | "streaming" | "done" | "failed" | "stopped";

export interface Item {
  key: string;
  role: Role;
  text: string;
  state: ItemState;
  runId?: string;
  /** The stored entry's id, once the server has sent it (retry, edit and feedback name it). */
  entryId?: string;
  /** A person's name on a handoff message (`human_agent`); model replies have none. */
  author?: string;
  /** Seq of the last delta shown; a final entry sets it to Infinity so late deltas are ignored. */
  seq: number;
  el: HTMLElement;
  bubble: HTMLElement;
  meta: HTMLElement;
  view?: MarkdownView<Node>;
}

/** The key of a message: its clientMessageId for user turns, its run for replies, else its entry id. */
export function entryKey(entry: WireEntry): string {
  if (entry.role === "user" && entry.clientMessageId) return `u:${entry.clientMessageId}`;
  if (entry.role === "assistant" && entry.runId) return `r:${entry.runId}`;
  return `e:${entry.id}`;
}

export interface TranscriptLabels {
  you: () => string;
  agent: () => string;
  /** The label of a person's message that carries no name. */
  person: () => string;
  /** The divider a `version_change` entry shows. */
  updated: () => string;
}

export class Transcript {
  readonly #log: HTMLElement;
  readonly #intro: HTMLElement;
  readonly #labels: TranscriptLabels;
  readonly #onScrollAway: (away: boolean) => void;
  #items: Item[] = [];
  readonly #byKey = new Map<string, Item>();
  readonly #dirty = new Set<Item>();
  #frame = 0;
  /** Draws an approval's card into its item's bubble (set by the widget). */
  card: DrawCard = () => {};
  /** Draws a user message's attachments under its bubble (set by the widget; docs/widget.md#attachments). */
  files?: (el: HTMLElement, refs: unknown[]) => void;

  constructor(
    log: HTMLElement,
    intro: HTMLElement,
    labels: TranscriptLabels,
    onScrollAway: (away: boolean) => void,
  ) {
    this.#log = log;
    this.#intro = intro;
    this.#labels = labels;
    this.#onScrollAway = onScrollAway;
    log.addEventListener("scroll", () => {
      if (this.#atBottom()) this.#onScrollAway(false);
    });
  }

  get(key: string): Item | undefined {
    return this.#byKey.get(key);
  }

  get isEmpty(): boolean {
    return this.#items.length === 0;
  }

  /** The messages in the order shown. */
  get items(): readonly Item[] {
    return this.#items;
  }

  /** Removes `from` and every message after it: the branch a retry or an edit replaces. */
  truncate(from: Item): void {
    for (const item of this.#items.slice(this.#items.indexOf(from))) this.remove(item);
  }

  clear(): void {
    cancelAnimationFrame(this.#frame);
    this.#dirty.clear();
    for (const item of this.#items) item.el.remove();
    this.#items = [];
    this.#byKey.clear();
    this.#intro.hidden = false;
  }

  /** Adds or updates one message; new ones go to the end. */
  upsert(key: string, role: Role, text: string, state: ItemState, runId?: string): Item {
    let item = this.#byKey.get(key);
    const stick = this.#atBottom();
    if (item === undefined) {
      item = this.#create(key, role, runId);
      this.#items.push(item);
      this.#byKey.set(key, item);
      this.#log.append(item.el);
      this.#intro.hidden = true;
    }
    item.text = text;
    this.setState(item, state);
    this.#render(item, true);
    this.#settle(stick);
    return item;
  }

  /** Appends streamed text; returns false on a gap in seq (the caller resyncs). Repeats are ignored. */
  delta(runId: string, seq: number, text: string): boolean {
    const key = `r:${runId}`;
    const item = this.#byKey.get(key) ?? this.upsert(key, "assistant", "", "streaming", runId);
    if (seq <= item.seq) return true;
    if (seq !== item.seq + 1) return false;
    item.seq = seq;
    item.text += text;
    if (item.state !== "streaming") this.setState(item, "streaming");
    this.#dirty.add(item);
    if (this.#frame === 0) this.#frame = requestAnimationFrame(() => this.#flush());
    return true;
  }

  /** An approval's card, one per approval (its request and its decision share it), where the tree puts it. */
  action(approvalId: string, action?: ApprovalAction, decision?: ApprovalDecisionRecord): Item {
    const item = this.#byKey.get(`a:${approvalId}`) ?? this.upsert(`a:${approvalId}`, "tool", "", "done");
    this.card(item.bubble, action, decision);
    return item;
  }

  /** The final entry of a reply replaces whatever was streamed: the stored text is the truth. */
  finalEntry(entry: WireEntry): Item | null {
    const { role } = entry;
    const approval = entry.approval ?? entry.decision;
    if (approval) return this.action(approval.approvalId, entry.approval, entry.decision);
    if (entry.kind === "version_change") {
      // A quiet divider: the conversation goes on on a newer version of the agent.
      const item = this.upsert(entryKey(entry), "user", this.#labels.updated(), "done");
      item.el.className = "vc";
      return item;
    }
    if (entry.kind !== "message" || (role !== "user" && role !== "assistant" && role !== "human_agent"))
      return null;
    const state: ItemState =
      entry.status === "failed" ? "failed" : entry.status === "interrupted" ? "stopped" : "done";
    const key = entryKey(entry);
    const human = role === "human_agent";
    if (human && !this.#byKey.has(key)) {
      // A person's message (handoff): shown like a reply, under their own visible name.
      const item = this.upsert(key, "assistant", "", state);
      item.author = entry.authorName || this.#labels.person();
      const who = item.el.firstChild as HTMLElement;
      who.className = "who";
      who.textContent = item.author;
    }
    const item = this.upsert(key, human ? "assistant" : role, entry.text, state, entry.runId ?? undefined);
    item.entryId = entry.id;
    if (entry.attachments) this.files?.(item.el, entry.attachments);
    if (role !== "user") item.seq = Number.POSITIVE_INFINITY;
    this.#dirty.delete(item);
    return item;
  }

  /**
   * Puts a history page in front of what is already shown (a live reply, unsent messages), keeping one node per
   * key: history arriving after live frames reorders, it never duplicates.
   */
  history(entries: WireEntry[]): void {
    const ordered: Item[] = [];
    const seen = new Set<Item>();
    for (const entry of entries) {
      const item = this.finalEntry(entry);
      if (item !== null && !seen.has(item)) {
        seen.add(item);
        ordered.push(item);
      }
    }
    const rest = this.#items.filter((item) => !seen.has(item));
    this.#items = [...ordered, ...rest];
    this.#log.append(...this.#items.map((item) => item.el));
    this.#settle(true);
  }

  remove(item: Item): void {
    item.el.remove();
    this.#items = this.#items.filter((i) => i !== item);
    this.#byKey.delete(item.key);
    this.#dirty.delete(item);
    this.#intro.hidden = this.#items.length > 0;
  }

  setState(item: Item, state: ItemState, note = ""): void {
    item.state = state;
    item.el.className = `msg ${item.role} ${state}`;
    item.meta.textContent = note;
    item.meta.hidden = note === "";
    if (state === "streaming" && item.text === "") item.bubble.replaceChildren(typing());
    else if (item.role === "assistant" && item.text === "" && state !== "streaming")
      item.bubble.replaceChildren();
  }

  scrollToEnd(): void {
    this.#log.scrollTop = this.#log.scrollHeight;
    this.#onScrollAway(false);
  }

  #create(key: string, role: Role, runId?: string): Item {
    const bubble = h("div", { class: role === "assistant" ? "bubble md" : "bubble", dir: "auto" });
    const meta = h("div", { class: "meta", "aria-live": "off" });
    const who = h(
      "span",
      { class: "sr" },
      `${role === "user" ? this.#labels.you() : this.#labels.agent()}: `,
    );
    const el = h("div", { part: `message message-${role}` }, who, bubble, meta);
    return {
      key,
      role,
      text: "",
      state: "done",
      ...(runId !== undefined ? { runId } : {}),
      seq: 0,
      el,
      bubble,
      meta,
      ...(role === "assistant" ? { view: new MarkdownView<Node>(document, bubble) } : {}),
    };
  }

  #flush(): void {
    this.#frame = 0;
    const stick = this.#atBottom();
    for (const item of this.#dirty) this.#render(item, false);
    this.#dirty.clear();
    this.#settle(stick);
  }

  #render(item: Item, force: boolean): void {
    if (item.text === "") return;
    if (item.view !== undefined) {
      const view = force ? new MarkdownView<Node>(document, item.bubble) : item.view;
      item.view = view;
      view.update(item.text);
    } else {
      item.bubble.textContent = item.text;
    }
  }

  #atBottom(): boolean {
    const log = this.#log;
    return log.scrollHeight - log.scrollTop - log.clientHeight < 48;
  }

  /** Follows new text only while the reader is at the bottom; otherwise offers a "new messages" button. */
  #settle(stick: boolean): void {
    if (stick) this.scrollToEnd();
    else this.#onScrollAway(true);
  }
}

function typing(): HTMLElement {
  return h("span", { class: "typing", "aria-hidden": "true" }, h("i"), h("i"), h("i"));
}
