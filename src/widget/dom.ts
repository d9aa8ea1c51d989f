// Element helpers: attributes and text only (never HTML strings), plus the widget's inline SVG icons.

type Child = Node | string | null | undefined | false;

/** `h("button", {class: "icon", "aria-label": "Close"}, child…)`; string children become text nodes. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined) node.setAttribute(name, value);
  for (const child of children) if (child) node.append(child);
  return node;
}

/** An icon button named by `label` (its accessible name and its tooltip); `attrs` add to or override the defaults. */
export function iconButton(
  label: string,
  child: SVGSVGElement,
  attrs: Record<string, string | undefined> = {},
): HTMLButtonElement {
  return h("button", { class: "icon", type: "button", "aria-label": label, title: label, ...attrs }, child);
}

/**
 * A module of this build imported on first use: a module, never evaluated text, so only script-src for the service,
 * like the widget itself (strict CSP holds). Null when it cannot be had; the next call tries again.
 */
export function lazy<T>(path: string, base: string): () => Promise<T | null> {
  let module: Promise<T | null> | undefined;
  return () =>
    (module ??= import(new URL(path, base).href).catch(() => {
      module = undefined;
      return null;
    }));
}

const ICONS = {
  chat: "M5 3h14a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4V5a2 2 0 0 1 1-2z",
  close: "M6 6l12 12M18 6L6 18",
  compose: "M12 20h9M16.5 3.5a2.1 2.1 0 0 1 3 3L7 19l-4 1 1-4z",
  send: "M12 19V5M5 12l7-7 7 7",
  stop: "M7 7h10v10H7z",
  down: "M12 5v14M5 12l7 7 7-7",
} as const;

export type IconName = keyof typeof ICONS;

const SVG = "http://www.w3.org/2000/svg";

export function icon(name: IconName): SVGSVGElement {
  return pathIcon(name, ICONS[name]);
}

/** A decorative 24×24 stroke icon drawn from one SVG path. */
export function pathIcon(name: string, d: string): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  const path = document.createElementNS(SVG, "path");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", `i i-${name}`);
  path.setAttribute("d", d);
  svg.append(path);
  return svg;
}
