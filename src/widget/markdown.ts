// Markdown → a small tree of allowlisted nodes (no HTML anywhere), tolerant of half-written text while a reply streams.
import { headingLine, itemLine, trimUrlTail } from "./markdown-scan";

export type Inline =
  | { t: "text"; v: string }
  | { t: "br" }
  | { t: "code"; v: string }
  | { t: "em" | "strong"; c: Inline[] }
  | { t: "a"; href: string; c: Inline[] };

export type Block =
  | { t: "p"; c: Inline[] }
  | { t: "pre"; v: string; lang?: string }
  | { t: "ul"; items: Block[][] }
  | { t: "ol"; start: number; items: Block[][] }
  | { t: "quote"; c: Block[] }
  | { t: "hr" };

/** A top-level block and the source lines it came from, so a streaming view re-renders only what changed. */
export interface SourcedBlock {
  block: Block;
  src: string;
}

const LINK_PROTOCOLS = ["http:", "https:", "mailto:"];

/** An absolute http(s) or mailto URL, normalised; anything else (javascript:, data:, relative) is null. */
export function safeHref(raw: string): string | null {
  const value = raw.trim();
  if (/[\s\p{Cc}]/u.test(value)) return null;
  try {
    const url = new URL(value);
    return LINK_PROTOCOLS.includes(url.protocol) ? url.href : null;
  } catch {
    return null;
  }
}

// ---- blocks ----

const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*([^`\s]*)/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;

interface Marker {
  ordered: boolean;
  /** The bullet character or the ordered delimiter; a list ends where it changes. */
  kind: string;
  start: number;
  content: string;
  /** Column where the item's content starts; deeper-indented lines belong to the item. */
  indent: number;
}

function marker(line: string): Marker | null {
  if (HR.test(line)) return null;
  const m = itemLine(line);
  if (m === null) return null;
  const { lead, mark } = m;
  const rest = m.rest ?? "";
  const ordered = /\d/.test(mark[0]!);
  const gap = line.length - lead.length - mark.length - rest.length;
  return {
    ordered,
    kind: ordered ? mark.slice(-1) : mark,
    start: ordered ? Number.parseInt(mark, 10) : 1,
    content: rest,
    indent: lead.length + mark.length + Math.max(1, Math.min(gap, 4)),
  };
}

const blank = (line: string) => line.trim() === "";
const leading = (line: string) => line.length - line.trimStart().length;
const startsBlock = (line: string) =>
  FENCE.test(line) ||
  headingLine(line) !== null ||
  HR.test(line) ||
  QUOTE.test(line) ||
  marker(line) !== null;

/**
 * Quotes, list items, emphasis and link labels nest at most this deep; anything deeper stays plain text, so a reply
 * like `"> - "` repeated thousands of times renders instead of exhausting the call stack (docs/widget.md#security).
 */
export const MAX_NESTING = 32;

function parseLines(lines: string[], depth: number): SourcedBlock[] {
  if (depth > MAX_NESTING) return [{ block: { t: "p", c: parseInline(lines.join("\n"), depth) }, src: "" }];
  const out: SourcedBlock[] = [];
  let i = 0;
  const n = lines.length;
  const push = (block: Block, from: number) => out.push({ block, src: lines.slice(from, i).join("\n") });
  while (i < n) {
    const line = lines[i]!;
    const from = i;
    if (blank(line)) {
      i++;
      continue;
    }
    const fence = line.match(FENCE);
    if (fence !== null) {
      const indent = fence[1]!.length;
      const open = fence[2]!;
      const body: string[] = [];
      i++;
      while (i < n) {
        const close = lines[i]!.match(/^ {0,3}(`{3,}|~{3,})[ \t]*$/);
        if (close !== null && close[1]![0] === open[0] && close[1]!.length >= open.length) {
          i++;
          break;
        }
        const raw = lines[i]!;
        body.push(raw.slice(Math.min(indent, leading(raw))));
        i++;
      }
      push({ t: "pre", v: body.join("\n"), lang: fence[3] }, from);
      continue;
    }
    const heading = headingLine(line);
    if (heading !== null) {
      i++;
      push({ t: "p", c: [{ t: "strong", c: parseInline(heading.text ?? "", depth + 1) }] }, from);
      continue;
    }
    if (HR.test(line)) {
      i++;
      push({ t: "hr" }, from);
      continue;
    }
    if (QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < n) {
        const m = lines[i]!.match(QUOTE);
        if (m === null) break;
        inner.push(m[1]!);
        i++;
      }
      push({ t: "quote", c: parseLines(inner, depth + 1).map((b) => b.block) }, from);
      continue;
    }
    const first = marker(line);
    if (first !== null) {
      const list = parseList(lines, i, first, depth);
      i = list.next;
      push(list.block, from);
      continue;
    }
    const para: string[] = [];
    while (i < n && !blank(lines[i]!) && (para.length === 0 || !startsBlock(lines[i]!))) {
      para.push(lines[i]!.trim());
      i++;
    }
    push({ t: "p", c: parseInline(para.join("\n"), depth) }, from);
  }
  return out;
}

