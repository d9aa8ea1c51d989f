// Reads a JSON request body under the product's limits: media type, size, depth, then a strict zod schema.
import type { z } from "zod";
import { AppError } from "../errors";
import type { AppContext } from "./context";

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
export const MAX_JSON_DEPTH = 32;

export function zodDetails(error: z.ZodError): { path: string; message: string }[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(root)",
    message: issue.message,
  }));
}

/** Parses `value` with `schema`, or throws 400 naming each failing field path. */
export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what = "Request body",
): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new AppError("bad_request", `${what} is invalid.`, { details: zodDetails(result.error) });
  }
  return result.data;
}

function jsonDepth(value: unknown, limit: number): number {
  // Iterative, so hostile nesting cannot overflow the stack.
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (depth > max) max = depth;
    if (max > limit) return max;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return max;
}

/**
 * The body's bytes, read chunk by chunk and abandoned (the stream cancelled) as soon as they pass `maxBytes`, so a
 * chunked body without a Content-Length is never read whole; null when it is too large.
 */
async function readAtMost(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<Uint8Array | null> {
  if (body === null) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

export async function readJsonText(c: AppContext, maxBytes: number): Promise<unknown> {
  const type = c.req.header("Content-Type") ?? "";
  const mediaType = type.split(";")[0]!.trim().toLowerCase();
  if (mediaType !== "application/json") {
    throw new AppError("unsupported_media_type", "Content-Type must be application/json.");
  }
  const declared = Number(c.req.header("Content-Length") ?? "0");
  if (Number.isFinite(declared) && declared > maxBytes) {
    throw new AppError("payload_too_large", `Request body must be at most ${maxBytes} bytes.`);
  }
  const buffer = await readAtMost(c.req.raw.body, maxBytes);
  if (buffer === null) {
    throw new AppError("payload_too_large", `Request body must be at most ${maxBytes} bytes.`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(buffer);
  } catch {
    throw new AppError("bad_request", "Request body is not valid UTF-8.");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError("bad_request", "Request body is not valid JSON.");
  }
  if (jsonDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new AppError("bad_request", "Request body is nested too deeply.");
  }
  return value;
}

/** Reads, limits and validates a JSON body in one call. */
export async function readJson<S extends z.ZodType>(
  c: AppContext,
  schema: S,
  options: { maxBytes?: number } = {},
): Promise<z.output<S>> {
  const value = await readJsonText(c, options.maxBytes ?? DEFAULT_MAX_BODY_BYTES);
  return parseWith(schema, value);
}
