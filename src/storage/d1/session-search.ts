// Full-text search over one tenant's message text (SPEC §11): the sessions whose messages contain every word of a
// query, newest match first, each with the matching message and a snippet of it.
//
// The FTS5 index (migrations/0010) starts every row with its tenant's token, and every MATCH here requires that
// token, so FTS5 only walks the caller's postings; `tenant_id = ?` is checked on each hit as well. The user's text
// never reaches FTS5 syntax: it is cut into words (letters, digits and marks, as the tokenizer sees them) and each
// word is quoted, so `"`, `*`, `OR`, `NEAR(`, `:` and `^` are plain text.
import { z } from "zod";
import { type SessionFilter, type SessionRecord, sessionRow } from "./sessions-repository";

/** A query's text is at most this many characters (longer is a 400). */
export const SEARCH_MAX_CHARS = 200;
/** Words beyond this many are ignored: each is one more posting list to intersect. */
const SEARCH_MAX_WORDS = 16;
/** A search looks at the newest this many matching messages (rowid order), so a very common word stays fast. */
export const SEARCH_WINDOW = 10_000;
/** Tokens of context around the match in a snippet. */
const SNIPPET_TOKENS = 12;

export interface SearchMatch {
  entryId: string;
  /** Plain text around the match (no markup; `…` where it was cut). The caller escapes it for its medium. */
  snippet: string;
}

/** Where a page of search results ended: the newest matching message of its last session. */
export interface SearchPosition {
  hit: number;
}

const encoder = new TextEncoder();

/** The tenant's token as the index stores it: `'t' || hex(tenant_id) || 'x'` (hex of the UTF-8 bytes). */
export function tenantToken(tenantId: string): string {
  let hex = "";
  for (const byte of encoder.encode(tenantId)) hex += byte.toString(16).toUpperCase().padStart(2, "0");
  return `t${hex}x`;
}

/** The words of a user's query, or none (then nothing can match). */
export function searchWords(q: string): string[] {
  return (q.normalize("NFKC").match(/[\p{L}\p{N}\p{M}]+/gu) ?? []).slice(0, SEARCH_MAX_WORDS);
}

/** The FTS5 expression for a tenant and a user's words: the tenant's token AND every word, each quoted. */
export function matchExpression(tenantId: string, words: readonly string[]): string {
  return [`tenant : "${tenantToken(tenantId)}"`, ...words.map((w) => `body : "${w}"`)].join(" AND ");
}

const S_COLUMNS = `s.tenant_id, s.id, s.agent_id, s.agent_name, s.environment, s.agent_version, s.artifact_digest,
  s.user_id, s.state, s.mode, s.title, s.message_count, s.last_message_at, s.created_at, s.updated_at`;

interface SearchShape {
  agentId: boolean;
  subject: boolean;
  updatedAfter: boolean;
  cursor: boolean;
  mode?: "agent" | "handoff";
}

/** One search variant. Bindings in order: match, tenant (hits), cursor, tenant (sessions), filters, limit. */
export function searchSql(shape: SearchShape): string {
  let where = "";
  if (shape.agentId) where += " AND s.agent_id = ?";
  if (shape.subject) where += " AND s.user_id = ?";
  if (shape.mode === "handoff") where += " AND s.mode = 'handoff'";
  if (shape.mode === "agent") where += " AND s.mode = 'agent'";
  if (shape.updatedAfter) where += " AND s.updated_at > ?";
  const having = shape.cursor ? " HAVING MAX(w.rowid) < ?" : "";
  return `WITH recent AS (
      SELECT rowid, session_id FROM agent_messages_fts WHERE agent_messages_fts MATCH ? AND tenant_id = ?
      ORDER BY rowid DESC LIMIT ${SEARCH_WINDOW}),
    hits AS (SELECT w.session_id AS session_id, MAX(w.rowid) AS hit FROM recent w GROUP BY w.session_id${having})
    SELECT ${S_COLUMNS}, h.hit AS hit FROM hits h
      JOIN agent_sessions s ON s.tenant_id = ? AND s.id = h.session_id
    WHERE 1 = 1${where} ORDER BY h.hit DESC LIMIT ?`;
}

export const SEARCH_SQL = {
  snippets: `SELECT rowid AS hit, entry_id, snippet(agent_messages_fts, 1, '', '', '…', ${SNIPPET_TOKENS}) AS snippet
    FROM agent_messages_fts WHERE agent_messages_fts MATCH ? AND tenant_id = ?
      AND rowid IN (SELECT value FROM json_each(?))`,
} as const;

/** Every statement text this file can send, for the tenancy test. */
export function searchStatements(): string[] {
  const out: string[] = [SEARCH_SQL.snippets];
  for (const bits of Array.from({ length: 48 }, (_, n) => n)) {
    const mode = bits >= 32 ? "handoff" : bits >= 16 ? "agent" : undefined;
    out.push(
      searchSql({
        agentId: (bits & 1) > 0,
        subject: (bits & 2) > 0,
        updatedAfter: (bits & 4) > 0,
        cursor: (bits & 8) > 0,
        ...(mode !== undefined ? { mode } : {}),
      }),
    );
  }
  return out;
}

const hitRow = z.object({ hit: z.number().int() });
const snippetRow = z.object({ hit: z.number().int(), entry_id: z.string(), snippet: z.string() });

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
  });
  const bindings: (string | number)[] = [match, tenantId];
  if (page.after !== undefined) bindings.push(page.after.hit);
  bindings.push(tenantId);
  if (filter.agentId !== undefined) bindings.push(filter.agentId);
  if (filter.subject !== undefined) bindings.push(filter.subject);
  if (filter.updatedAfter !== undefined) bindings.push(filter.updatedAfter);
  bindings.push(page.limit + 1);
  const { results } = await db
    .prepare(sql)
    .bind(...bindings)
    .all();
  const rows = results
    .slice(0, page.limit)
    .map((r) => ({ session: sessionRow.parse(r), hit: hitRow.parse(r).hit }));
  if (rows.length === 0) return { items: [] };
  const snippets = await db
    .prepare(SEARCH_SQL.snippets)
    .bind(match, tenantId, JSON.stringify(rows.map((r) => r.hit)))
    .all();
  const byHit = new Map(snippets.results.map((r) => snippetRow.parse(r)).map((r) => [r.hit, r]));
  const items = rows.flatMap(({ session, hit }) => {
    const found = byHit.get(hit);
    return found === undefined
      ? []
      : [{ session, match: { entryId: found.entry_id, snippet: found.snippet } }];
  });
  const last = rows[rows.length - 1];
  return results.length > page.limit && last !== undefined ? { items, next: { hit: last.hit } } : { items };
}
