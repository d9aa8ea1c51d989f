// A structural diff of two JSON values, by path: what the versions screen shows between two artifacts and the draft
// editor shows when someone else saved the draft first. Objects are compared key by key, arrays item by item (a
// prompt appended is one change); a library would bring move detection the console has no use for.
import { isRecord, type Path, pathKey } from "./json-path";

export interface Change {
  /** The API's spelling of where (`model.provider`, `tools.1`, `(root)`). */
  path: string;
  kind: "added" | "removed" | "changed";
  before?: unknown;
  after?: unknown;
}

export function diffJson(before: unknown, after: unknown): Change[] {
  const changes: Change[] = [];
  walk(before, after, [], changes);
  return changes;
}

function walk(before: unknown, after: unknown, path: Path, out: Change[]): void {
  if (before === undefined && after === undefined) return;
  if (before === undefined) {
    out.push({ path: pathKey(path), kind: "added", after });
    return;
  }
  if (after === undefined) {
    out.push({ path: pathKey(path), kind: "removed", before });
    return;
  }
  if (isRecord(before) && isRecord(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const key of [...keys].sort()) walk(before[key], after[key], [...path, key], out);
    return;
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const length = Math.max(before.length, after.length);
    for (let i = 0; i < length; i++) walk(before[i], after[i], [...path, i], out);
    return;
  }
  if (!sameJson(before, after)) out.push({ path: pathKey(path), kind: "changed", before, after });
}

/** Equal as JSON (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => sameJson(x, b[i]));
  if (isRecord(a) && isRecord(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameJson(a[k], b[k]));
  }
  return false;
}

/** A value as one short line of JSON for a diff cell (long strings keep their start and end). */
export function showValue(value: unknown, max = 400): string {
  if (value === undefined) return "—";
  const text = JSON.stringify(value);
  return text.length <= max ? text : `${text.slice(0, max - 121)} … ${text.slice(-120)}`;
}
