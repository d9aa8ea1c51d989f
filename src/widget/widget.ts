// The widget: wires the connection, the transcript and the panel together and exposes the host-page API.
import type { ServerFrame, WireEntry } from "../shared/protocol";
import { Connection, type ConnectionState } from "./connection";
import { MAX_MESSAGE_CHARS } from "./constants";
import { icon } from "./dom";
import { type GetLaunchToken, type Launcher, privateLauncher, publicLauncher } from "./launch";
import { adoptStyles, createLauncher } from "./launcher";
import { buildPanel, type Panel } from "./panel";
import { persistMode, Store } from "./storage";
import { format, mergeStrings, type Strings } from "./strings";
import { WIDGET_CSS } from "./styles";
import { Transcript } from "./transcript";
import { PANEL_TEXT, type WidgetError, type WidgetErrorCode, warnOnce, widgetError } from "./widget-error";

const HISTORY_PAGE = 200;
const HISTORY_MAX_PAGES = 10;
const ANNOUNCE_MAX_CHARS = 600;

export type Layout = "floating" | "inline" | "fullpage";

export interface MountOptions {
  /** Origin of the service (where embed.js came from). */
  base: string;
  /** The launcher the loader already drew, if any. */
  launcher?: HTMLButtonElement | null;
}

/** What the loader forwards host calls to. */
export interface Controller {
  open(): void;
  close(): void;
  toggle(): void;
  send(text: string): void;
  newConversation(): void;
  identify(getLaunchToken: GetLaunchToken): void;
  destroy(): void;
}

interface Outgoing {
  clientMessageId: string;
  text: string;
  inflight: boolean;
}

