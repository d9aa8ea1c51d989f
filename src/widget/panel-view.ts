// The chrome around the transcript: the launcher opening and closing the panel, title, busy, notices, announcements.
import { MAX_MESSAGE_CHARS } from "./constants";
import { h, icon } from "./dom";
import { buildPanel, type Panel } from "./panel";
import type { Strings } from "./strings";

/** How long the announcer stays empty before new text, so screen readers notice the change. */
const ANNOUNCE_DELAY_MS = 60;

export class PanelView {
  readonly panel: Panel;
  readonly launcher: HTMLButtonElement | null;
  readonly #host: HTMLElement;
  readonly #shadow: ShadowRoot;
  readonly #s: Strings;
  readonly #floating: boolean;
  #open = false;
  #unlockScroll: (() => void) | undefined;

  constructor(
    host: HTMLElement,
    shadow: ShadowRoot,
    s: Strings,
    floating: boolean,
    launcher: HTMLButtonElement | null | undefined,
  ) {
    this.#host = host;
    this.#shadow = shadow;
    this.#s = s;
    this.#floating = floating;
    // The loader draws a floating element's launcher before the widget loads (src/widget/embed.ts); mounted on its
    // own (docs/widget.md#host-api), the widget draws a plainer one.
    this.launcher = floating
      ? (launcher ??
        h(
          "button",
          { type: "button", class: "launcher", part: "launcher", "aria-expanded": "false" },
          icon("chat"),
        ))
      : null;
    const panel = buildPanel(s, floating, MAX_MESSAGE_CHARS);
    this.panel = panel;
    if (this.launcher !== null) {
      const button = this.launcher;
      button.append(icon("close"));
      button.setAttribute("aria-controls", "at-panel");
      button.setAttribute("aria-label", s.open);
      if (!button.isConnected) shadow.append(button);
    }
    panel.root.hidden = floating;
    shadow.append(panel.root);
  }

  get isOpen(): boolean {
    return this.#open;
  }

  /** Opens a floating panel; false when there is nothing to open (inline, or already open). */
  show(): boolean {
    if (!this.#floating || this.#open) return false;
    this.#open = true;
    this.panel.root.hidden = false;
    this.#host.setAttribute("open", "");
    this.launcher?.setAttribute("aria-expanded", "true");
    this.launcher?.setAttribute("aria-label", this.#s.close);
    this.launcher?.removeAttribute("data-unread");
    this.#followViewport();
    return true;
  }

  /** Closes a floating panel, handing focus back to the launcher; false when it was not open. */
  hide(returnFocus: boolean): boolean {
    if (!this.#floating || !this.#open) return false;
    const focusInside = this.#shadow.activeElement !== null && this.#shadow.activeElement !== this.launcher;
    this.#open = false;
    this.panel.root.hidden = true;
    this.#host.removeAttribute("open");
    this.launcher?.setAttribute("aria-expanded", "false");
    this.launcher?.setAttribute("aria-label", this.#s.open);
    this.#unlockScroll?.();
    this.#unlockScroll = undefined;
    if (returnFocus || focusInside) this.launcher?.focus();
    return true;
  }

  /** A finished reply while a floating panel is closed: the launcher shows a dot. */
  markUnread(): void {
    if (this.#floating && !this.#open) this.launcher?.setAttribute("data-unread", "");
  }

  setTitle(agentName: string): void {
    const name = this.#s.title || agentName || this.#s.agent;
    const initial = Array.from(name.trim())[0]?.toUpperCase() ?? "?";
    this.panel.title.textContent = name;
    this.panel.introTitle.textContent = name;
    this.panel.avatar.textContent = initial;
    this.panel.introAvatar.textContent = initial;
  }

  setBusy(busy: boolean): void {
    const p = this.panel;
    p.log.setAttribute("aria-busy", String(busy));
    p.stop.hidden = !busy;
    p.send.hidden = busy;
  }

  notice(text: string, retry: boolean): void {
    const p = this.panel;
    p.noticeText.textContent = text;
    p.retry.hidden = !retry;
    p.notice.hidden = false;
  }

  announce(text: string): void {
    const announcer = this.panel.announcer;
    announcer.textContent = "";
    setTimeout(() => {
      announcer.textContent = text;
    }, ANNOUNCE_DELAY_MS);
  }

  destroy(): void {
    this.#unlockScroll?.();
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
}
