// "Past conversations": the visitor's threads from GET /v1/me/threads in place of the log, and reopening one.
import { type PastThread, parsePastThreads } from "./control-rules";
import { h, iconButton, pathIcon } from "./dom";
import type { Strings } from "./strings";

const CLOCK = "M12 7v5l3 2M21 12a9 9 0 1 1-18 0 9 9 0 0 1 18 0";

export interface PastDeps {
  strings: Strings;
  /** Origin of the service. */
  base: string;
  /** A live launch token, which `/v1/me/threads` takes as its Bearer credential. */
  token(): Promise<string | undefined>;
  current(): string | undefined;
  choose(threadId: string): void;
  announce(text: string): void;
}

export interface Past {
  button: HTMLButtonElement;
  close(focusButton: boolean): void;
}

/** Puts its header button before `anchor` and its list after `log`, which the list replaces while open. */
export function pastConversations(d: PastDeps, anchor: HTMLElement, log: HTMLElement): Past {
  const s = d.strings;
  const label = s.pastConversations;
  const button = iconButton(label, pathIcon("past", CLOCK), {
    part: "past-conversations",
    "aria-expanded": "false",
    "aria-controls": "at-past",
  });
  const note = h("p", { tabindex: "-1" });
  const list = h("ul", { "aria-label": label });
  const view = h("div", { class: "past", id: "at-past" }, note, list);
  let shown = 0;

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

  const open = async (): Promise<void> => {
    const mine = ++shown;
    toggle(true);
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
  button.onclick = () => (view.hidden ? void open() : close(true));
  anchor.before(button);
  log.after(view);
  return { button, close };
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
