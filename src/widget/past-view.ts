// The "past conversations" list, a separate asset the widget imports on the first click of its header button: the
// visitor's threads from GET /v1/me/threads in place of the log, reopening one, and "Delete my conversations"
// (DELETE /v1/me/threads, after a confirm step), which erases them all and starts a fresh conversation.
import { type PastThread, parsePastThreads } from "./control-rules";
import { h } from "./dom";
import type { PastDeps } from "./past-conversations";

export const PAST_CSS = `
.past{display:flex;flex-direction:column;gap:6px;flex:1;overflow-y:auto;padding:8px}
.past ul{list-style:none;margin:0;padding:0}
.past p{margin:8px;color:var(--at-muted)}
.past button{display:block;width:100%;padding:8px 12px;border:0;border-radius:12px;background:none;color:inherit;font:inherit;text-align:start}
.past button:hover,.past [aria-current]{background:var(--at-surface)}
.past span{display:block;font-weight:600}
.past time{font-size:12px;color:var(--at-muted)}
.past .erase{margin-top:auto;color:var(--at-muted);text-align:center;text-decoration:underline}
.past .erase[aria-pressed]{color:inherit;font-weight:600}
`;

/** The delete action's texts: English only, kept here rather than in the widget's string table (docs/widget.md). */
const ERASE_STRINGS = {
  deleteMine: "Delete my conversations",
  deleteConfirm: "Delete all your conversations here? This cannot be undone.",
  deleteYes: "Delete them",
  cancel: "Cancel",
  deleted: "Your conversations were deleted.",
  deleteFailed: "Your conversations could not be deleted. Please try again.",
};

export interface PastView {
  /** The header button was clicked: opens the list, or closes it when open. */
  click(): void;
  close(focusButton: boolean): void;
}

/** Puts the (hidden) list after `log`, which it replaces while open; `button` shows whether it is open. */
export function pastView(d: PastDeps, button: HTMLButtonElement, log: HTMLElement): PastView {
  const s = d.strings;
  const e = ERASE_STRINGS;
  const note = h("p", { tabindex: "-1" });
  const list = h("ul", { "aria-label": s.pastConversations });
  const erase = h("button", { type: "button", class: "erase" }, e.deleteMine);
  const cancel = h("button", { type: "button", class: "erase" }, e.cancel);
  const view = h("div", { class: "past", id: "at-past" }, note, list, erase, cancel);
  const root = log.getRootNode() as ShadowRoot;
  const sheet = new CSSStyleSheet();
  let shown = 0;
  sheet.replaceSync(PAST_CSS);
  root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];

  const say = (text: string): void => {
    note.textContent = text;
    note.hidden = text === "";
  };
  const toggle = (open: boolean): void => {
    view.hidden = !open;
    log.hidden = open;
    button.setAttribute("aria-expanded", String(open));
  };
  const close = (focusButton: boolean): void => {
    if (view.hidden) return;
    toggle(false);
    if (focusButton) button.focus();
  };

  /** Step one shows the question; step two deletes, then the widget forgets its threads and starts afresh. */
  const confirming = (on: boolean): void => {
    cancel.hidden = !on;
    erase.textContent = on ? e.deleteYes : e.deleteMine;
    erase.toggleAttribute("aria-pressed", on);
    if (on) say(e.deleteConfirm);
  };
  erase.onclick = async () => {
    if (cancel.hidden) {
      confirming(true);
      return d.announce(e.deleteConfirm);
    }
    confirming(false);
    erase.hidden = true;
    if (await eraseAll(d)) {
      close(false);
      d.choose("");
      d.announce(e.deleted);
    } else {
      say(e.deleteFailed);
      d.announce(e.deleteFailed);
      erase.hidden = false;
    }
  };
  cancel.onclick = () => {
    confirming(false);
    say("");
    erase.focus();
  };

  const open = async (): Promise<void> => {
    const mine = ++shown;
    toggle(true);
    confirming(false);
    erase.hidden = true;
    list.replaceChildren();
    say(s.pastLoading);
    note.focus();
    const threads = await fetchThreads(d);
    if (mine !== shown || view.hidden) return;
    const current = d.current();
    for (const thread of threads ?? []) {
      const pick = h(
        "button",
        { type: "button", "aria-current": thread.threadId === current ? "true" : undefined },
        h("span", { dir: "auto" }, thread.title ?? s.untitled),
        h("time", { datetime: thread.at }, thread.at && new Date(thread.at).toLocaleString()),
      );
      pick.onclick = () => {
        close(false);
        if (thread.threadId !== current) d.choose(thread.threadId);
      };
      list.append(h("li", {}, pick));
    }
    say(threads === null ? s.pastFailed : threads.length === 0 ? s.pastEmpty : "");
    erase.hidden = !threads?.length;
    if (note.hidden) list.querySelector("button")?.focus();
    else d.announce(note.textContent as string);
  };

  view.hidden = true;
  view.onkeydown = (event) => {
    if (event.key === "Escape") {
      event.stopPropagation(); // Escape leaves the list; a second one closes the panel
      close(true);
    }
  };
  log.after(view);
  return { click: () => (view.hidden ? void open() : close(true)), close };
}

async function fetchThreads(d: PastDeps): Promise<PastThread[] | null> {
  const token = await d.token();
  if (token === undefined) return null;
  try {
    const res = await fetch(new URL("/v1/me/threads", d.base), {
      headers: { Authorization: `Bearer ${token}` },
      credentials: "omit",
      cache: "no-store",
    });
    return res.ok ? parsePastThreads(await res.json()) : null;
  } catch {
    return null;
  }
}

/**
 * Erases every thread of this visitor with this agent; a 202 (more than one call erases) is repeated until the job
 * answers 200. The visitor token is revoked by the service, so the next launch starts a new visitor.
 */
async function eraseAll(d: PastDeps): Promise<boolean> {
  const token = await d.token();
  if (token === undefined) return false;
  try {
    for (let calls = 0; calls < 20; calls++) {
      const res = await fetch(new URL("/v1/me/threads", d.base), {
        method: "DELETE",
        headers: { Authorization: `Bearer ${token}` },
        credentials: "omit",
      });
      if (res.status !== 202) return res.ok;
    }
  } catch {}
  return false;
}
