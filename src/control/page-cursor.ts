// Opaque keyset cursors for the store's list methods, and the page-size bounds every list obeys.
import { z } from "zod";
import { AppError } from "../errors";

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;

/** Clamps a requested page size into 1..MAX_PAGE_LIMIT; a non-integer means the default. */
export function pageLimit(limit: number): number {
  if (!Number.isSafeInteger(limit)) return DEFAULT_PAGE_LIMIT;
  return Math.min(Math.max(limit, 1), MAX_PAGE_LIMIT);
}

function toBase64Url(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,1024}$/.test(text)) return null;
  try {
    const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(
      Uint8Array.from(binary, (c) => c.charCodeAt(0)),
    );
  } catch {
    return null;
  }
}

export function encodeCursor(keys: readonly (string | number)[]): string {
  return toBase64Url(JSON.stringify(keys));
}

/**
 * Decodes a cursor this store issued. A cursor that is not one is the caller's mistake, so it throws a
 * `bad_request` AppError, which the HTTP error handler answers with 400.
 */
export function decodeCursor<S extends z.ZodType>(cursor: string, schema: S): z.output<S> {
  const text = fromBase64Url(cursor);
  if (text !== null) {
    try {
      const parsed = schema.safeParse(JSON.parse(text));
      if (parsed.success) return parsed.data;
    } catch {
      // Falls through to the one refusal below.
    }
  }
  throw new AppError("bad_request", "Cursor is invalid.", {
    details: [{ path: "cursor", message: "invalid" }],
  });
}

export const timeIdCursor = z.tuple([z.string(), z.string()]);
export const versionCursor = z.tuple([z.number().int().min(0)]);
