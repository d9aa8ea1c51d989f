// Zod-free shape checks shared by the widget's parsers: server frames, presentations, sessions, saved state, threads.

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
export const isStr = (v: unknown): v is string => typeof v === "string";
export const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
/** An array whose every element passes `check`. */
export const isList = (v: unknown, check: (v: unknown) => boolean): v is unknown[] =>
  Array.isArray(v) && v.every(check);
/** `v` when it is a non-empty string, else undefined. */
export const nonEmpty = (v: unknown): string | undefined => (isStr(v) && v !== "" ? v : undefined);
export const optional = (v: unknown, check: (v: unknown) => boolean): boolean => v === undefined || check(v);
export const oneOf = (v: unknown, list: readonly string[]): boolean => isStr(v) && list.includes(v);
