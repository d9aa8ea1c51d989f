// Opaque list cursors bound to one tenant and one list: signed, so a tampered or foreign cursor is a 400.
import { z } from "zod";
import { AppError } from "../errors";
import { base64urlDecode, base64urlEncode, constantTimeEqual, hmacSha256, utf8 } from "../shared/bytes";
import type { AppContext } from "./context";

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;
const MAX_CURSOR_LENGTH = 2048;

// Derived from the pepper under its own label, so cursor signatures can never stand in for API-key digests.
const CURSOR_KEY_LABEL = "agent-threads/list-cursor/v1";

const payloadSchema = z.strictObject({ t: z.string(), q: z.string(), a: z.string() });

async function signature(pepper: string, payload: string): Promise<string> {
  const key = await hmacSha256(pepper, CURSOR_KEY_LABEL);
  return base64urlEncode(await hmacSha256(key, payload));
}

/** `list` names the query (for example `versions:<agentId>`), so a cursor only continues the list it came from. */
export async function encodeCursor(env: Env, tenantId: string, list: string, after: string): Promise<string> {
  const payload = base64urlEncode(utf8(JSON.stringify({ t: tenantId, q: list, a: after })));
  return `${payload}.${await signature(env.API_KEY_PEPPER, payload)}`;
}

const invalidCursor = () => new AppError("bad_request", "Invalid cursor.");

export async function decodeCursor(
  env: Env,
  tenantId: string,
  list: string,
  cursor: string,
): Promise<string> {
  if (cursor.length > MAX_CURSOR_LENGTH) throw invalidCursor();
  const [payload, mac, ...rest] = cursor.split(".");
  if (payload === undefined || mac === undefined || rest.length > 0) throw invalidCursor();
  if (!constantTimeEqual(mac, await signature(env.API_KEY_PEPPER, payload))) throw invalidCursor();
  const bytes = base64urlDecode(payload);
  if (bytes === null) throw invalidCursor();
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    throw invalidCursor();
  }
  const parsed = payloadSchema.safeParse(json);
  if (!parsed.success || parsed.data.t !== tenantId || parsed.data.q !== list) throw invalidCursor();
  return parsed.data.a;
}

const limitSchema = z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT);

/**
 * Reads `?limit` and `?cursor` for one of the tenant's lists. `scope` is what the cursor is bound to: the verified
 * tenant unless the list is not a tenant's (the operator's tenant list passes its own scope).
 */
export async function readPage(
  c: AppContext,
  list: string,
  scope: string = c.get("tenant").tenantId,
): Promise<{ limit: number; after?: string }> {
  const rawLimit = c.req.query("limit");
  let limit = DEFAULT_PAGE_LIMIT;
  if (rawLimit !== undefined) {
    const parsed = /^[0-9]{1,4}$/.test(rawLimit) ? limitSchema.safeParse(rawLimit) : null;
    if (parsed === null || !parsed.success) {
      throw new AppError("bad_request", `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}.`);
    }
    limit = parsed.data;
  }
  return pageFrom(c, list, { limit, cursor: c.req.query("cursor") }, scope);
}

/**
 * The same for a list whose `limit` and `cursor` travel in a JSON body its schema already bounded (a search that
 * keeps an end user's id out of the URL, docs/privacy.md#end-user-ids-stay-out-of-urls).
 */
export async function pageFrom(
  c: AppContext,
  list: string,
  paging: { limit?: number | undefined; cursor?: string | undefined },
  scope: string = c.get("tenant").tenantId,
): Promise<{ limit: number; after?: string }> {
  const limit = paging.limit ?? DEFAULT_PAGE_LIMIT;
  if (paging.cursor === undefined) return { limit };
  return { limit, after: await decodeCursor(c.env, scope, list, paging.cursor) };
}

/** Shapes `{items, nextCursor?}`; `next` is the store's keyset position after the last item. */
export async function pageBody<T>(
  c: AppContext,
  list: string,
  items: T[],
  next: string | undefined,
  scope: string = c.get("tenant").tenantId,
): Promise<{ items: T[]; nextCursor?: string }> {
  if (next === undefined) return { items };
  return { items, nextCursor: await encodeCursor(c.env, scope, list, next) };
}
