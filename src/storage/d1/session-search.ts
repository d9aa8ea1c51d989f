// Full-text search over one tenant's message text (docs/api.md): the sessions whose messages contain every word of a
// query, newest match first, each with the matching message and a snippet of it.
//
// The FTS5 index (migrations/0010) holds every word as a term that starts with its tenant's key, and every MATCH
// here asks for the caller's terms (./search-terms), so FTS5 only reads the caller's postings for the query's words;
// `tenant_id = ?` is checked on each hit as well. The user's text never reaches FTS5 syntax: it is cut into words
// (exactly as the tokenizer cuts it, ./search-terms) and each term is quoted.
import { z } from "zod";
import { matchExpression, searchWords } from "./search-terms";
import { SESSION_COLUMNS, type SessionFilter, type SessionRecord, sessionRow } from "./sessions-repository";

/** A query's text is at most this many characters (longer is a 400). */
export const SEARCH_MAX_CHARS = 200;
/**
 * A page looks at most at this many matching messages below the previous page (newest first), so a filter that
 * rejects most sessions cannot make one request walk a whole tenant.
 */
export const SEARCH_WINDOW = 10_000;
/** Matching messages scanned per attempt start at this multiple of the page size and grow fourfold. */
const SCAN_FACTOR = 4;
/** Tokens of context around the match in a snippet. */
const SNIPPET_TOKENS = 12;

export { matchExpression, searchWords, tenantToken } from "./search-terms";

export interface SearchMatch {
  entryId: string;
  /** Plain text around the match (no markup; `…` where it was cut). The caller escapes it for its medium. */
  snippet: string;
}

/** Where a page of search results ended: the newest matching message of its last session. */
export interface SearchPosition {
  hit: number;
}

/** The session list's own columns, on the `s` alias: a search hit reads exactly what a listed session does. */
const S_COLUMNS = SESSION_COLUMNS.split(",")
  .map((column) => `s.${column.trim()}`)
  .join(", ");

interface SearchShape {
  agentId: boolean;
  subject: boolean;
  updatedAfter: boolean;
  cursor: boolean;
  mode?: "agent" | "handoff";
  /** Preview threads only, or (false) none of them. */
  preview: boolean;
}

/**
 * One search variant (CROSS JOIN keeps the page's few hits as the outer loop: otherwise SQLite may walk every session
 * of the tenant and probe the hits): the newest matches (up to a bound, below the cursor), minus sessions that match at or above
 * the cursor (earlier pages), grouped by session at its newest match, joined to the sessions that pass the filters.
 * Bindings in order: match, tenant, [cursor], scan bound, [match, tenant, cursor], tenant, filters, limit.
 */
export function searchSql(shape: SearchShape): string {
  let where = "";
  if (shape.agentId) where += " AND s.agent_id = ?";
  if (shape.subject) where += " AND s.user_id = ?";
  if (shape.mode === "handoff") where += " AND s.mode = 'handoff'";
  if (shape.mode === "agent") where += " AND s.mode = 'agent'";
  where += shape.preview ? " AND s.preview = 1" : " AND s.preview = 0";
  if (shape.updatedAfter) where += " AND s.updated_at > ?";
  // FTS rowids are minus the message's rowid: ascending is newest first, and older than the cursor is greater.
  // The cursor is CAST because D1 binds a JS number as REAL, and FTS5 only uses an INTEGER rowid bound: with a REAL
  // one it walks every match of the query (SQLite then drops the rows out of range), which cost a second page
  // ~35 ms on a 1M-message tenant against ~1 ms.
  const below = shape.cursor ? " AND rowid > CAST(? AS INTEGER)" : "";
  const unseen = shape.cursor
    ? ` WHERE w.session_id NOT IN (SELECT session_id FROM agent_messages_fts
        WHERE agent_messages_fts MATCH ? AND tenant_id = ? AND rowid <= CAST(? AS INTEGER))`
    : "";
  return `WITH recent AS (
      SELECT rowid, session_id FROM agent_messages_fts WHERE agent_messages_fts MATCH ? AND tenant_id = ?${below}
      ORDER BY rowid LIMIT ?),
    hits AS (SELECT w.session_id AS session_id, MIN(w.rowid) AS hit FROM recent w${unseen} GROUP BY w.session_id)
    SELECT ${S_COLUMNS}, h.hit AS hit FROM hits h
      CROSS JOIN agent_sessions s ON s.tenant_id = ? AND s.id = h.session_id
    WHERE 1 = 1${where} ORDER BY h.hit LIMIT ?`;
}

export const SEARCH_SQL = {
  /**
   * The page's matching messages by rowid (FTS rowids are minus agent_messages' rowids). One rowid seek each (CROSS
   * JOIN: with `rowid IN (…)` SQLite chose the `(tenant_id, …)` index and walked every message of the tenant);
   * FTS5's own snippet() would need a MATCH per row, and a `rowid IN (…)` list beside a MATCH is not pushed into FTS5,
   * which then walks every match of the query.
   */
  messages: `SELECT -m.rowid AS hit, m.id AS entry_id, m.content AS content FROM json_each(?) j
      CROSS JOIN agent_messages m ON m.rowid = -j.value
    WHERE m.tenant_id = ?`,
} as const;

