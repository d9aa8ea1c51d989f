// The widget: wires the connection, the conversation and the panel together and exposes the host-page API.
import type { ClientFrame } from "../shared/protocol";
import type { AttachDeps, Attacher } from "./attach-view";
import { Connection, type ConnectionState } from "./connection";
import { MAX_MESSAGE_CHARS } from "./constants";
import { CONTROLS_CSS } from "./controls-styles";
import { Conversation } from "./conversation";
import { lazy } from "./dom";
import { type Handoff, handoffStatus } from "./handoff-status";
import { type GetLaunchToken, type Launcher, privateLauncher, publicLauncher } from "./launch";
import { adoptStyles } from "./launcher";
import type { ActionsDeps } from "./message-actions";
import type { Panel } from "./panel";
import { PanelView } from "./panel-view";
import { type Past, pastConversations } from "./past-conversations";
import { createPresenter, type Presenter } from "./presentation";
import { persistMode, Store } from "./storage";
import { format, layerStrings, type StringKey, type Strings } from "./strings";
import { WIDGET_CSS } from "./styles";
import { type ClientTools, cardDrawer, clientTools, type ToolFunction } from "./tools";
import { Transcript } from "./transcript";
import { PANEL_TEXT, type WidgetError, type WidgetErrorCode, warnOnce, widgetError } from "./widget-error";

/** Path of this build's content-hashed message-controls asset; substituted by scripts/build-widget.mjs. */
declare const __ACTIONS_VIEW__: string | undefined;

const ACTIONS_VIEW = typeof __ACTIONS_VIEW__ === "string" ? __ACTIONS_VIEW__ : "";

/** Path of this build's content-hashed attachments asset; substituted by scripts/build-widget.mjs. */
declare const __ATTACH_VIEW__: string | undefined;

export type Layout = "floating" | "inline" | "fullpage";

