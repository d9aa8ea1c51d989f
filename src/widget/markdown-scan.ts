// Line syntax the markdown parser re-reads on every streamed frame, scanned by index loops in linear time: the regexes
// these replace backtracked quadratically over long whitespace or punctuation runs on the host page's main thread.
//
// Each function returns exactly what its former regex did (the groups it captured), including refusing any line that
// holds a line terminator (\n, \r, U+2028, U+2029), which `.` and `$` never matched.

/** Counts the characters a scan examined, so a test can bound the work without reading a clock. */
export interface ScanMeter {
  steps: number;
}

/** A heading line: `level` #s, and `text` as the former regex's lazy group (undefined when nothing follows). */
export interface HeadingLine {
  level: number;
  text: string | undefined;
}

/** A list item line: the former regex's three groups (`rest` undefined when nothing follows the marker). */
export interface ItemLine {
  lead: string;
  mark: string;
  rest: string | undefined;
}

const isBlank = (c: string | undefined) => c === " " || c === "\t";
const isTerminator = (c: string | undefined) => c === "\n" || c === "\r" || c === "\u2028" || c === "\u2029";
const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const URL_TAIL_PUNCTUATION = ".,;:!?'\"*_~";

function reader(s: string, meter: ScanMeter | undefined): (i: number) => string | undefined {
  if (meter === undefined) return (i) => s[i];
  return (i) => {
    meter.steps++;
    return s[i];
  };
}

/** Up to three leading spaces, as ` {0,3}` matched them; -1 when there are four or more. */
function leadingSpaces(at: (i: number) => string | undefined): number {
  let i = 0;
  while (i < 4 && at(i) === " ") i++;
  return i > 3 ? -1 : i;
}

/** Index of the first non-blank character from `from`, or -1 when a line terminator follows anywhere after it. */
function contentStart(at: (i: number) => string | undefined, from: number, length: number): number {
  let start = from;
  while (start < length && isBlank(at(start))) start++;
  for (let k = start; k < length; k++) if (isTerminator(at(k))) return -1;
  return start;
}

/**
 * `^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`: after the #s comes nothing, or blanks and then text whose
 * trailing blanks and closing `[ \t]+#+` run are dropped (a lone `#` run, as in "# ##", is the text itself).
 */
export function headingLine(line: string, meter?: ScanMeter): HeadingLine | null {
  const at = reader(line, meter);
  const n = line.length;
  const lead = leadingSpaces(at);
  if (lead < 0) return null;
  let i = lead;
  while (i < n && at(i) === "#") i++;
  const level = i - lead;
  if (level < 1 || level > 6) return null;
  if (i === n) return { level, text: undefined };
  if (!isBlank(at(i))) return null;
  const start = contentStart(at, i, n);
  if (start < 0) return null;
  let end = n;
  while (end > start && isBlank(at(end - 1))) end--;
  let hashes = end;
  while (hashes > start && at(hashes - 1) === "#") hashes--;
  let gap = hashes;
  while (gap > start && isBlank(at(gap - 1))) gap--;
  const closed = hashes < end && gap < hashes;
  return { level, text: line.slice(start, closed ? gap : end) };
}

/** `^( {0,3})([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$`: a bullet or a number with `.`/`)`, then nothing or blanks. */
export function itemLine(line: string, meter?: ScanMeter): ItemLine | null {
  const at = reader(line, meter);
  const n = line.length;
  const lead = leadingSpaces(at);
  if (lead < 0) return null;
  let i = lead;
  const first = at(i);
  if (first === "-" || first === "*" || first === "+") i++;
  else {
    while (i < n && isDigit(at(i))) i++;
    const digits = i - lead;
    if (digits < 1 || digits > 9) return null;
    const delimiter = at(i);
    if (delimiter !== "." && delimiter !== ")") return null;
    i++;
  }
  const mark = line.slice(lead, i);
  if (i === n) return { lead: line.slice(0, lead), mark, rest: undefined };
  if (!isBlank(at(i))) return null;
  const start = contentStart(at, i, n);
  if (start < 0) return null;
  return { lead: line.slice(0, lead), mark, rest: line.slice(start) };
}

/**
 * A bare URL without trailing punctuation, and without closing parentheses that have no opening one in the URL
 * (so "(see https://x.io/a)" keeps its paren outside the link but "https://x.io/a_(b)" keeps it inside).
 */
export function trimUrlTail(url: string, meter?: ScanMeter): string {
  const at = reader(url, meter);
  const strip = (from: number) => {
    let end = from;
    while (end > 0 && URL_TAIL_PUNCTUATION.includes(at(end - 1)!)) end--;
    return end;
  };
  let end = strip(url.length);
  let open = 0;
  let close = 0;
  for (let k = 0; k < end; k++) {
    const c = at(k);
    if (c === "(") open++;
    else if (c === ")") close++;
  }
  while (end > 0 && at(end - 1) === ")" && open < close) {
    close--;
    end = strip(end - 1);
  }
  return url.slice(0, end);
}
