// The agent's presentation in the widget (docs/protocol.md): theme, position, accent, suggested prompts, strings and locale,
// layered under what the host page configured (docs/decisions.md, "Widget presentation").
import type { Presentation } from "../shared/presentation";
import { h } from "./dom";
import { BUNDLED_LOCALES, browserLocales, loadLocale } from "./locale";
import { accentCss, pickLocale } from "./presentation-rules";
import type { Store } from "./storage";
import { layerStrings, type StringKey, type Strings } from "./strings";

export type { Presentation } from "../shared/presentation";
export { isPresentation } from "./presentation-rules";

const LABEL_ATTRIBUTES = ["aria-label", "title", "placeholder"];

/**
 * Static labels were written from the strings in force when they were built. Each text node and label attribute that
 * still shows an old string gets its new one; message bubbles (what people wrote) are never touched.
 */
export function relabel(root: Node, before: Strings, after: Strings): void {
  const map = new Map<string, string>();
  for (const key of Object.keys(before) as StringKey[]) {
    if (before[key] !== "" && before[key] !== after[key] && !map.has(before[key]))
      map.set(before[key], after[key]);
  }
  if (map.size === 0) return;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
    acceptNode: (node) =>
      node instanceof Element && node.classList.contains("bubble")
        ? NodeFilter.FILTER_REJECT
        : NodeFilter.FILTER_ACCEPT,
  });
  for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
    if (node instanceof Element) {
      for (const name of LABEL_ATTRIBUTES) {
        const next = map.get(node.getAttribute(name) ?? "");
        if (next !== undefined) node.setAttribute(name, next);
      }
    } else {
      const next = map.get(node.nodeValue ?? "");
      if (next !== undefined) node.nodeValue = next;
    }
  }
}

export interface PresenterDeps {
  host: HTMLElement;
  shadow: ShadowRoot;
  /** The widget's one strings object: updated in place, so every reader sees the new texts. */
  strings: Strings;
  /** Where the suggested prompts go: the empty conversation's intro, hidden once there are messages. */
  intro: HTMLElement;
  /** Elements that take the `lang` of the strings shown. */
  localized: () => (HTMLElement | null)[];
  /** Where this build's locale files are served from. */
  base: string;
  /** A prompt was chosen: send it as the visitor. */
  send(text: string): void;
  /** The strings changed (texts drawn from them on demand, such as the title, can be drawn again). */
  changed(): void;
  /**
   * Where the accent of the last presentation is kept between page views: drawn from it at once, so the launcher is
   * the agent's colour before any launch (docs/widget.md#remembered-between-page-views).
   */
  ui: Store;
  /** Every presentation applied: the attachments module takes its `attachments` and `strings` (docs/widget.md#attachments). */
  attach(presentation: Presentation): void;
}

export interface Presenter {
  /** Applies a presentation from a launch or a `ready` frame; the latest one wins. */
  present(presentation: Presentation): void;
}

/** Host settings (attributes) beat the agent's; the agent's beat the widget's defaults. */
export function createPresenter(d: PresenterDeps): Presenter {
  const { host, shadow, strings: s } = d;
  const own = (name: string) => host.getAttribute(name);
  const hostStrings = own("strings");
  const hostTheme = own("theme");
  const hostPosition = own("position");
  const hostLocale = own("locale");
  const prompts = h("div", { class: "prompts", role: "group", "aria-label": s.suggestions });
  const accent = new CSSStyleSheet();
  accent.replaceSync(d.ui.get().accent ?? "");
  let current: Presentation = {};
  let ticket = 0;
  prompts.hidden = true;
  d.intro.append(prompts);
  shadow.adoptedStyleSheets = [...shadow.adoptedStyleSheets, accent];

  const attribute = (name: string, value: string | null | undefined) => {
    if (value == null) host.removeAttribute(name);
    else host.setAttribute(name, value);
  };

  /** English, then the chosen locale's bundle, then the agent's texts, then the host's: each layer wins. */
  const localize = async () => {
    const mine = ++ticket;
    const tag = pickLocale([hostLocale, current.locale, ...browserLocales()], BUNDLED_LOCALES);
    const bundle = await loadLocale(tag, d.base);
    if (mine !== ticket) return; // a later presentation asked again meanwhile
    const agent = {
      ...current.strings,
      ...(current.greeting !== undefined ? { greeting: current.greeting } : {}),
      ...(current.title !== undefined ? { title: current.title } : {}),
    };
    const next = layerStrings(bundle, agent, hostStrings);
    relabel(shadow, s, next);
    Object.assign(s, next);
    for (const el of d.localized()) el?.setAttribute("lang", bundle === null ? "en" : tag);
    d.changed();
  };
  void localize();

  return {
    present(presentation) {
      current = presentation;
      attribute("theme", hostTheme ?? presentation.theme);
      attribute("position", hostPosition ?? presentation.position);
      const css = accentCss(presentation.accentColor ?? "");
      accent.replaceSync(css);
      d.ui.set({ accent: css }); // none ("") is not kept: the saved state reads back only a rule
      const texts = presentation.suggestedPrompts ?? [];
      prompts.replaceChildren(
        ...texts.map((text) => {
          const chip = h("button", { type: "button", class: "prompt", part: "prompt", dir: "auto" }, text);
          chip.onclick = () => d.send(text);
          return chip;
        }),
      );
      prompts.hidden = texts.length === 0;
      d.attach(presentation);
      void localize();
    },
  };
}
