// The controls on messages: retry the last reply, edit the last own message, thumbs up/down on the model's replies. A
// separate asset the widget imports once the conversation has a message (docs/widget.md#conversation-controls).
import type { ClientFrame } from "../shared/protocol";
import { MAX_MESSAGE_CHARS } from "./constants";
import { controlsFor, nextRating, type Rating } from "./control-rules";
import { ACTIONS_CSS } from "./controls-styles";
import { newClientMessageId } from "./conversation";
import { h, icon, iconButton, pathIcon } from "./dom";
import type { Strings } from "./strings";
import type { Item } from "./transcript";

const THUMB =
  "M7 11v9H4v-9zm0 0 4-8c1.6 0 2.6 1.2 2.2 2.9L12.5 10H19a2 2 0 0 1 2 2.3l-1.3 6a2 2 0 0 1-2 1.7H7";
const RETRY = "M20 11a8 8 0 1 0-2.3 5.7M20 4v7h-7";

export interface ActionsDeps {
  /** The widget's shadow root, which takes the controls' stylesheet. */
  root: ShadowRoot;
  strings: Strings;
  items(): readonly Item[];
  /** Retry and edit need a thread with no reply running, answered by the model (not a person). */
  canFork(): boolean;
  fork(frame: ClientFrame, from: Item, pending?: { clientMessageId: string; text: string }): boolean;
  send(frame: ClientFrame): boolean;
  announce(text: string): void;
  focusInput(): void;
}

/** Returns `refresh()`, which shows or hides each message's controls (made once per message, so focus stays). */
export function messageActions(d: ActionsDeps): () => void {
  const s = d.strings;
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(ACTIONS_CSS);
  d.root.adoptedStyleSheets = [...d.root.adoptedStyleSheets, sheet];
  const bars = new WeakMap<Item, HTMLButtonElement[]>();
  const ratings = new Map<string, Rating>();
  let editing = false;

  const refresh = (): void => {
    const items = d.items();
    const canFork = d.canFork() && !editing;
    const lastUser = [...items].reverse().find((i) => i.role === "user");
    for (const item of items) {
      const show = controlsFor(item, items[items.length - 1], lastUser, canFork);
      let bar = bars.get(item);
      if (bar === undefined) {
        if (!show.rate && !show.retry && !show.edit) continue;
        bar = makeBar(item);
      }
      const [a, b, c] = bar as [HTMLButtonElement, HTMLButtonElement?, HTMLButtonElement?];
      if (b === undefined || c === undefined) a.hidden = !show.edit;
      else {
        a.hidden = b.hidden = !show.rate;
        c.hidden = !show.retry;
        const rating = ratings.get(item.entryId ?? "");
        a.setAttribute("aria-pressed", String(rating === "up"));
        b.setAttribute("aria-pressed", String(rating === "down"));
      }
      (a.parentElement as HTMLElement).hidden = bar.every((button) => button.hidden);
    }
  };

  const button = (label: string, child: SVGSVGElement, onclick: () => void): HTMLButtonElement => {
    const el = iconButton(label, child);
    el.onclick = onclick;
    return el;
  };

  const makeBar = (item: Item): HTMLButtonElement[] => {
    const bar =
      item.role === "user"
        ? [button(s.editMessage, icon("compose"), () => edit(item))]
        : [
            button(s.goodReply, pathIcon("thumb-up", THUMB), () => rate(item, "up")),
            button(s.badReply, pathIcon("thumb-down", THUMB), () => rate(item, "down")),
            button(s.retryReply, pathIcon("retry", RETRY), () => retry(item)),
          ];
    item.el.append(h("div", { class: "acts" }, ...bar));
    bars.set(item, bar);
    return bar;
  };

  const rate = (item: Item, clicked: Rating): void => {
    const entryId = item.entryId as string;
    const rating = nextRating(ratings.get(entryId), clicked);
    if (!d.send({ type: "feedback", entryId, rating })) return;
    if (rating === null) ratings.delete(entryId);
    else {
      ratings.set(entryId, rating);
      d.announce(s.feedbackThanks);
    }
    refresh();
  };

  const retry = (item: Item): void => {
    // A reply that failed before anything was stored has no entry: regenerate from the message it answers.
    const items = d.items();
    const entryId = item.entryId ?? items[items.indexOf(item) - 1]?.entryId;
    if (entryId !== undefined && d.fork({ type: "regenerate", entryId }, item)) d.focusInput();
  };

  const edit = (item: Item): void => {
    const entryId = item.entryId as string;
    const input = h("textarea", {
      "aria-label": s.editLabel,
      dir: "auto",
      maxlength: String(MAX_MESSAGE_CHARS),
      rows: "2",
    });
    input.value = item.text;
    const cancel = h("button", { type: "button" }, s.cancel);
    const save = h("button", { type: "button" }, s.save);
    const editor = h("div", { class: "edit" }, input, h("div", {}, cancel, save));
    const close = (): void => {
      editor.remove();
      item.bubble.hidden = editing = false;
      refresh();
      bars.get(item)?.[0]?.focus();
    };
    const submit = (): void => {
      const text = input.value.trim();
      if (text === "" || text === item.text) {
        close();
        return;
      }
      const clientMessageId = newClientMessageId();
      editing = false;
      if (d.fork({ type: "edit", entryId, text, clientMessageId }, item, { clientMessageId, text }))
        d.focusInput();
      else editing = true;
    };
    cancel.onclick = close;
    save.onclick = submit;
    input.onkeydown = (event) => {
      if (event.key === "Escape") {
        event.stopPropagation(); // Escape cancels the edit; it does not close the panel
        close();
      } else if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        submit();
      }
    };
    editing = item.bubble.hidden = true;
    refresh();
    item.el.append(editor);
    input.focus();
  };

  return refresh;
}
