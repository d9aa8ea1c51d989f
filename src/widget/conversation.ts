// One thread as the widget follows it: unsent messages in order, server frames merged into the transcript, replies.

import { toHex } from "../shared/hex";
import type { ApprovalAction, ClientFrame, ServerFrame, ThreadMode, WireEntry } from "../shared/protocol";
import type { Connection, ConnectionState } from "./connection";
import type { PanelView } from "./panel-view";
import type { Store } from "./storage";
import { format, type Strings } from "./strings";
import type { Item, Transcript } from "./transcript";
import { warnOnce } from "./widget-error";

const HISTORY_PAGE = 200;
const HISTORY_MAX_PAGES = 10;
const ANNOUNCE_MAX_CHARS = 600;
/** After a `conflict` (a reply, maybe from another tab, is still being written), try the send again this late. */
const CONFLICT_RETRY_MS = 1500;

interface Outgoing {
  clientMessageId: string;
  text: string;
  inflight: boolean;
  /** Uploaded files sent with it (docs/widget.md#attachments). */
  files?: { id: string }[] | undefined;
}

export interface ConversationDeps {
  strings: Strings;
  view: PanelView;
  transcript: Transcript;
  connection: Connection;
  /** The current store: `identify` replaces it. */
  store: () => Store;
  emit(name: string, detail: Record<string, unknown>): void;
  /** Something that decides which message controls show changed: messages, a reply starting or ending. */
  changed(): void;
  /** The thread's mode (`ready`, `mode` frames), and a person's name when their message arrives. */
  mode(mode: ThreadMode | undefined, person?: string): void;
}

export function newClientMessageId(): string {
  return `cm_${toHex(crypto.getRandomValues(new Uint8Array(16)))}`;
}

export class Conversation {
  readonly #d: ConversationDeps;
  #outbox: Outgoing[] = [];
  #activeRun: string | null = null;
  readonly #announced = new Set<string>();
  #threadId: string | undefined;
  #historyBuffer: WireEntry[] = [];
  #historyPages = 0;
  #historyLeaf: string | undefined;
  #agentName = "";
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  /** The leaf shown before a retry or an edit replaced the branch: redrawn if the server refuses it. */
  #forkedFrom: string | undefined;

  constructor(deps: ConversationDeps) {
    this.#d = deps;
  }

  get agentName(): string {
    return this.#agentName;
  }

  get activeRun(): string | null {
    return this.#activeRun;
  }

  /** Whether anything waits on the socket: unsent messages or a live reply. */
  get busy(): boolean {
    return this.#outbox.length > 0 || this.#activeRun !== null;
  }