function newClientMessageId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `cm_${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

function layoutOf(value: string | null): Layout {
  return value === "floating" || value === "fullpage" ? value : "inline";
}

export function mount(host: HTMLElement, shadow: ShadowRoot, options: MountOptions): Controller {
  return new Widget(host, shadow, options).api;
}

class Widget {
  readonly api: Controller;
  readonly #host: HTMLElement;
  readonly #shadow: ShadowRoot;
  readonly #options: MountOptions;
  readonly #s: Strings;
  readonly #floating: boolean;
  readonly #agentKey: string | null;
  #store: Store;
  readonly #panel: Panel;
  readonly #launcher: HTMLButtonElement | null;
  readonly #transcript: Transcript;
  readonly #connection: Connection;
  #outbox: Outgoing[] = [];
  #activeRun: string | null = null;
  readonly #announced = new Set<string>();
  #threadId: string | undefined;
  #historyBuffer: WireEntry[] = [];
  #historyPages = 0;
  #historyLeaf: string | undefined;
  #agentName = "";
  #open = false;
  #lastError: WidgetErrorCode | undefined;
  #unlockScroll: (() => void) | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(host: HTMLElement, shadow: ShadowRoot, options: MountOptions) {
    this.#host = host;
    this.#shadow = shadow;
    this.#options = options;
    this.#s = mergeStrings(host.getAttribute("strings"));
    const layout = layoutOf(host.getAttribute("layout"));
    this.#floating = layout === "floating";
    this.#agentKey = host.getAttribute("agent-key");
    this.#store = new Store(persistMode(host.getAttribute("persist")), this.#agentKey ?? "private");
    adoptStyles(shadow, WIDGET_CSS);

    this.#launcher = this.#floating ? (options.launcher ?? createLauncher(this.#s.open)) : null;
    const panel = buildPanel(this.#s, this.#floating, MAX_MESSAGE_CHARS);
    this.#panel = panel;
    if (this.#launcher !== null) {
      const launcher = this.#launcher;
      launcher.append(icon("close"));
      launcher.setAttribute("aria-controls", "at-panel");
      launcher.setAttribute("aria-label", this.#s.open);
      launcher.onclick = () => this.toggle();
      if (!launcher.isConnected) shadow.append(launcher);
      panel.root.hidden = true;
    }
    shadow.append(panel.root);
    this.#setTitle();

    this.#transcript = new Transcript(
      panel.log,
      panel.intro,
      { you: () => this.#s.you, agent: () => this.#agentName || this.#s.agent },
      (away) => {
        panel.pill.hidden = !away;
      },
    );
    this.#connection = new Connection(this.#publicOrMissing(), {
      state: (state, error) => this.#onState(state, error),
      frame: (frame) => this.#onFrame(frame),
      resume: () => this.#resumePoint(),
      busy: () => this.#outbox.length > 0 || this.#activeRun !== null,
    });
    this.#wire();

    this.api = {
      open: () => this.open(),
      close: () => this.close(false),
      toggle: () => this.toggle(),
      send: (text) => void this.send(String(text)),
      newConversation: () => this.newConversation(),
      identify: (getLaunchToken) => this.identify(getLaunchToken),
      destroy: () => this.destroy(),
    };
    if (!this.#floating) queueMicrotask(() => this.#connection.start());
  }

  // ---- host API ----

  open(): void {
    if (this.#floating && !this.#open) {
      this.#open = true;
      this.#panel.root.hidden = false;
      this.#host.setAttribute("open", "");
      this.#launcher?.setAttribute("aria-expanded", "true");
      this.#launcher?.setAttribute("aria-label", this.#s.close);
      this.#launcher?.removeAttribute("data-unread");
      this.#followViewport();
      this.#transcript.scrollToEnd();
      this.#emit("open", {});
    }
    this.#connection.start();
    // On touch screens, focusing the input would pop the keyboard over the conversation.
    if (!matchMedia("(pointer: coarse)").matches) requestAnimationFrame(() => this.#panel.input.focus());
  }

  close(returnFocus: boolean): void {
    if (!this.#floating || !this.#open) return;
    const focusInside = this.#shadow.activeElement !== null && this.#shadow.activeElement !== this.#launcher;
    this.#open = false;
    this.#panel.root.hidden = true;
    this.#host.removeAttribute("open");
    this.#launcher?.setAttribute("aria-expanded", "false");
    this.#launcher?.setAttribute("aria-label", this.#s.open);
    this.#unlockScroll?.();
    this.#unlockScroll = undefined;
    if (returnFocus || focusInside) this.#launcher?.focus();
    this.#emit("close", {});
  }

  toggle(): void {
    if (this.#open) this.close(true);
    else this.open();
  }

  /** Queues a message; false (and the text stays where it was) when it is empty or too long. */
  send(raw: string): boolean {
    const text = raw.trim();
    if (text === "") return false;
    if (text.length > MAX_MESSAGE_CHARS) {
      this.#notice(format(this.#s.tooLong, { max: MAX_MESSAGE_CHARS }), false);
      return false;
    }
    const clientMessageId = newClientMessageId();
    this.#outbox.push({ clientMessageId, text, inflight: false });
    const item = this.#transcript.upsert(`u:${clientMessageId}`, "user", text, "pending");
    if (this.#connection.state !== "open") this.#transcript.setState(item, "pending", this.#s.waiting);
    this.#transcript.scrollToEnd();
    this.#connection.start();
    this.#pump();
    return true;
  }

  newConversation(): void {
    this.#store.set({ threadId: undefined, runId: undefined, seq: undefined });
    this.#resetThread();
    this.#outbox = [];
    this.#connection.restart();
    if (this.#open || !this.#floating) this.#connection.start();
  }

  identify(getLaunchToken: GetLaunchToken): void {
    if (typeof getLaunchToken !== "function") {
      warnOnce("identify() needs a function that returns {token, threadId, websocketUrl, expiresAt}.");
      return;
    }
    this.#store = new Store(
      persistMode(this.#host.getAttribute("persist")),
      `private:${this.#agentKey ?? ""}`,
    );
    this.#resetThread();
    this.#outbox = [];
    this.#panel.notice.hidden = true;
    this.#connection.setLauncher(privateLauncher(getLaunchToken));
    if (this.#open || !this.#floating) this.#connection.start();
  }

  destroy(): void {
    this.#connection.destroy();
    this.#unlockScroll?.();
    clearTimeout(this.#retryTimer);
    this.#shadow.replaceChildren();
    this.#host.remove();
  }

  // ---- wiring ----

  #wire(): void {
    const p = this.#panel;
    p.form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (this.send(p.input.value)) p.input.value = "";
    });
    p.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        p.form.requestSubmit();
      }
    });
    p.input.addEventListener("focus", () => this.#connection.start());
    p.stop.addEventListener("click", () => {
      if (this.#activeRun !== null) this.#connection.send({ type: "cancel", runId: this.#activeRun });
    });
    p.newButton.addEventListener("click", () => {
      this.newConversation();
      p.input.focus();
    });
    p.closeButton.addEventListener("click", () => this.close(true));
    p.retry.addEventListener("click", () => {
      p.notice.hidden = true;
      this.#connection.start();
    });
    p.pill.addEventListener("click", () => this.#transcript.scrollToEnd());
    this.#shadow.addEventListener("keydown", (event) => {
      if ((event as KeyboardEvent).key === "Escape" && this.#open) {
        event.stopPropagation();
        this.close(true);
      }
    });
  }

  /** Keeps the mobile sheet above the on-screen keyboard and the page behind it still. */
  #followViewport(): void {
    if (!matchMedia("(max-width: 640px)").matches) return;
    const vv = window.visualViewport;
    const style = this.#host.style;
    const sync = () => {
      if (vv === null) return;
      style.setProperty("--at-vv-height", `${vv.height}px`);
      style.setProperty("--at-vv-top", `${vv.offsetTop}px`);
    };
    sync();
    vv?.addEventListener("resize", sync);
    vv?.addEventListener("scroll", sync);
    const root = document.documentElement.style;
    const overflow = root.overflow;
    root.overflow = "hidden";
    this.#unlockScroll = () => {
      vv?.removeEventListener("resize", sync);
      vv?.removeEventListener("scroll", sync);
      root.overflow = overflow;
    };
  }

  #publicOrMissing(): Launcher {
    const agentKey = this.#agentKey;
    if (agentKey === null || agentKey === "") {
      return async () => ({
        ok: false,
        error: widgetError(
          "missing_agent_key",
          'no agent key: add data-agent-key="pk_…" to the script tag (agent-key on <agent-thread>), ' +
            "or call AgentThreads.identify(getLaunchToken) for a private agent.",
        ),
      });
    }
    // A CORS-open asset of the service: fetched to tell a refused origin from a dead network.
    const probeUrl = new URL("/embed.js", this.#options.base).href;
    return publicLauncher({ base: this.#options.base, agentKey, store: this.#store, probeUrl });
  }

  // ---- connection events ----

  #onState(state: ConnectionState, error?: WidgetError): void {
    const p = this.#panel;
    p.status.setAttribute("data-state", state);
    const label: Record<ConnectionState, string> = {
      idle: this.#s.paused,
      connecting: this.#s.connecting,
      open: this.#s.online,
      reconnecting: this.#s.reconnecting,
      offline: this.#s.offline,
      failed: this.#s.unavailable,
    };
    p.statusText.textContent = label[state];
    if (error !== undefined) {
      warnOnce(error.message);
      this.#notice(this.#s[PANEL_TEXT[error.code]], error.retryable);
      if (this.#lastError !== error.code) this.#emit("error", { code: error.code, message: error.message });
      this.#lastError = error.code;
    } else if (state === "open") {
      this.#lastError = undefined;
      p.notice.hidden = true;
    }
    const usable = state !== "failed" || error?.retryable === true;
    p.input.disabled = !usable;
    p.send.disabled = !usable;
    const note = state === "open" ? "" : this.#s.waiting;
    for (const out of this.#outbox) {
      const item = this.#transcript.get(`u:${out.clientMessageId}`);
      if (item !== undefined) this.#transcript.setState(item, "pending", note);
    }
    if (state !== "open") for (const out of this.#outbox) out.inflight = false;
  }

  #onFrame(frame: ServerFrame): void {
    switch (frame.type) {
      case "ready":
        this.#onReady(frame);
        return;
      case "entry":
        this.#onEntry(frame.entry);
        return;
      case "run":
        this.#onRun(frame.runId, frame.status);
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
      case "pong":
        return;
    }
  }

  #onReady(frame: Extract<ServerFrame, { type: "ready" }>): void {
    if (this.#threadId !== undefined && this.#threadId !== frame.threadId) {
      const pending = this.#outbox;
      this.#resetThread();
      for (const out of pending)
        this.#transcript.upsert(`u:${out.clientMessageId}`, "user", out.text, "pending");
      this.#outbox = pending;
    }
    const firstReady = this.#threadId !== frame.threadId;
    this.#threadId = frame.threadId;
    this.#agentName = frame.agent.name;
    this.#setTitle();
    if (this.#activeRun !== null) this.#setBusy(null);
    // History on every (re)connect: whatever happened while this page was away (another tab, a reply that ended
    // offline) is merged in by key, never duplicated.
    if (frame.leafId !== null) {
      this.#historyBuffer = [];
      this.#historyPages = 0;
      this.#historyLeaf = frame.leafId;
      this.#connection.send({ type: "history", leafId: frame.leafId, limit: HISTORY_PAGE });
    }
    for (const out of this.#outbox) out.inflight = false;
    setTimeout(() => this.#pump(), 0);
    if (firstReady) this.#emit("ready", { threadId: frame.threadId, agent: frame.agent });
  }

  #onEntry(entry: WireEntry): void {
    const item = this.#transcript.finalEntry(entry);
    if (item === null) return;
    if (entry.role === "user" && entry.clientMessageId !== undefined) {
      this.#outbox = this.#outbox.filter((out) => out.clientMessageId !== entry.clientMessageId);
    }
    this.#emit("message", {
      id: entry.id,
      role: entry.role,
      text: entry.text,
      status: entry.status ?? "complete",
    });
  }

  #onRun(runId: string, status: string): void {
    const key = `r:${runId}`;
    if (status === "queued" || status === "running") {
      this.#setBusy(runId);
      if (this.#transcript.get(key) === undefined)
        this.#transcript.upsert(key, "assistant", "", "streaming", runId);
      if (!this.#announced.has(runId)) {
        this.#announced.add(runId);
        this.#announce(format(this.#s.replyStarted, { agent: this.#agentName || this.#s.agent }));
      }
      this.#store.set({ runId });
      return;
    }
    if (this.#activeRun === runId) this.#setBusy(null);
    this.#store.set({ runId: undefined, seq: undefined });
    const item = this.#transcript.get(key);
    if (status === "failed") {
      if (item !== undefined) this.#transcript.setState(item, "failed", this.#s.replyFailed);
      else
        this.#transcript.setState(
          this.#transcript.upsert(key, "assistant", "", "failed", runId),
          "failed",
          this.#s.replyFailed,
        );
    } else if (item !== undefined && item.text === "") {
      this.#transcript.remove(item);
    } else if (item !== undefined && status === "aborted") {
      this.#transcript.setState(item, "stopped", this.#s.replyStopped);
    }
    if (item !== undefined && item.text !== "" && this.#announced.has(runId)) {
      this.#announce(
        format(this.#s.replyFinished, {
          agent: this.#agentName || this.#s.agent,
          text:
            item.text.length > ANNOUNCE_MAX_CHARS ? `${item.text.slice(0, ANNOUNCE_MAX_CHARS)}…` : item.text,
        }),
      );
    }
    if (this.#floating && !this.#open && item !== undefined) this.#launcher?.setAttribute("data-unread", "");
    this.#pump();
  }

  #onDelta(runId: string, seq: number, text: string): void {
    if (this.#activeRun === null) this.#setBusy(runId);
    if (!this.#transcript.delta(runId, seq, text)) {
      // A gap (a frame lost between sockets): reconnect and resume from the last seq shown.
      this.#connection.reconnect();
      return;
    }
    this.#store.set({ runId, seq });
  }

  #onHistory(items: WireEntry[], nextCursor: string | undefined): void {
    this.#historyBuffer.push(...items);
    this.#historyPages++;
    const leafId = this.#historyLeaf;
    if (nextCursor !== undefined && leafId !== undefined && this.#historyPages < HISTORY_MAX_PAGES) {
      if (this.#connection.send({ type: "history", leafId, cursor: nextCursor, limit: HISTORY_PAGE })) return;
    }
    const delivered = new Set(this.#historyBuffer.map((entry) => entry.clientMessageId));
    this.#outbox = this.#outbox.filter((out) => !delivered.has(out.clientMessageId));
    this.#transcript.history(this.#historyBuffer);
    this.#historyBuffer = [];
  }

  #onError(code: string, message: string): void {
    const head = this.#outbox[0];
    if (head?.inflight) {
      head.inflight = false;
      if (code === "conflict") {
        // A reply (maybe from another tab) is still being written: send once it ends, or shortly.
        clearTimeout(this.#retryTimer);
        this.#retryTimer = setTimeout(() => this.#pump(), 1500);
        return;
      }
      this.#outbox.shift();
      const item = this.#transcript.get(`u:${head.clientMessageId}`);
      if (item !== undefined) {
        this.#transcript.setState(item, "failed", format(this.#s.errorMessage, { reason: message }));
      }
      this.#emit("error", {
        code: "message_rejected",
        message: `the message was refused (${code}): ${message}`,
      });
      this.#pump();
      return;
    }
    if (code === "not_found" || code === "conflict") return; // a stale resume or cancel: nothing to show
    warnOnce(`the thread answered ${code}: ${message}`);
    this.#notice(this.#s.errorGeneric, false);
  }

  // ---- helpers ----

  #pump(): void {
    if (this.#connection.state !== "open" || this.#activeRun !== null) return;
    const head = this.#outbox[0];
    if (head === undefined || head.inflight) return;
    if (this.#connection.send({ type: "send", clientMessageId: head.clientMessageId, text: head.text })) {
      head.inflight = true;
      const item = this.#transcript.get(`u:${head.clientMessageId}`);
      if (item !== undefined) this.#transcript.setState(item, "pending");
    }
  }

  #resumePoint(): { runId: string; afterSeq: number } | undefined {
    const runId = this.#activeRun ?? this.#store.get().runId;
    if (runId === undefined) return undefined;
    const seq = this.#transcript.get(`r:${runId}`)?.seq ?? 0;
    return Number.isFinite(seq) ? { runId, afterSeq: seq } : undefined;
  }

  #resetThread(): void {
    this.#transcript.clear();
    this.#threadId = undefined;
    this.#announced.clear();
    this.#setBusy(null);
  }

  #setBusy(runId: string | null): void {
    this.#activeRun = runId;
    const p = this.#panel;
    p.log.setAttribute("aria-busy", String(runId !== null));
    p.stop.hidden = runId === null;
    p.send.hidden = runId !== null;
  }

  #setTitle(): void {
    const name = this.#s.title || this.#agentName || this.#s.agent;
    const initial = Array.from(name.trim())[0]?.toUpperCase() ?? "?";
    this.#panel.title.textContent = name;
    this.#panel.introTitle.textContent = name;
    this.#panel.avatar.textContent = initial;
    this.#panel.introAvatar.textContent = initial;
  }

  #notice(text: string, retry: boolean): void {
    const p = this.#panel;
    p.noticeText.textContent = text;
    p.retry.hidden = !retry;
    p.notice.hidden = false;
  }

  #announce(text: string): void {
    const announcer = this.#panel.announcer;
    announcer.textContent = "";
    setTimeout(() => {
      announcer.textContent = text;
    }, 60);
  }

  #emit(name: string, detail: Record<string, unknown>): void {
    this.#host.dispatchEvent(new CustomEvent(name, { detail }));
  }
}