/** A word as the index's tokenizer compares it: compatibility-decomposed, marks removed, lower case. */
function fold(word: string): string {
  return word.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase();
}

/**
 * Plain text around the first word of `text` that is one of `words`: about a dozen words, whitespace collapsed,
 * `…` where it was cut.
 */
export function snippetOf(text: string, words: readonly string[]): string {
  const wanted = new Set(words.map(fold));
  const tokens = [...text.matchAll(/[\p{L}\p{N}\p{M}]+/gu)];
  const at = Math.max(
    0,
    tokens.findIndex((t) => wanted.has(fold(t[0]))),
  );
  const first = Math.max(0, at - Math.floor(SNIPPET_TOKENS / 2) + 1);
  const last = Math.min(tokens.length - 1, first + SNIPPET_TOKENS - 1);
  const start = first === 0 ? 0 : (tokens[first]?.index ?? 0);
  const lastToken = tokens[last];
  const end =
    last === tokens.length - 1 || lastToken === undefined
      ? text.length
      : lastToken.index + lastToken[0].length;
  const body = text.slice(start, end).replace(/\s+/g, " ").trim();
  return `${start > 0 ? "…" : ""}${body}${end < text.length ? "…" : ""}`;
}

/** Every statement text this file can send, for the tenancy test. */
export function searchStatements(): string[] {
  const out: string[] = [SEARCH_SQL.messages];
  for (const bits of Array.from({ length: 96 }, (_, n) => n)) {
    const modeBits = bits % 48;
    const mode = modeBits >= 32 ? "handoff" : modeBits >= 16 ? "agent" : undefined;
    out.push(
      searchSql({
        agentId: (bits & 1) > 0,
        subject: (bits & 2) > 0,
        updatedAfter: (bits & 4) > 0,
        cursor: (bits & 8) > 0,
        ...(mode !== undefined ? { mode } : {}),
        preview: bits >= 48,
      }),
    );
  }
  return out;
}

const hitRow = z.object({ hit: z.number().int() });
const messageRow = z.object({ hit: z.number().int(), entry_id: z.string(), content: z.string() });

export interface SearchResult {
  items: { session: SessionRecord; match: SearchMatch }[];
  next?: SearchPosition;
}

/**
 * Sessions of `tenantId` (narrowed by `filter`) whose messages contain every word of `q`, ordered by their newest
 * matching message, newest first. Text with no words matches nothing.
 */
export async function searchSessions(
  db: D1Database,
  tenantId: string,
  q: string,
  filter: SessionFilter,
  page: { limit: number; after?: SearchPosition },
): Promise<SearchResult> {
  const words = searchWords(q);
  if (words.length === 0) return { items: [] };
  const match = matchExpression(tenantId, words);
  const sql = searchSql({
    agentId: filter.agentId !== undefined,
    subject: filter.subject !== undefined,
    updatedAfter: filter.updatedAfter !== undefined,
    cursor: page.after !== undefined,
    ...(filter.mode !== undefined ? { mode: filter.mode } : {}),
    preview: filter.preview === true,
  });
  const after = page.after?.hit;
  const bindingsFor = (scan: number): (string | number)[] => {
    const b: (string | number)[] = [match, tenantId];
    if (after !== undefined) b.push(after);
    b.push(scan);
    if (after !== undefined) b.push(match, tenantId, after);
    b.push(tenantId);
    if (filter.agentId !== undefined) b.push(filter.agentId);
    if (filter.subject !== undefined) b.push(filter.subject);
    if (filter.updatedAfter !== undefined) b.push(filter.updatedAfter);
    b.push(page.limit + 1);
    return b;
  };
  // Most pages fill from the first few hundred matches; one that does not scans deeper, up to the window.
  let scan = Math.min(SEARCH_WINDOW, (page.limit + 1) * SCAN_FACTOR);
  let results: Record<string, unknown>[];
  for (;;) {
    ({ results } = await db
      .prepare(sql)
      .bind(...bindingsFor(scan))
      .all());
    if (results.length > page.limit || scan >= SEARCH_WINDOW) break;
    scan = Math.min(SEARCH_WINDOW, scan * SCAN_FACTOR);
  }
  const rows = results
    .slice(0, page.limit)
    .map((r) => ({ session: sessionRow.parse(r), hit: hitRow.parse(r).hit }));
  if (rows.length === 0) return { items: [] };
  const { results: messages } = await db
    .prepare(SEARCH_SQL.messages)
    .bind(JSON.stringify(rows.map((r) => r.hit)), tenantId)
    .all();
  const byHit = new Map(messages.map((r) => messageRow.parse(r)).map((r) => [r.hit, r]));
  const items = rows.flatMap(({ session, hit }) => {
    const found = byHit.get(hit);
    return found === undefined
      ? []
      : [{ session, match: { entryId: found.entry_id, snippet: snippetOf(found.content, words) } }];
  });
  const last = rows[rows.length - 1];
  return results.length > page.limit && last !== undefined ? { items, next: { hit: last.hit } } : { items };
}
