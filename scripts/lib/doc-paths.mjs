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

/** A reference to a section of the repository's docs: `docs/<name>.md#<anchor>`. */
const DOC_ANCHOR = /(?<![\w./-])(docs\/[\w-]+\.md)#([\w-]+)/g;

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown document's headings (fenced code skipped). */
export function anchorsOf(markdown) {
  const anchors = new Set();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    else if (!fenced && /^#{1,6} /.test(line)) anchors.add(anchorOf(line.replace(/^#+ /, "")));
  }
  return anchors;
}

/**
 * The `docs/<name>.md#<anchor>` references in `text` (a source file or a doc) whose document or heading does not exist,
 * each as "file:line: …". `anchorsIn(doc)` gives a document's anchors, or null when it does not exist.
 */
export function brokenAnchors(file, text, anchorsIn) {
  const problems = [];
  for (const [index, line] of text.split("\n").entries()) {
    for (const [, doc, anchor] of line.matchAll(DOC_ANCHOR)) {
      const anchors = anchorsIn(doc);
      if (anchors === null) problems.push(`${file}:${index + 1}: ${doc} does not exist`);
      else if (!anchors.has(anchor)) problems.push(`${file}:${index + 1}: ${doc} has no heading #${anchor}`);
    }
  }
  return problems;
}
