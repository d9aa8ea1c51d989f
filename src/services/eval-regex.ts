// Bounded regular expressions for eval cases (docs/evals.md#regex): JavaScript's engine backtracks, so a pattern that
// could take super-linear time is refused when the suite is saved, and the reply it is tested on is capped.
import { MAX_REGEX_INPUT_CHARS } from "../shared/evals-api";

/**
 * Why `pattern` is refused, or null. Refused: backreferences (`\1`, `\k<name>`), lookaround, and a repeated (`*`, `+`, `{n,m}`) group
 * that itself holds a quantifier or an alternation (`(a+)+`, `(a|a)*`): the shapes that make backtracking blow up.
 * What remains (literals, classes, anchors, quantifiers on single atoms or on groups of fixed atoms) runs in time
 * linear in the input times the pattern's length.
 */
export function regexProblem(pattern: string, flags = ""): string | null {
  try {
    new RegExp(pattern, flags);
  } catch (error) {
    return `is not a valid regular expression: ${(error as Error).message}`;
  }
  if (/\\[1-9]|\\k</.test(pattern)) return "must not use backreferences";
  if (/\(\?<?[=!]/.test(pattern)) return "must not use lookaround";
  // Each open group: whether it holds a quantifier or an alternation so far.
  const groups: { risky: boolean }[] = [];
  let closed: { risky: boolean } | null = null;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === "\\") {
      i += 1;
      closed = null;
      continue;
    }
    if (ch === "[") {
      // A class is one atom: skip to its unescaped end.
      for (i += 1; i < pattern.length && pattern[i] !== "]"; i++) if (pattern[i] === "\\") i += 1;
      closed = null;
      continue;
    }
    if (ch === "(") {
      groups.push({ risky: false });
      closed = null;
      continue;
    }
    if (ch === ")") {
      closed = groups.pop() ?? null;
      if (closed?.risky) {
        const parent = groups[groups.length - 1];
        if (parent !== undefined) parent.risky = true;
      }
      continue;
    }
    const quantifier = ch === "*" || ch === "+" || ch === "?" || ch === "{";
    if (quantifier) {
      // `(?:` and a lazy `+?` are not quantifiers of their own.
      if (ch === "?" && (pattern[i - 1] === "(" || "*+?}".includes(pattern[i - 1] ?? ""))) continue;
      // `?` repeats nothing: `(-[a-z]{2})?` is linear. A repeating quantifier over a risky group is not.
      if (ch !== "?" && closed?.risky)
        return "must not repeat a group that holds a quantifier or an alternation";
      const parent = groups[groups.length - 1];
      if (parent !== undefined) parent.risky = true;
      if (ch === "{") while (i < pattern.length && pattern[i] !== "}") i += 1;
      closed = null;
      continue;
    }
    if (ch === "|") {
      const parent = groups[groups.length - 1];
      if (parent !== undefined) parent.risky = true;
    }
    closed = null;
  }
  return null;
}

/** Tests a pattern already accepted by `regexProblem` against the first MAX_REGEX_INPUT_CHARS of `text`. */
export function boundedTest(pattern: string, flags: string | undefined, text: string): boolean {
  return new RegExp(pattern, flags ?? "").test(text.slice(0, MAX_REGEX_INPUT_CHARS));
}