  /** Adds a message to the transcript and the queue; `pump` sends it once the socket is open and no reply runs. */
  queue(text: string, files?: { id: string }[]): void {
    const { transcript, strings } = this.#d;
    const clientMessageId = newClientMessageId();
    this.#outbox.push({ clientMessageId, text, inflight: false, files });
    const item = transcript.upsert(`u:${clientMessageId}`, "user", text, "pending");
    if (this.#d.connection.state !== "open") transcript.setState(item, "pending", strings.waiting);
    transcript.scrollToEnd();
  }

  /** Drops the thread and anything still unsent: a new conversation or a new identity. */
  forget(): void {
    this.#resetThread();
    this.#outbox = [];
  }

  destroy(): void {
    clearTimeout(this.#retryTimer);
  }

  /** Unsent messages wait visibly while the socket is not open, and are sent again once it is. */
  connectionChanged(state: ConnectionState): void {
    const note = state === "open" ? "" : this.#d.strings.waiting;
    for (const out of this.#outbox) {
      const item = this.#d.transcript.get(`u:${out.clientMessageId}`);
      if (item !== undefined) this.#d.transcript.setState(item, "pending", note);
    }
    if (state !== "open") for (const out of this.#outbox) out.inflight = false;
  }

  /**
   * A retry or an edit: sends `frame` and, once it is on its way, replaces `from` and what follows it with the new
   * branch (`pending`: the edited message, shown until the server confirms it). False when the socket is not open.
   */
  fork(frame: ClientFrame, from: Item, pending?: { clientMessageId: string; text: string }): boolean {
    const { transcript, connection } = this.#d;
    if (this.busy || !connection.send(frame)) return false;
    this.#forkedFrom = [...transcript.items].reverse().find((item) => item.entryId)?.entryId;
    transcript.truncate(from);
    if (pending) transcript.upsert(`u:${pending.clientMessageId}`, "user", pending.text, "pending");
    this.#d.changed();
    return true;
  }

  resumePoint(): { runId: string; afterSeq: number } | undefined {
    const runId = this.#activeRun ?? this.#d.store().get().runId;
    if (runId === undefined) return undefined;
    const seq = this.#d.transcript.get(`r:${runId}`)?.seq ?? 0;
    return Number.isFinite(seq) ? { runId, afterSeq: seq } : undefined;
  }

  onFrame(frame: ServerFrame): void {
    switch (frame.type) {
      case "ready":
        this.#onReady(frame);
        return;
      case "entry":
        this.#onEntry(frame.entry);
        return;
      case "run":
        this.#onRun(frame.runId, frame.status, frame.actions);
        return;
      case "delta":
        this.#onDelta(frame.runId, frame.seq, frame.text);
        return;
      case "history":
        this.#onHistory(frame.items, frame.nextCursor);
        return;
      case "error":
        this.#onError(frame.code, frame.message);
        return;
      case "mode":
        this.#d.mode(frame.mode);
        return;
      // `pong` only proves the socket alive (the connection's business).
    }
  }

  /** Sends the oldest unsent message, one at a time and never while a reply runs. */
  pump(): void {
    const connection = this.#d.connection;
    if (connection.state !== "open" || this.#activeRun !== null) return;
    const head = this.#outbox[0];
    if (head === undefined || head.inflight) return;
    const { clientMessageId, text, files } = head;
    if (
      connection.send({
        type: "send",
        clientMessageId,
        text,
        ...(files && { attachments: files.map((f) => f.id) }),
      })
    ) {
      head.inflight = true;
      const item = this.#d.transcript.get(`u:${head.clientMessageId}`);
      if (item !== undefined) this.#d.transcript.setState(item, "pending");
    }
  }

  #onReady(frame: Extract<ServerFrame, { type: "ready" }>): void {
    if (this.#threadId !== undefined && this.#threadId !== frame.threadId) {
      const pending = this.#outbox;
      this.#resetThread();
      for (const out of pending)
        this.#d.transcript.upsert(`u:${out.clientMessageId}`, "user", out.text, "pending");
      this.#outbox = pending;
    }
    const firstReady = this.#threadId !== frame.threadId;
    this.#threadId = frame.threadId;
    this.#agentName = frame.agent.name;
    this.#d.view.setTitle(this.#agentName);
    this.#d.mode(frame.mode ?? "agent");
    if (this.#activeRun !== null) this.#setBusy(null);
    // History on every (re)connect: whatever happened while this page was away (another tab, a reply that ended
    // offline) is merged in by key, never duplicated.
    if (frame.leafId !== null) this.#loadHistory(frame.leafId);
    for (const out of this.#outbox) out.inflight = false;
    setTimeout(() => this.pump(), 0);
    if (firstReady) this.#d.emit("ready", { threadId: frame.threadId, agent: frame.agent });
  }

  #loadHistory(leafId: string): void {
    this.#historyBuffer = [];
    this.#historyPages = 0;
    this.#historyLeaf = leafId;
    this.#d.connection.send({ type: "history", leafId, limit: HISTORY_PAGE });
  }

  #onEntry(entry: WireEntry): void {
    const item = this.#d.transcript.finalEntry(entry);
    if (item === null || item.role === "tool") return;
    this.#forkedFrom = undefined;
    if (item.author !== undefined) {
      this.#d.mode(undefined, item.author);
      this.#d.view.announce(format(this.#d.strings.replyFinished, { agent: item.author, text: entry.text }));
      this.#d.view.markUnread();
    }
    if (entry.role === "user" && entry.clientMessageId !== undefined) {
      this.#outbox = this.#outbox.filter((out) => out.clientMessageId !== entry.clientMessageId);
    }
    this.#d.changed();
    this.#d.emit("message", {
      id: entry.id,
      role: entry.role,
      text: entry.text,
      status: entry.status ?? "complete",
    });
  }

  #onRun(runId: string, status: string, actions: ApprovalAction[] = []): void {
    const { transcript, strings: s, view } = this.#d;
    const key = `r:${runId}`;
    if (status === "requires_action") {
      // The run waits for a decision: the typing placeholder gives way to a card per approval; the reply goes on
      // below them once they are decided (docs/widget.md#approvals-and-client-tools).
      this.#setBusy(runId);
      const item = transcript.get(key);
      if (item?.text === "") transcript.remove(item);
      for (const action of actions) transcript.action(action.approvalId, action);
      if (actions[0])
        view.announce(`${s.approvalNeeded}: ${actions.map((a) => a.title ?? a.name).join(", ")}`);
      return;
    }
    if (status === "queued" || status === "running") {
      this.#forkedFrom = undefined;
      this.#setBusy(runId);
      if (transcript.get(key) === undefined) transcript.upsert(key, "assistant", "", "streaming", runId);
      if (!this.#announced.has(runId)) {
        this.#announced.add(runId);
        view.announce(format(s.replyStarted, { agent: this.#agentName || s.agent }));
      }
      this.#d.store().set({ runId });
      return;
    }
    if (this.#activeRun === runId) this.#setBusy(null);
    this.#d.store().set({ runId: undefined, seq: undefined });
    const item = transcript.get(key);
    if (status === "failed") {
      if (item !== undefined) transcript.setState(item, "failed", s.replyFailed);
      else
        transcript.setState(
          transcript.upsert(key, "assistant", "", "failed", runId),
          "failed",
          s.replyFailed,
        );
    } else if (item !== undefined && item.text === "") {
      transcript.remove(item);
    } else if (item !== undefined && status === "aborted") {
      transcript.setState(item, "stopped", s.replyStopped);
    }
    if (item !== undefined && item.text !== "" && this.#announced.has(runId)) {
      view.announce(
        format(s.replyFinished, {
          agent: this.#agentName || s.agent,
          text:
            item.text.length > ANNOUNCE_MAX_CHARS ? `${item.text.slice(0, ANNOUNCE_MAX_CHARS)}…` : item.text,
        }),
      );
    }
    if (item !== undefined) view.markUnread();
    this.pump();
  }

  #onDelta(runId: string, seq: number, text: string): void {
    if (this.#activeRun === null) this.#setBusy(runId);
    if (!this.#d.transcript.delta(runId, seq, text)) {
      // A gap (a frame lost between sockets): reconnect and resume from the last seq shown.
      this.#d.connection.reconnect();
      return;
    }
    this.#d.store().set({ runId, seq });
  }

  #onHistory(items: WireEntry[], nextCursor: string | undefined): void {
    this.#historyBuffer.push(...items);
    this.#historyPages++;
    const leafId = this.#historyLeaf;
    if (nextCursor !== undefined && leafId !== undefined && this.#historyPages < HISTORY_MAX_PAGES) {
      if (this.#d.connection.send({ type: "history", leafId, cursor: nextCursor, limit: HISTORY_PAGE }))
        return;
    }
    const delivered = new Set(this.#historyBuffer.map((entry) => entry.clientMessageId));
    this.#outbox = this.#outbox.filter((out) => !delivered.has(out.clientMessageId));
    this.#d.transcript.history(this.#historyBuffer);
    const person = [...this.#historyBuffer].reverse().find((entry) => entry.role === "human_agent");
    if (person) this.#d.mode(undefined, person.authorName);
    this.#historyBuffer = [];
    this.#d.changed();
  }

  #onError(code: string, message: string): void {
    const head = this.#outbox[0];
    if (head?.inflight) {
      head.inflight = false;
      if (code === "conflict") {
        clearTimeout(this.#retryTimer);
        this.#retryTimer = setTimeout(() => this.pump(), CONFLICT_RETRY_MS);
        return;
      }
      this.#outbox.shift();
      const item = this.#d.transcript.get(`u:${head.clientMessageId}`);
      if (item !== undefined) {
        this.#d.transcript.setState(
          item,
          "failed",
          format(this.#d.strings.errorMessage, { reason: message }),
        );
      }
      this.#d.emit("error", {
        code: "message_rejected",
        message: `the message was refused (${code}): ${message}`,
      });
      this.pump();
      return;
    }
    const forked = this.#forkedFrom;
    if (forked !== undefined) {
      // The retry or edit was refused: show the branch it would have replaced again.
      this.#forkedFrom = undefined;
      this.#d.transcript.clear();
      this.#loadHistory(forked);
    } else if (code === "not_found" || code === "conflict") return; // a stale resume or cancel: nothing to show
    warnOnce(`the thread answered ${code}: ${message}`);
    this.#d.view.notice(this.#d.strings.errorGeneric, false);
  }

  #resetThread(): void {
    this.#d.transcript.clear();
    this.#threadId = undefined;
    this.#announced.clear();
    this.#setBusy(null);
  }

  #setBusy(runId: string | null): void {
    this.#activeRun = runId;
    this.#d.view.setBusy(runId !== null);
    this.#d.changed();
  }
}
