// Paths into a JSON value, as the API names them (`model.provider`, `tools.0.name`, `(root)`), and edits at a path
// that leave no empty husks behind: an optional field cleared in the form disappears from the artifact.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Segment = string | number;
export type Path = Segment[];

/** The API's spelling of a path (what 400 `details[].path` carries). */
export const pathKey = (path: Path): string => (path.length === 0 ? "(root)" : path.join("."));

/** A JSON Schema validator's instance location (`#/model/provider`, JSON Pointer escapes) as a path. */
export function fromPointer(pointer: string): Path {
  const body = pointer.replace(/^#/, "");
  if (body === "") return [];
  return body
    .split("/")
    .slice(1)
    .map((part) => {
      const key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
      return /^(0|[1-9][0-9]*)$/.test(key) ? Number(key) : key;
    });
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function getAt(value: unknown, path: Path): unknown {
  let here = value;
  for (const segment of path) {
    if (Array.isArray(here) && typeof segment === "number") here = here[segment];
    else if (isRecord(here)) here = here[String(segment)];
    else return undefined;
  }
  return here;
}

/** What an edit leaves behind that is not worth keeping: nothing, `{}` or `[]`. */
const isHusk = (value: unknown): boolean =>
  value === undefined ||
  (Array.isArray(value) ? value.length === 0 : isRecord(value) && Object.keys(value).length === 0);

/**
 * A copy of `root` with `value` at `path`; `undefined` removes the key (an array item is removed, not left as a
 * hole), and a container the edit left empty goes too. Missing containers on the way are created.
 */
export function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path as [Segment, ...Path];
  if (typeof head === "number") {
    const list = Array.isArray(root) ? [...root] : [];
    const next = setAt(list[head], rest, value);
    if (next === undefined) list.splice(head, 1);
    else list[head] = next;
    return list;
  }
  const object: Record<string, unknown> = isRecord(root) ? { ...root } : {};
  const next = setAt(object[head], rest, value);
  if (rest.length === 0 ? next === undefined : isHusk(next)) delete object[head];
  else object[head] = next;
  return object;
}

/** `text` as JSON, or where it stops being JSON (line and column, counted from 1). */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const at = /position (\d+)/.exec(message);
    if (at === null) return { ok: false, message };
    const before = text.slice(0, Number(at[1]));
    const line = before.split("\n").length;
    const column = before.length - before.lastIndexOf("\n");
    return {
      ok: false,
      message: `${message.replace(/\s*\(line \d+ column \d+\)/, "")} (line ${line}, column ${column})`,
    };
  }
}

/** How the JSON view shows a value: two-space indents, a final newline. */
export const formatJson = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** The API's spelling back to a path (`tools.0.name` → `["tools", 0, "name"]`). */
export const parseKey = (key: string): Path =>
  key === "(root)" || key === ""
    ? []
    : key.split(".").map((part) => (/^(0|[1-9][0-9]*)$/.test(part) ? Number(part) : part));