function parseList(
  lines: string[],
  start: number,
  first: Marker,
  depth: number,
): { block: Block; next: number } {
  const n = lines.length;
  const items: Block[][] = [];
  let i = start;
  while (i < n) {
    const m = marker(lines[i]!);
    if (m === null || m.ordered !== first.ordered || m.kind !== first.kind) break;
    const body = [m.content];
    i++;
    while (i < n) {
      const line = lines[i]!;
      if (blank(line)) {
        let j = i;
        while (j < n && blank(lines[j]!)) j++;
        if (j < n && leading(lines[j]!) >= m.indent) {
          for (; i < j; i++) body.push("");
          continue;
        }
        break;
      }
      if (leading(line) >= m.indent) {
        body.push(line.slice(m.indent));
        i++;
        continue;
      }
      if (startsBlock(line)) break;
      body.push(line.trim());
      i++;
    }
    items.push(parseLines(body, depth + 1).map((b) => b.block));
    let j = i;
    while (j < n && blank(lines[j]!)) j++;
    const next = j < n ? marker(lines[j]!) : null;
    if (next !== null && next.ordered === first.ordered && next.kind === first.kind) i = j;
    else break;
  }
  const block: Block = first.ordered ? { t: "ol", start: first.start, items } : { t: "ul", items };
  return { block, next: i };
}

/** Parses markdown into top-level blocks, each with its source. */
export function parseMarkdownSourced(text: string): SourcedBlock[] {
  const lines = text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.replace(/^\t+/, (tabs) => "    ".repeat(tabs.length)));
  return parseLines(lines, 0);
}

// ---- inlines ----

