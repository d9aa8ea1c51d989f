// Every `src/…` path a document names must exist (README.md, docs/*.md), so a moved file cannot leave its docs
// pointing at nothing. Pure: what exists is passed in; scripts/check-docs.mjs runs it in `npm test`.

/** A `src/…` path not preceded by a path character (so `bench/x/src/…` is not one), up to the first space or quote. */
const PATH = /(?<![\w./-])src\/[^\s`'")\]>,;:]*/g;
/** Where a pattern starts (`src/**` + `/*.ts`, `src/widget/locales/<tag>.json`, `src/storage/…`): its folder is checked. */
const PATTERN_START = /[*<{…]/;
/** A history naming an old path on purpose says where it went, right after it: "`src/a.ts` (now `src/b/a.ts`)". */
const NOW = /^`?\s*\(now `?(src\/[^\s`)]+)`?\)/;

/**
 * The `src/…` paths in `text`, each with its 1-based line and the path checked: a trailing full stop dropped, and a
 * pattern cut back to the folder it starts in. `now` is the path an old name is said to be today, or null.
 */
export function srcPaths(text) {
  const found = [];
  const lines = text.split("\n");
  for (const [index, line] of lines.entries()) {
    for (const match of line.matchAll(PATH)) {
      let path = match[0].replace(/\.+$/, "");
      const pattern = path.search(PATTERN_START);
      if (pattern !== -1) path = path.slice(0, path.lastIndexOf("/", pattern) + 1);
      const after = line.slice(match.index + match[0].length);
      const now = NOW.exec(after)?.[1]?.replace(/\.+$/, "") ?? null;
      found.push({ line: index + 1, path, now });
    }
  }
  return found;
}

/**
 * The paths `text` names that `exists(path)` denies, each as "doc:line: path …" for the person fixing it. A path
 * followed by "(now `src/…`)" naming one that exists is history, not a mistake.
 */
export function stalePaths(doc, text, exists) {
  return srcPaths(text)
    .filter(({ path, now }) => !exists(path) && !(now !== null && exists(now)))
    .map(
      ({ line, path }) =>
        `${doc}:${line}: ${path} is not in the tree: name today's path, or in a history write ` +
        `"\`${path}\` (now \`src/…\`)"`,
    );
}
