// Attachments in the widget, a separate asset imported only for an agent that takes them or a message that carries
// them (docs/widget.md#attachments): the attach button, paste and drag-and-drop, the tray of files with upload
// progress, retry and errors, and the files shown on messages (images fetched with the launch token, never a token in
// a URL).
import { ATTACH_STRINGS, type AttachStrings } from "./attach-strings";
import type { Connection } from "./connection";
import { h, iconButton, pathIcon } from "./dom";
import { loadLocale } from "./locale";
import type { PanelView } from "./panel-view";
import type { Presentation } from "./presentation";
import { format, layerOnto } from "./strings";

/** What the server answers an upload with, and what user entries carry (`attachments`). */
export interface FileRef {
  id: string;
  sha256: string;
  mediaType: string;
  size: number;
  name: string;
}

/** The agent's attachment policy as its presentation sends it. */
export interface Policy {
  accept: string[];
  maxBytes: number;
  maxFiles: number;
}

export interface AttachDeps {
  /** The panel (in the widget's shadow root, which takes this module's stylesheet), its notices and announcer. */
  view: PanelView;
  connection: Connection;
  /** Origin of the service. */
  base: string;
}

export interface Attacher {
  set(presentation: Presentation): void;
  /**
   * The uploaded files for the message being sent, emptying the tray (undefined: none); null (and the tray says why)
   * while a file is still uploading or has failed.
   */
  take(): FileRef[] | null | undefined;
}

export const ATTACH_CSS = `
.tray,.files{display:flex;flex-wrap:wrap;gap:6px;margin:0 0 8px;padding:0;list-style:none}
.files{margin:6px 0 0;justify-content:flex-end}
.tray li,.files li{position:relative;display:flex;align-items:center;gap:6px;max-width:100%;padding:4px;border:1px solid var(--at-border);border-radius:10px;background:var(--at-bg);color:var(--at-fg);font-size:12.5px}
.tray img,.files img{display:block;width:56px;height:56px;object-fit:cover;border-radius:7px}
.files img{width:120px;height:auto;max-height:160px}
.chip{all:unset;display:flex;flex-direction:column;max-width:160px;padding:2px 6px;cursor:pointer}
.chip b,.chip span{overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.chip span,.tray .err{color:var(--at-muted);font-size:11.5px}
.tray .err{color:var(--at-fg);font-weight:600;max-width:160px}
.tray progress{position:absolute;inset:auto 6px 4px;width:calc(100% - 12px);height:4px}
.tray .icon{width:24px;height:24px}
.tray .i{width:14px;height:14px}
.tray li>button:not(.icon){all:unset;cursor:pointer;font-weight:600;text-decoration:underline}
.panel.drop{outline:2px dashed var(--at-accent);outline-offset:-6px}
.attach{order:-1}
`;

const CLIP =
  "M21 11l-8.5 8.5a5 5 0 0 1-7-7L14 4a3.4 3.4 0 0 1 4.8 4.8L10.3 17.3a1.7 1.7 0 0 1-2.4-2.4L15.5 7.3";
const CLOSE = "M6 6l12 12M18 6L6 18";

/** Object URLs of attachment bytes this page has: the visitor's own files, and images fetched once with the token. */
const urls = new Map<string, Promise<string | null>>();
const styled = new WeakSet<ShadowRoot>();

const isImage = (type: string) => type.startsWith("image/");

function style(d: AttachDeps): void {
  const root = d.view.panel.root.getRootNode() as ShadowRoot;
  if (styled.has(root)) return;
  styled.add(root);
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(ATTACH_CSS);
  root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
}