/** The status line's text for each connection state. */
const STATE_TEXT: Record<ConnectionState, StringKey> = {
  idle: "paused",
  connecting: "connecting",
  open: "online",
  reconnecting: "reconnecting",
  offline: "offline",
  failed: "unavailable",
};

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
  /** A tool of the host page the agent may call (docs/widget.md#approvals-and-client-tools). */
  registerTool(name: string, fn: ToolFunction): void;
  destroy(): void;
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
  /** This agent key's first store, which `identify` does not replace: the panel's open state and the accent. */
  readonly #ui: Store;
  readonly #view: PanelView;
  readonly #panel: Panel;
  readonly #transcript: Transcript;
  readonly #connection: Connection;
  readonly #conversation: Conversation;
  readonly #presenter: Presenter;
  readonly #refreshActions: () => void;
  readonly #handoff: Handoff;
  readonly #past: Past;
  readonly #tools: ClientTools;
  #lastError: WidgetErrorCode | undefined;
  /** Attaching files, once the agent offers it (docs/widget.md#attachments). */
  #files: Attacher | undefined;

  constructor(host: HTMLElement, shadow: ShadowRoot, options: MountOptions) {
    this.#host = host;
    this.#shadow = shadow;
    this.#options = options;
    this.#s = layerStrings(host.getAttribute("strings"));
    const layout = layoutOf(host.getAttribute("layout"));
    this.#floating = layout === "floating";
    this.#agentKey = host.getAttribute("agent-key");
    this.#store = new Store(persistMode(host.getAttribute("persist")), this.#agentKey ?? "private");
    this.#ui = this.#store;
    adoptStyles(shadow, WIDGET_CSS + CONTROLS_CSS);

    this.#view = new PanelView(host, shadow, this.#s, this.#floating, options.launcher);
    const panel = this.#view.panel;
    this.#panel = panel;
    if (this.#view.launcher !== null) this.#view.launcher.onclick = () => this.toggle();
    this.#view.setTitle("");
    this.#presenter = createPresenter({
      host,
      shadow,
      strings: this.#s,
      intro: panel.intro,
      localized: () => [panel.root, this.#view.launcher],
      base: options.base,
      send: (text) => {
        // The chosen prompt leaves with the intro: focus goes on to where the conversation continues.
        if (this.send(text)) panel.input.focus();
      },
      changed: () => this.#view.setTitle(this.#conversation?.agentName ?? ""),
      ui: this.#ui,
      // The attachments module loads only for an agent that takes files, or a message that carries some.
      attach: (shown) =>
        (shown.attachments || this.#files) &&
        loadFiles().then((m) => {
          this.#files = m?.attach(files, shown);
        }),
    });
    const loadFiles = lazy<typeof import("./attach-view")>(
      typeof __ATTACH_VIEW__ === "string" ? __ATTACH_VIEW__ : "",
      options.base,
    );

    this.#transcript = new Transcript(
      panel.log,
      panel.intro,
      {
        you: () => this.#s.you,
        agent: () => this.#conversation.agentName || this.#s.agent,
        person: () => this.#s.person,
        updated: () => this.#s.updated,
      },
      (away) => {
        panel.pill.hidden = !away;
      },
    );
    this.#connection = new Connection(this.#publicOrMissing(), {
      state: (state, error) => this.#onState(state, error),
      frame: (frame) => {
        // The pinned thread's presentation is the authoritative one: it follows the launch's.
        if (frame.type === "ready" && frame.presentation !== undefined)
          this.#presenter.present(frame.presentation);
        if (frame.type === "tool_request") this.#tools.request(frame);
        else this.#conversation.onFrame(frame);
      },
      resume: () => this.#conversation.resumePoint(),
      busy: () => this.#conversation.busy,
    });
    this.#conversation = new Conversation({
      strings: this.#s,
      view: this.#view,
      transcript: this.#transcript,
      connection: this.#connection,
      store: () => this.#store,
      emit: (name, detail) => this.#emit(name, detail),
      changed: () => this.#refreshActions(),
      mode: (mode, person) => {
        this.#handoff.update(mode, person);
        this.#refreshActions();
      },
    });
    const files: AttachDeps = {
      view: this.#view,
      connection: this.#connection,
      base: options.base,
    };
    this.#transcript.files = (el, refs) => loadFiles().then((m) => m?.showFiles(files, el, refs));
    const announce = (text: string) => this.#view.announce(text);
    const focusInput = () => panel.input.focus();
    const send = (frame: ClientFrame) => this.#connection.send(frame);
    this.#tools = clientTools(send, () => this.#connection.threadId);
    this.#transcript.card = cardDrawer({ strings: this.#s, root: shadow, send, announce }, options.base, () =>
      this.#view.notice(this.#s.errorGeneric, false),
    );
    const actions: ActionsDeps = {
      root: shadow,
      strings: this.#s,
      items: () => this.#transcript.items,
      canFork: () => !this.#conversation.busy && !this.#handoff.active,
      fork: (frame, from, pending) => this.#conversation.fork(frame, from, pending),
      send,
      announce,
      focusInput,
    };
    // The message controls' module loads once there is a message to put them on (docs/widget.md#conversation-controls).
    const loadActions = lazy<typeof import("./message-actions")>(ACTIONS_VIEW, options.base);
    let refresh: (() => void) | undefined;
    this.#refreshActions = () => {
      if (refresh) refresh();
      else if (!this.#transcript.isEmpty)
        void loadActions().then((m) => {
          refresh ??= m?.messageActions(actions);
          refresh?.();
        });
    };
    this.#handoff = handoffStatus(this.#s, panel.form, announce, () => this.#conversation.agentName);
    this.#past = pastConversations(
      {
        strings: this.#s,
        base: options.base,
        token: () => this.#connection.freshToken(),
        current: () => this.#connection.threadId,
        choose: (threadId) => {
          threadId || this.#store.clear();
          this.#switchThread(threadId);
          focusInput();
        },
        announce,
        unavailable: () => this.#view.notice(this.#s.pastFailed, false),
      },
      panel.newButton,
      panel.log,
    );
    this.#wire();

    this.api = {
      open: () => this.open(),
      close: () => this.close(false),
      toggle: () => this.toggle(),
      send: (text) => void this.send(String(text)),
      newConversation: () => this.newConversation(),
      identify: (getLaunchToken) => this.identify(getLaunchToken),
      registerTool: (name, fn) => this.#tools.register(name, fn),
      destroy: () => this.destroy(),
    };
    if (!this.#floating) queueMicrotask(() => this.#connection.start());
    // Open on the previous page view: open again, after the calls the host queued (identify) and leaving focus where
    // the page has it (docs/widget.md#remembered-between-page-views).
    else if (this.#ui.get().open) queueMicrotask(() => this.open(false));
  }

  // ---- host API ----

  /** Opens the floating panel; `focus` false (reopened on load) leaves focus where the page has it. */
  open(focus = true): void {
    if (this.#view.show()) {
      this.#transcript.scrollToEnd();
      this.#ui.set({ open: true });
      this.#emit("open", {});
    }
    this.#connection.start();
    // On touch screens, focusing the input would pop the keyboard over the conversation.
    if (focus && !matchMedia("(pointer: coarse)").matches)
      requestAnimationFrame(() => this.#panel.input.focus());
  }

  close(returnFocus: boolean): void {
    if (this.#view.hide(returnFocus)) {
      this.#ui.set({ open: false }); // not kept: the saved state reads back only `true`
      this.#emit("close", {});
    }
  }

  toggle(): void {
    if (this.#view.isOpen) this.close(true);
    else this.open();
  }

  /** Queues a message; false (and the text stays where it was) when it is empty or too long. */
  send(raw: string): boolean {
    const text = raw.trim();
    if (text === "") return false;
    if (text.length > MAX_MESSAGE_CHARS) {
      this.#view.notice(format(this.#s.tooLong, { max: MAX_MESSAGE_CHARS }), false);
      return false;
    }
    const files = this.#files?.take();
    if (files === null) return false;
    this.#conversation.queue(text, files);
    this.#connection.start();
    this.#conversation.pump();
    return true;
  }

  newConversation(): void {
    this.#past.close(false);
    this.#switchThread(undefined);
  }

  /** Shows another thread of this visitor (a past conversation), or a new one: launched again with its id. */
  #switchThread(threadId: string | undefined): void {
    this.#store.set({ threadId, runId: undefined, seq: undefined });
    this.#conversation.forget();
    this.#handoff.update("agent", undefined, true);
    this.#connection.restart();
    if (this.#view.isOpen || !this.#floating) this.#connection.start();
  }

  identify(getLaunchToken: GetLaunchToken): void {
    if (typeof getLaunchToken !== "function") {
      warnOnce("identify() needs a function returning {token, threadId, websocketUrl, expiresAt}.");
      return;
    }
    this.#store = new Store(
      persistMode(this.#host.getAttribute("persist")),
      `private:${this.#agentKey ?? ""}`,
    );
    this.#conversation.forget();
    // A private agent's threads are reopened by the host's backend, which launches them: no list here.
    this.#past.close(false);
    this.#past.button.hidden = true;
    this.#panel.notice.hidden = true;
    this.#connection.setLauncher(this.#presenting(privateLauncher(getLaunchToken)));
    if (this.#view.isOpen || !this.#floating) this.#connection.start();
  }

  destroy(): void {
    this.#connection.destroy();
    this.#view.destroy();
    this.#conversation.destroy();
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
    p.input.onfocus = () => this.#connection.start();
    // The panel's own buttons: nothing else handles their clicks.
    p.stop.onclick = () => {
      const runId = this.#conversation.activeRun;
      if (runId !== null) this.#connection.send({ type: "cancel", runId });
    };
    p.newButton.onclick = () => {
      this.newConversation();
      p.input.focus();
    };
    p.closeButton.onclick = () => this.close(true);
    p.retry.onclick = () => {
      p.notice.hidden = true;
      this.#connection.start();
    };
    p.pill.onclick = () => this.#transcript.scrollToEnd();
    this.#shadow.addEventListener("keydown", (event) => {
      if ((event as KeyboardEvent).key === "Escape" && this.#view.isOpen) {
        event.stopPropagation();
        this.close(true);
      }
    });
  }

  #publicOrMissing(): Launcher {
    const agentKey = this.#agentKey;
    if (agentKey === null || agentKey === "") {
      return async () => ({
        ok: false,
        error: widgetError(
          "missing_agent_key",
          'no agent key: set data-agent-key="pk_…" (agent-key on <agent-thread>), or for a private agent ' +
            "call AgentThreads.identify(getLaunchToken).",
        ),
      });
    }
    // A CORS-open asset of the service: fetched to tell a refused origin from a dead network.
    const probeUrl = new URL("/embed.js", this.#options.base).href;
    return this.#presenting(
      publicLauncher({ base: this.#options.base, agentKey, store: this.#store, probeUrl }),
    );
  }

  /** Shows a launch's presentation as soon as it answers, before the thread's `ready` confirms it. */
  #presenting(launcher: Launcher): Launcher {
    return async (reason) => {
      const result = await launcher(reason);
      if (result.ok && result.session.presentation !== undefined)
        this.#presenter.present(result.session.presentation);
      return result;
    };
  }

  // ---- connection events ----

  #onState(state: ConnectionState, error?: WidgetError): void {
    const p = this.#panel;
    p.status.setAttribute("data-state", state);
    p.statusText.textContent = this.#s[STATE_TEXT[state]];
    if (error !== undefined) {
      warnOnce(error.message);
      this.#view.notice(this.#s[PANEL_TEXT[error.code]], error.retryable);
      if (this.#lastError !== error.code) this.#emit("error", { code: error.code, message: error.message });
      this.#lastError = error.code;
    } else if (state === "open") {
      this.#lastError = undefined;
      p.notice.hidden = true;
    }
    const usable = state !== "failed" || error?.retryable === true;
    p.input.disabled = !usable;
    p.send.disabled = !usable;
    this.#conversation.connectionChanged(state);
  }

  #emit(name: string, detail: Record<string, unknown>): void {
    this.#host.dispatchEvent(new CustomEvent(name, { detail }));
  }
}
