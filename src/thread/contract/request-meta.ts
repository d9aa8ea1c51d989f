// Which Worker request started a turn: its id (the turn's log line names it) and the host it reached the platform on.
import { z } from "zod";

/** Set by the Worker on every request it builds for the object; no client header reaches the object (threads.ts). */
export const REQUEST_META_HEADER = "X-Agent-Threads-Request";

export const requestMetaSchema = z.strictObject({
  requestId: z.string().min(1).max(128),
  host: z.string().min(1).max(300),
});

export type RequestMeta = z.infer<typeof requestMetaSchema>;

/** As an RPC argument: parsed, never trusted by type alone; anything else is "not known". */
export function readRequestMeta(value: unknown): RequestMeta | undefined {
  const parsed = requestMetaSchema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export function parseRequestMeta(header: string | null): RequestMeta | undefined {
  if (header === null) return undefined;
  try {
    return readRequestMeta(JSON.parse(header));
  } catch {
    return undefined;
  }
}
