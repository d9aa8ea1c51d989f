// `{{name}}` placeholders in an agent's instructions and greeting, filled from the thread's context in one pass.
import type { ContextValue, ContextVariables } from "./context-variables";

/** Counts the characters the placeholder scanner examines, so a test can check the work is linear in the input. */
export interface TemplateMeter {
  steps: number;
}

const SPACE = 0x20;
const PIPE = 0x7c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const CLOSE = "}}";
const MAX_KEY_CHARS = 64;
/** `{{name|fallback}}`: the fallback is plain text without braces, at most this long. */
const MAX_FALLBACK_CHARS = 200;

const isKeyStart = (c: number) => c === 0x5f || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isKeyChar = (c: number) => isKeyStart(c) || (c >= 0x30 && c <= 0x39);

/**
 * The placeholder whose `{{` ends just before `start`: spaces, a variable name, spaces, optionally `|` and a fallback
 * text, then `}}`. Null when the text there is not one. It reads only spaces, name characters and brace-free fallback
 * text, none of which can begin another `{{`, so two attempts never read the same characters.
 */
function placeholderAt(
  text: string,
  start: number,
  meter: TemplateMeter,
): { key: string; fallback: string; end: number } | null {
  let i = start;
  while (i < text.length && text.charCodeAt(i) === SPACE) {
    i++;
    meter.steps++;
  }
  const keyStart = i;
  if (i >= text.length || !isKeyStart(text.charCodeAt(i))) return null;
  while (i < text.length && i - keyStart < MAX_KEY_CHARS && isKeyChar(text.charCodeAt(i))) {
    i++;
    meter.steps++;
  }
  const key = text.slice(keyStart, i);
  while (i < text.length && text.charCodeAt(i) === SPACE) {
    i++;
    meter.steps++;
  }
  if (i < text.length && text.charCodeAt(i) === PIPE) {
    const fallbackStart = ++i;
    meter.steps++;
    while (i < text.length && i - fallbackStart <= MAX_FALLBACK_CHARS) {
      const c = text.charCodeAt(i);
      if (c === OPEN_BRACE) return null;
      if (c === CLOSE_BRACE) {
        if (!text.startsWith(CLOSE, i)) return null;
        return { key, fallback: text.slice(fallbackStart, i).trim(), end: i + CLOSE.length };
      }
      i++;
      meter.steps++;
    }
    return null;
  }
  return text.startsWith(CLOSE, i) ? { key, fallback: "", end: i + CLOSE.length } : null;
}

function valueText(value: ContextValue | undefined): string {
  if (value === undefined) return "";
  return typeof value === "string" ? value : String(value);
}

/**
 * `template` with every `{{name}}` (spaces inside the braces allowed) replaced by that variable's value as plain
 * text, and by "" when the thread has no such variable; `{{name|there}}` gives "there" instead when the variable is
 * missing or empty (docs/api.md#private-launch-from-a-backend). One left-to-right pass: a value that itself contains
 * `{{other}}` is inserted as it is, never expanded again. Anything that is not a placeholder stays as written.
 */
export function expandContext(
  template: string,
  variables: ContextVariables,
  meter: TemplateMeter = { steps: 0 },
): string {
  let out = "";
  let copied = 0;
  let at = template.indexOf("{{");
  while (at !== -1) {
    const found = placeholderAt(template, at + 2, meter);
    if (found === null) {
      at = template.indexOf("{{", at + 1);
      continue;
    }
    const value = valueText(Object.hasOwn(variables, found.key) ? variables[found.key] : undefined);
    out += template.slice(copied, at) + (value === "" ? found.fallback : value);
    copied = found.end;
    at = template.indexOf("{{", found.end);
  }
  return copied === 0 ? template : out + template.slice(copied);
}
