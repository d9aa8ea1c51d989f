// "Past conversations": the header button, always there; the list behind it (./past-view.ts) is a separate asset,
// imported on the first click, since most visits never open it.
import { iconButton, lazy, pathIcon } from "./dom";
import type { PastView } from "./past-view";
import type { Strings } from "./strings";

/** Path of this build's content-hashed past-view asset; substituted by scripts/build-widget.mjs. */
declare const __PAST_VIEW__: string | undefined;

const PAST_VIEW = typeof __PAST_VIEW__ === "string" ? __PAST_VIEW__ : "";
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
  /** The list's code could not be loaded (offline, or a script-src that refuses it); a later click tries again. */
  unavailable(): void;
}

export interface Past {
  button: HTMLButtonElement;
  close(focusButton: boolean): void;
}

/** Puts its header button before `anchor`; the list goes after `log`, which it replaces while open. */
export function pastConversations(d: PastDeps, anchor: HTMLElement, log: HTMLElement): Past {
  const button = iconButton(d.strings.pastConversations, pathIcon("past", CLOCK), {
    part: "past-conversations",
    "aria-expanded": "false",
    "aria-controls": "at-past",
  });
  let view: PastView | undefined;
  let loading = false;
  const load = lazy<typeof import("./past-view")>(PAST_VIEW, d.base);
  button.onclick = async () => {
    if (view === undefined && !loading) {
      loading = true;
      const module = await load();
      loading = false;
      if (module === null) return d.unavailable();
      view = module.pastView(d, button, log);
    }
    view?.click();
  };
  anchor.before(button);
  return { button, close: (focusButton) => view?.close(focusButton) };
}
