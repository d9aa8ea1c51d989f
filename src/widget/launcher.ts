// The floating launcher button and its styles: shared by the loader (drawn before the widget loads) and the widget.

// Compact on purpose (it ships in the 2 KB loader); --s is the launcher size, overridable as --at-launcher-size.
export const LAUNCHER_CSS =
  ":host{all:initial;display:block;--s:var(--at-launcher-size,56px)}" +
  ":host([layout=floating]){position:fixed;inset-block-end:var(--at-offset-block,24px);inset-inline-end:var(--at-offset-inline,24px);z-index:var(--at-z,2147483000);width:var(--s);height:var(--s)}" +
  ":host([layout=floating][position=bottom-left]){inset-inline-end:auto;left:var(--at-offset-inline,24px)}:host([layout=floating][position=bottom-right]){inset-inline-end:auto;right:var(--at-offset-inline,24px)}" +
  ".launcher{all:unset;box-sizing:border-box;position:relative;display:grid;place-items:center;width:var(--s);height:var(--s);border-radius:50%;cursor:pointer;background:var(--at-accent,#4f46e5);color:var(--at-accent-fg,#fff);box-shadow:0 8px 24px -4px #0f172a66}" +
  ".launcher:focus-visible{outline:3px solid var(--at-accent,#4f46e5);outline-offset:3px}" +
  ".launcher svg{width:26px;height:26px;fill:currentColor}" +
  ".launcher .i-close{display:none;fill:none;stroke:currentColor;stroke-width:2.2;stroke-linecap:round}" +
  "[aria-expanded=true] .i-chat{display:none}[aria-expanded=true] .i-close{display:block}" +
  "@media (forced-colors:active){.launcher{border:2px solid ButtonText}}";

const CHAT_PATH = "M5 3h14a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4V5a2 2 0 0 1 1-2z";
const SVG_NS = "http://www.w3.org/2000/svg";

function set(el: Element, attrs: Record<string, string>): void {
  for (const name in attrs) el.setAttribute(name, attrs[name]!);
}

/** A real `<button>` with an accessible name and `aria-expanded`, holding the chat icon. */
export function createLauncher(label: string): HTMLButtonElement {
  const button = document.createElement("button");
  const svg = document.createElementNS(SVG_NS, "svg");
  const path = document.createElementNS(SVG_NS, "path");
  set(button, {
    type: "button",
    class: "launcher",
    part: "launcher",
    "aria-label": label,
    "aria-expanded": "false",
  });
  set(svg, { viewBox: "0 0 24 24", "aria-hidden": "true", class: "i-chat" });
  set(path, { d: CHAT_PATH });
  svg.append(path);
  button.append(svg);
  return button;
}

/** Adopts `css` into a shadow root as a constructable stylesheet: no inline `<style>`, so strict CSP holds. */
export function adoptStyles(root: ShadowRoot, css: string): void {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  root.adoptedStyleSheets = [sheet];
}
