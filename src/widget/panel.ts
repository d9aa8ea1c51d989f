// The panel's static DOM: a labelled dialog with header, log, notice, composer and a polite announcer.
import { h, icon, iconButton } from "./dom";
import type { Strings } from "./strings";

export interface Panel {
  root: HTMLElement;
  avatar: HTMLElement;
  title: HTMLElement;
  status: HTMLElement;
  statusText: HTMLElement;
  newButton: HTMLButtonElement;
  closeButton: HTMLButtonElement;
  log: HTMLElement;
  intro: HTMLElement;
  introAvatar: HTMLElement;
  introTitle: HTMLElement;
  pill: HTMLButtonElement;
  notice: HTMLElement;
  noticeText: HTMLElement;
  retry: HTMLButtonElement;
  form: HTMLFormElement;
  input: HTMLTextAreaElement;
  send: HTMLButtonElement;
  stop: HTMLButtonElement;
  announcer: HTMLElement;
}

export function buildPanel(s: Strings, floating: boolean, maxChars: number): Panel {
  const avatar = h("div", { class: "avatar", "aria-hidden": "true" });
  const title = h("p", { class: "title", id: "at-title" });
  const statusText = h("span");
  const status = h("p", { class: "status", role: "status" }, h("span", { class: "dot" }), statusText);
  const newButton = iconButton(s.newConversation, icon("compose"), { part: "new-conversation" });
  const closeButton = iconButton(s.close, icon("close"), { part: "close" });
  closeButton.hidden = !floating;
  const header = h(
    "div",
    { class: "header", part: "header" },
    avatar,
    h("div", { class: "titles" }, title, status),
    newButton,
    closeButton,
  );

  const introAvatar = h("div", { class: "avatar", "aria-hidden": "true" });
  const introTitle = h("strong");
  const intro = h("div", { class: "intro" }, introAvatar, introTitle, h("p", { dir: "auto" }, s.greeting));
  // The log itself stays silent (aria-live off): the announcer below speaks once per reply, never per token.
  const log = h(
    "div",
    {
      class: "log",
      part: "log",
      role: "log",
      "aria-live": "off",
      "aria-busy": "false",
      "aria-labelledby": "at-title",
      tabindex: "0",
    },
    intro,
  );
  const pill = h("button", { class: "pill", type: "button" }, icon("down"), s.newMessages);
  pill.hidden = true;

  const noticeText = h("span");
  const retry = h("button", { type: "button" }, s.retry);
  const notice = h("div", { class: "notice", role: "alert", part: "notice" }, noticeText, retry);
  notice.hidden = true;
  const input = h("textarea", {
    part: "input",
    rows: "1",
    "aria-label": s.inputLabel,
    placeholder: s.placeholder,
    dir: "auto",
    maxlength: String(maxChars),
    enterkeyhint: "send",
  });
  const send = iconButton(s.send, icon("send"), { class: "send", type: "submit", part: "send" });
  const stop = iconButton(s.stop, icon("stop"), { class: "send", part: "stop" });
  stop.hidden = true;
  const form = h("form", { class: "composer", part: "composer" }, input, send, stop);
  const announcer = h("div", { class: "sr", "aria-live": "polite", "aria-atomic": "true" });

  const root = h(
    "div",
    {
      class: "panel",
      part: "panel",
      id: "at-panel",
      role: floating ? "dialog" : "region",
      "aria-labelledby": "at-title",
    },
    header,
    h("div", { class: "body" }, log, pill),
    h("div", { class: "foot" }, notice, form),
    announcer,
  );
  return {
    root,
    avatar,
    title,
    status,
    statusText,
    newButton,
    closeButton,
    log,
    intro,
    introAvatar,
    introTitle,
    pill,
    notice,
    noticeText,
    retry,
    form,
    input,
    send,
    stop,
    announcer,
  };
}