/** `1.5 MB`, `12 KB`: what a person reads, not bytes. */
export function sizeText(bytes: number): string {
  return bytes >= 1048576
    ? `${(bytes / 1048576).toFixed(bytes >= 10485760 ? 0 : 1)} MB`
    : `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

/** This module's texts in the panel's language: English, the translation, the agent's, then the host's strings. */
let t: AttachStrings = ATTACH_STRINGS;
let agentStrings: unknown;
/** Redraws labels once the texts change (a translation arriving after this module). */
const relabels = new Set<() => void>();
let localized: Promise<void> | undefined;

function localize(d: AttachDeps): Promise<void> {
  const root = d.view.panel.root;
  const host = (root.getRootNode() as ShadowRoot).host;
  return loadLocale(root.lang || "en", d.base).then((bundle) => {
    t = layerOnto(ATTACH_STRINGS, [bundle, agentStrings, host?.getAttribute("strings")]);
    for (const relabel of relabels) relabel();
  });
}

/** Follows the panel's `lang`, which the widget sets each time it applies a translation. */
function follow(d: AttachDeps): void {
  if (localized !== undefined) return;
  localized = localize(d);
  new MutationObserver(() => void localize(d)).observe(d.view.panel.root, {
    attributes: true,
    attributeFilter: ["lang"],
  });
}

/** Why an upload answered `status` (and `reason`), in the visitor's words (docs/widget.md#attachments). */
export function refusal(
  t: AttachStrings,
  status: number,
  reason: string | undefined,
  name: string,
  maxBytes: number,
): string {
  if (status === 413) return format(t.fileTooLarge, { name, max: sizeText(maxBytes) });
  if (status === 415) return format(t.fileType, { name });
  if (status === 409) return t.fileLimit;
  if (status === 429) return reason === "storage_quota" ? t.storageFull : t.uploadBusy;
  return format(t.uploadFailed, { name });
}

interface Pending {
  file: File;
  name: string;
  li: HTMLLIElement;
  /** Its picture (an object URL of the visitor's own file) or its chip, made once. */
  thumb: HTMLElement;
  ref?: FileRef;
  failed?: boolean;
  xhr?: XMLHttpRequest;
}

/** `/v1/threads/:threadId/attachments` (upload), or one attachment's download with `id`. */
const attachmentUrl = (d: AttachDeps, threadId: string, id?: string) =>
  new URL(
    `/v1/threads/${encodeURIComponent(threadId)}/attachments${id === undefined ? "" : `/${encodeURIComponent(id)}`}`,
    d.base,
  ).href;

const attachers = new WeakMap<AttachDeps, Attacher>();

/**
 * Offers attaching files in the composer under the presentation's policy (or withdraws it when there is none); returns
 * the handle the widget sends with. Made once per widget, applied again for each presentation.
 */
export function attach(d: AttachDeps, presentation: Presentation): Attacher {
  let attacher = attachers.get(d);
  if (attacher === undefined) {
    attacher = composer(d);
    attachers.set(d, attacher);
  }
  attacher.set(presentation);
  return attacher;
}

function composer(d: AttachDeps): Attacher {
  style(d);
  follow(d);
  const { panel } = d.view;
  let policy: Policy | undefined;
  let pending: Pending[] = [];

  const button = iconButton(t.attach, pathIcon("clip", CLIP), { class: "icon attach", part: "attach" });
  const picker = h("input", {
    type: "file",
    multiple: "",
    hidden: "",
    tabindex: "-1",
    "aria-hidden": "true",
  });
  const tray = h("ul", { class: "tray", part: "attachments", "aria-label": t.attachments });
  tray.hidden = true;
  button.hidden = true;
  panel.form.prepend(button, picker);
  panel.form.before(tray);
  button.onclick = () => picker.click();
  picker.onchange = () => {
    add([...(picker.files ?? [])]);
    picker.value = "";
  };
  relabels.add(() => {
    button.setAttribute("aria-label", t.attach);
    button.title = t.attach;
    tray.setAttribute("aria-label", t.attachments);
  });

  const hasFiles = (e: DragEvent) => policy !== undefined && !!e.dataTransfer?.types.includes("Files");
  panel.root.addEventListener("dragover", (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    panel.root.classList.add("drop");
  });
  panel.root.addEventListener("dragleave", (e) => {
    if (!panel.root.contains(e.relatedTarget as Node | null)) panel.root.classList.remove("drop");
  });
  panel.root.addEventListener("drop", (e) => {
    panel.root.classList.remove("drop");
    if (!hasFiles(e)) return;
    e.preventDefault();
    add([...(e.dataTransfer?.files ?? [])]);
  });
  panel.input.addEventListener("paste", (e) => {
    const files = [...(e.clipboardData?.files ?? [])];
    if (policy === undefined || files.length === 0) return;
    e.preventDefault();
    add(files);
  });

  /** Checks each file against the policy before any byte leaves: the server checks again. */
  function add(files: File[]): void {
    const p = policy;
    if (p === undefined) return;
    for (const file of files) {
      const name = file.name || "file";
      let problem = "";
      if (pending.length >= p.maxFiles) problem = t.fileLimit;
      else if (!p.accept.includes(file.type)) problem = format(t.fileType, { name });
      else if (file.size > p.maxBytes) problem = format(t.fileTooLarge, { name, max: sizeText(p.maxBytes) });
      if (problem !== "") {
        d.view.notice(problem, false);
        continue;
      }
      const li = h("li", { part: "attachment" });
      const thumb = isImage(file.type)
        ? h("img", { src: URL.createObjectURL(file), alt: name })
        : h("span", { class: "chip" }, h("b", {}, name), h("span", {}, sizeText(file.size)));
      const item: Pending = { file, name, li, thumb };
      pending.push(item);
      tray.append(li);
      upload(item);
    }
    tray.hidden = pending.length === 0;
  }

  function remove(item: Pending): void {
    item.xhr?.abort();
    pending = pending.filter((p) => p !== item);
    item.li.remove();
    tray.hidden = pending.length === 0;
    if (item.thumb instanceof HTMLImageElement) URL.revokeObjectURL(item.thumb.src);
    panel.input.focus();
  }

  /** The tray item: a thumbnail or a file chip, then progress, an error with "try again", or nothing; and remove. */
  function draw(item: Pending, progress?: number, error?: string): void {
    const { name } = item;
    const close = iconButton(format(t.removeFile, { name }), pathIcon("close", CLOSE));
    close.onclick = () => remove(item);
    const parts: Node[] = [item.thumb];
    if (error !== undefined) {
      const again = h("button", { type: "button" }, t.retry);
      again.onclick = () => upload(item);
      parts.push(h("span", { class: "err" }, error), again);
    } else if (progress !== undefined) {
      parts.push(
        h("progress", { max: "1", value: String(progress), "aria-label": format(t.uploading, { name }) }),
      );
    }
    item.li.replaceChildren(...parts, close);
  }

  async function upload(item: Pending): Promise<void> {
    item.failed = false;
    draw(item, 0);
    const { connection } = d;
    const [token, threadId] = [await connection.freshToken(), connection.threadId];
    const done = (status: number, body: unknown) => {
      item.xhr = undefined;
      if (!pending.includes(item)) return;
      const ref = (body as { id?: unknown } | null)?.id !== undefined ? (body as FileRef) : undefined;
      if (status === 201 && ref !== undefined) {
        item.ref = ref;
        if (item.thumb instanceof HTMLImageElement) urls.set(ref.id, Promise.resolve(item.thumb.src));
        draw(item);
        d.view.announce(format(t.uploaded, { name: item.name }));
        return;
      }
      const reason = (body as { error?: { reason?: string } } | null)?.error?.reason;
      const text = refusal(t, status, reason, item.name, policy?.maxBytes ?? item.file.size);
      item.failed = true;
      draw(item, undefined, text);
      d.view.announce(text);
    };
    if (token === undefined || threadId === undefined) return done(0, null);
    const xhr = new XMLHttpRequest();
    item.xhr = xhr;
    xhr.open("POST", attachmentUrl(d, threadId));
    xhr.setRequestHeader("Authorization", `Bearer ${token}`);
    xhr.setRequestHeader("Content-Type", item.file.type);
    // Header values are bytes: a name that is not plain ASCII travels percent-encoded (docs/api.md#attachments).
    xhr.setRequestHeader("X-Attachment-Name", encodeURIComponent(item.name));
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && item.xhr === xhr) {
        const bar = item.li.querySelector("progress");
        bar?.setAttribute("value", String(e.loaded / e.total));
      }
    };
    xhr.onload = () => {
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {}
      done(xhr.status, body);
    };
    xhr.onerror = () => done(0, null);
    xhr.send(item.file);
  }

  return {
    set(presentation) {
      policy = presentation.attachments;
      button.hidden = policy === undefined;
      picker.setAttribute("accept", policy?.accept.join(",") ?? "");
      if (agentStrings !== presentation.strings) {
        agentStrings = presentation.strings;
        void localize(d);
      }
    },
    take() {
      if (pending.some((item) => item.ref === undefined)) {
        d.view.notice(t.uploadsPending, false);
        return null;
      }
      const refs = pending.map((item) => item.ref as FileRef);
      pending = [];
      tray.replaceChildren();
      tray.hidden = true;
      if (refs[0] === undefined) return undefined;
      // The widget queues the message as this returns: its files show on it at once, before the server confirms it.
      queueMicrotask(() => {
        const mine = [...panel.log.querySelectorAll<HTMLElement>("[part~=message-user]")].pop();
        if (mine) showFiles(d, mine, refs);
      });
      return refs;
    },
  };
}

const isRef = (v: unknown): v is FileRef => {
  const r = v as FileRef;
  return typeof r?.id === "string" && typeof r.name === "string" && typeof r.mediaType === "string";
};

/** The object URL of an attachment's bytes, fetched once with the launch token (never a token in a URL). */
function bytesUrl(d: AttachDeps, id: string): Promise<string | null> {
  let url = urls.get(id);
  if (url === undefined) {
    url = (async () => {
      const token = await d.connection.freshToken();
      const threadId = d.connection.threadId;
      if (token === undefined || threadId === undefined) return null;
      const res = await fetch(attachmentUrl(d, threadId, id), {
        headers: { Authorization: `Bearer ${token}` },
        credentials: "omit",
      });
      return res.ok ? URL.createObjectURL(await res.blob()) : null;
    })().catch(() => null);
    url.then((u) => u === null && urls.delete(id));
    urls.set(id, url);
  }
  return url;
}

/** Draws a user message's attachments under its bubble: images as pictures, other files as a chip that downloads. */
export function showFiles(d: AttachDeps, el: HTMLElement, refs: unknown[]): void {
  style(d);
  follow(d);
  const list = h("ul", { class: "files", "aria-label": t.attached });
  for (const ref of refs.filter(isRef)) {
    const li = h("li", { part: "attachment" });
    if (isImage(ref.mediaType)) {
      const img = h("img", { alt: ref.name });
      void bytesUrl(d, ref.id).then((u) => u && img.setAttribute("src", u));
      li.append(img);
    } else {
      const chip = h(
        "button",
        { type: "button", class: "chip", "aria-label": format(t.download, { name: ref.name }) },
        h("b", {}, ref.name),
        h("span", {}, `${ref.mediaType}, ${sizeText(ref.size)}`),
      );
      chip.onclick = async () => {
        const u = await bytesUrl(d, ref.id);
        if (u === null) return d.view.notice(format(t.uploadFailed, { name: ref.name }), false);
        const a = h("a", { href: u, download: ref.name });
        a.click();
      };
      li.append(chip);
    }
    list.append(li);
  }
  el.querySelector(".files")?.remove();
  el.querySelector(".meta")?.before(list);
}
