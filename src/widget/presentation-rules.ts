// Pure rules of the widget's presentation (no DOM, so unit tests and the Worker's type check can import them): the
// zod-free presentation check, the accent's theme tokens and the choice of locale.
import type { Presentation } from "../shared/presentation";
import { isInt, isList, isObj, isStr, oneOf, optional } from "./checks";

/** English is built in; every other language is a separate asset (./locale.ts). */
export const BUILT_IN_LOCALE = "en";

/**
 * The first candidate this build can speak, by its full tag or its language (`pt-BR` → `pt`); English when none.
 * Candidates come in precedence order: the host's `data-locale`, the agent's locale, then the browser's languages.
 */
export function pickLocale(
  candidates: readonly (string | null | undefined)[],
  bundled: readonly string[],
): string {
  for (const candidate of candidates) {
    if (!candidate) continue;
    const tag = candidate.toLowerCase();
    for (const option of [tag, tag.split("-")[0]!]) {
      if (option === BUILT_IN_LOCALE || bundled.includes(option)) return option;
    }
  }
  return BUILT_IN_LOCALE;
}

const matches = (pattern: RegExp) => (v: unknown) => isStr(v) && pattern.test(v);
const ACCENT = /^#[0-9a-fA-F]{6}$/;

/** True when `v` is what `presentationSchema` accepts (a unit test keeps the two in step). */
export function isPresentation(v: unknown): v is Presentation {
  return (
    isObj(v) &&
    optional(v.title, isStr) &&
    optional(v.greeting, isStr) &&
    optional(v.suggestedPrompts, (p) => isList(p, isStr)) &&
    optional(v.theme, (t) => oneOf(t, ["light", "dark", "auto"])) &&
    optional(v.accentColor, matches(ACCENT)) &&
    optional(v.position, (p) => oneOf(p, ["bottom-right", "bottom-left"])) &&
    optional(v.strings, (s) => isObj(s) && Object.values(s).every(isStr)) &&
    optional(v.locale, matches(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/)) &&
    optional(
      v.attachments,
      (a) => isObj(a) && isList(a.accept, isStr) && isList([a.maxBytes, a.maxFiles], isInt),
    )
  );
}

/** 0..1 perceived lightness of `#rrggbb` (Rec. 601 weights): enough to pick the readable text colour. */
function lightness(hex: string): number {
  const n = Number.parseInt(hex.slice(1), 16);
  return (0.299 * (n >> 16) + 0.587 * ((n >> 8) & 255) + 0.114 * (n & 255)) / 255;
}

/**
 * Theme tokens for an accent: near-black text on a light accent, white on a dark one, and links in the accent only
 * when it is dark enough to read on the light surface. A `:host` rule, so a page's own rule still wins.
 */
export function accentCss(accent: string): string {
  if (!ACCENT.test(accent)) return "";
  const l = lightness(accent);
  return `:host{--at-accent:${accent};--at-accent-fg:${l > 0.6 ? "#111827" : "#fff"}${l > 0.45 ? ";--at-link:var(--at-fg)" : ""}}`;
}
