// The embed loader (≤ 2 KB gzip): command queue, the <agent-thread> element and its launcher; the widget loads on use.
import { adoptStyles, createLauncher, LAUNCHER_CSS } from "./launcher";
import type { Controller, MountOptions } from "./widget";

/** Path of the exact widget build, substituted by scripts/build-widget.mjs. */
declare const __WIDGET_PATH__: string;

type Call = [string, ...unknown[]];

function invoke(controller: Controller, name: string, args: unknown[]): void {
  (controller[name as keyof Controller] as (...a: unknown[]) => void)(...args);
}
type Listener = (detail: unknown) => void;
type Method = keyof Controller;
interface WidgetModule {
  mount(host: HTMLElement, shadow: ShadowRoot, options: MountOptions): Controller;
}
interface Api {
  q: { push(call: Call): void };
  init(options?: Record<string, unknown>): void;
  on(event: string, listener: Listener): void;
  off(event: string, listener: Listener): void;
  [method: string]: unknown;
}

const METHODS: Method[] = [
  "open",
  "close",
  "toggle",
  "send",
  "newConversation",
  "identify",
  "registerTool",
  "destroy",
];
const EVENTS = ["ready", "open", "close", "message", "error"];
const EAGER: Method[] = ["open", "toggle", "send"];

function main(): void {
  const w = window as unknown as { AgentThreads?: { q?: unknown } };
  if (customElements.get("agent-thread")) return; // included twice: the first copy serves the page
  const script = document.currentScript as HTMLScriptElement | null;
  const src = script?.src || location.href;
  const widgetUrl = new URL(__WIDGET_PATH__, src).href;
  const base = new URL(src).origin;
  let loading: Promise<WidgetModule | undefined> | undefined;
  /** The widget module, or undefined when it could not be loaded (warned; the next use tries again). */
  const load = (): Promise<WidgetModule | undefined> =>
    (loading ??= import(widgetUrl).catch((error: unknown) => {
      loading = undefined;
      console.warn(`agent-threads: could not load ${widgetUrl}; allow it in script-src.`, error);
    }));

  // Plain `_` members, not #private: the build shortens them (mangleProps), which it cannot do to #names.
  class AgentThread extends HTMLElement {
    // `declare`: no field initialisers, so no constructor code for them.
    declare _controller?: Controller;
    declare _queue?: Call[];
    declare _shadow?: ShadowRoot;
    declare _launcher?: HTMLButtonElement;

    connectedCallback(): void {
      if (this._shadow) return;
      const layout = this.getAttribute("layout");
      if (!layout) this.setAttribute("layout", "inline");
      const shadow = this.attachShadow({ mode: "open" });
      this._shadow = shadow;
      if (layout !== "floating") {
        this._load();
        return;
      }
      // What the widget kept of this agent on the previous page view (docs/widget.md#remembered-between-page-views):
      // the agent's accent, drawn on the launcher now, and whether the panel was open, which loads the widget now.
      let saved: { open?: unknown; accent?: unknown } | undefined;
      try {
        saved = JSON.parse(
          // localStorage, sessionStorage, or for `memory` nothing (undefined: the read throws).
          (window as unknown as Record<string, Storage>)[
            `${this.getAttribute("persist") ?? "local"}Storage`
          ]![`agent-threads:${this.getAttribute("agent-key") ?? "private"}`],
        );
      } catch {} // nothing kept, or storage blocked (sandboxed frames)
      adoptStyles(shadow, LAUNCHER_CSS + (saved?.accent ?? ""));
      let label = "Open chat";
      try {
        label = JSON.parse(this.getAttribute("strings") as string).open || label;
      } catch {} // no strings (null has no `open`) or not JSON
      const button = createLauncher(label);
      this._launcher = button;
      button.onclick = () => this._call("toggle", []);
      // Fetch the widget as soon as the visitor shows intent, so the first click opens at once.
      button.onpointerenter = button.onfocus = load;
      shadow.append(button);
      if (saved?.open) this._load();
    }

    _load(): void {
      load().then((module) => {
        if (!module || this._controller || !this._shadow) return;
        const controller = module.mount(this, this._shadow, { base, launcher: this._launcher });
        this._controller = controller;
        for (const [name, ...args] of this._queue?.splice(0) ?? []) invoke(controller, name, args);
      });
    }

    _call(name: Method, args: unknown[]): void {
      if (this._controller) {
        invoke(this._controller, name, args);
        return;
      }
      this._queue ??= [];
      this._queue.push([name, ...args]);
      if (EAGER.includes(name)) this._load();
    }
  }
  for (const name of METHODS) {
    (AgentThread.prototype as unknown as Record<Method, unknown>)[name] = function (
      this: AgentThread,
      ...args: unknown[]
    ) {
      this._call(name, args);
    };
  }
  customElements.define("agent-thread", AgentThread);

  type Primary = HTMLElement & Record<Method, (...a: unknown[]) => void>;
  let primary: Primary | undefined;
  let listeners: [string, Listener][] = [];
  const api: Api = {
    q: { push: (call) => run(call) },
    init(config = {}) {
      if (primary) return;
      const el = document.createElement("agent-thread") as Primary;
      primary = el;
      for (const [key, value] of Object.entries(config)) {
        if (key === "target" || value == null || typeof value === "function") continue;
        const name = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
        el.setAttribute(name, typeof value === "string" ? value : JSON.stringify(value));
      }
      if (!el.hasAttribute("layout")) el.setAttribute("layout", "floating");
      for (const event of EVENTS) {
        el.addEventListener(event, (e) => {
          for (const [name, fn] of listeners) if (name === event) fn((e as CustomEvent).detail);
        });
      }
      const place = () => {
        const target = typeof config.target === "string" ? document.querySelector(config.target) : null;
        (target ?? document.body).append(el);
      };
      if (document.body) place();
      else addEventListener("DOMContentLoaded", place);
    },
    on: (event, fn) => void listeners.push([event, fn]),
    off: (event, fn) => {
      listeners = listeners.filter(([name, f]) => name !== event || f !== fn);
    },
  };
  for (const name of METHODS) {
    api[name] = (...args: unknown[]) => {
      api.init();
      primary?.[name](...args);
    };
  }
  function run([name, ...args]: Call): void {
    const fn = api[name];
    if (typeof fn === "function") fn(...args);
    else console.warn("agent-threads: unknown command", name);
  }

  const queued = w.AgentThreads?.q;
  w.AgentThreads = api;
  const data = script?.dataset;
  if (data?.agentKey || data?.layout) api.init({ ...data });
  if (Array.isArray(queued)) for (const call of queued) if (Array.isArray(call)) run(call as Call);
}

main();