const ESCAPABLE = /[!-/:-@[-`{-~]/;
const WORD = /[\p{L}\p{N}]/u;
const SPACE = /\s/;

interface LinkSyntax {
  label: string;
  url: string;
  end: number;
}

/** `[label](url "title")` starting at `s[i] === "["`, or null when it is not a complete link. */
function linkAt(s: string, i: number): LinkSyntax | null {
  let depth = 0;
  let j = i;
  for (; j < s.length; j++) {
    const c = s[j];
    if (c === "\\") j++;
    else if (c === "[") depth++;
    else if (c === "]" && --depth === 0) break;
  }
  if (j >= s.length || s[j + 1] !== "(") return null;
  const label = s.slice(i + 1, j);
  let k = j + 2;
  while (s[k] === " ") k++;
  let url = "";
  if (s[k] === "<") {
    const close = s.indexOf(">", k);
    if (close < 0) return null;
    url = s.slice(k + 1, close);
    k = close + 1;
  } else {
    let parens = 0;
    const begin = k;
    for (; k < s.length; k++) {
      const c = s[k]!;
      if (SPACE.test(c)) break;
      if (c === "(") parens++;
      else if (c === ")" && parens-- === 0) break;
    }
    url = s.slice(begin, k);
  }
  while (s[k] === " ") k++;
  const quote = s[k];
  if (quote === '"' || quote === "'") {
    const close = s.indexOf(quote, k + 1);
    if (close < 0) return null;
    k = close + 1;
    while (s[k] === " ") k++;
  }
  return s[k] === ")" ? { label, url, end: k + 1 } : null;
}

/** Index of the closing delimiter `d` for emphasis opened before `from`, or -1. */
function closingDelimiter(s: string, from: number, d: string): number {
  const ch = d[0]!;
  for (let j = s.indexOf(d, from); j >= 0; j = s.indexOf(d, j + 1)) {
    if (j === from || SPACE.test(s[j - 1]!)) continue;
    if (d.length === 1 && (s[j + 1] === ch || s[j - 1] === ch)) continue;
    let end = j;
    while (s[end + d.length] === ch) end++;
    if (ch !== "_" || !WORD.test(s[end + d.length] ?? "")) return end;
    // Every later start in this run of underscores ends where this one does: skip the run (else "_" × n is cubic).
    j = end;
  }
  return -1;
}

const BARE_URL = /^(?:https?:\/\/|mailto:)[^\s<>"]+/;

/** Inline nodes of `s`, nested `depth` levels deep; past MAX_NESTING the text is kept as it is. */
export function parseInline(s: string, depth: number): Inline[] {
  if (depth > MAX_NESTING) return [{ t: "text", v: s }];
  const out: Inline[] = [];
  let buf = "";
  const flush = () => {
    if (buf !== "") out.push({ t: "text", v: buf });
    buf = "";
  };
  const emit = (node: Inline) => {
    flush();
    out.push(node);
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === "\\" && i + 1 < s.length && ESCAPABLE.test(s[i + 1]!)) {
      buf += s[i + 1];
      i += 2;
      continue;
    }
    if (c === "\n") {
      emit({ t: "br" });
      i++;
      continue;
    }
    if (c === "`") {
      let run = 1;
      while (s[i + run] === "`") run++;
      const fence = "`".repeat(run);
      let close = s.indexOf(fence, i + run);
      while (close >= 0 && s[close + run] === "`") {
        let skip = close;
        while (s[skip] === "`") skip++;
        close = s.indexOf(fence, skip);
      }
      if (close >= 0) {
        let code = s.slice(i + run, close).replace(/\n/g, " ");
        if (code.length > 2 && code.startsWith(" ") && code.endsWith(" ")) code = code.slice(1, -1);
        emit({ t: "code", v: code });
        i = close + run;
      } else {
        buf += fence;
        i += run;
      }
      continue;
    }
    if (c === "[" || (c === "!" && s[i + 1] === "[")) {
      const image = c === "!";
      const link = linkAt(s, image ? i + 1 : i);
      if (link !== null) {
        const href = safeHref(link.url);
        // Images never load (a model-written image URL can leak data); they become a link to the image.
        const label: Inline[] = image
          ? [{ t: "text", v: link.label || link.url }]
          : parseInline(link.label, depth + 1);
        // One node at a time: spreading a label of many thousand nodes into push() overflows the stack.
        if (href !== null) emit({ t: "a", href, c: label });
        else for (const node of label) emit(node);
        i = link.end;
        continue;
      }
    }
    if (c === "<") {
      const auto = s.slice(i).match(/^<((?:https?:\/\/|mailto:)[^\s<>]+)>/);
      const href = auto === null ? null : safeHref(auto[1]!);
      if (auto !== null && href !== null) {
        emit({ t: "a", href, c: [{ t: "text", v: auto[1]! }] });
        i += auto[0].length;
        continue;
      }
    }
    if ((s.startsWith("http", i) || s.startsWith("mailto:", i)) && (i === 0 || !WORD.test(s[i - 1]!))) {
      const bare = s.slice(i, i + 2048).match(BARE_URL);
      if (bare !== null) {
        const url = trimUrlTail(bare[0]);
        const href = safeHref(url);
        if (href !== null && url.length > 8) {
          emit({ t: "a", href, c: [{ t: "text", v: url }] });
          i += url.length;
          continue;
        }
      }
    }
    if (c === "*" || c === "_") {
      const d = s[i + 1] === c ? c + c : c;
      const next = s[i + d.length];
      const intraword = c === "_" && i > 0 && WORD.test(s[i - 1]!);
      if (next !== undefined && !SPACE.test(next) && !intraword) {
        const close = closingDelimiter(s, i + d.length, d);
        if (close > i + d.length) {
          emit({
            t: d.length === 2 ? "strong" : "em",
            c: parseInline(s.slice(i + d.length, close), depth + 1),
          });
          i = close + d.length;
          continue;
        }
      }
      buf += d;
      i += d.length;
      continue;
    }
    buf += c;
    i++;
  }
  flush();
  return out;
}
