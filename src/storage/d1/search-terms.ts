// The words of message text and of search queries as the search index stores them (migrations/0010): each word is
// one term that starts with its tenant's key, so a query reads only its own tenant's doclist for each word.
//
// Index and query cut words with the same function and FTS5's tokenizer then folds both the same way (case, and
// diacritics), so whatever a word is cut into, the query's terms are the ones the text was indexed under.

/** Words beyond this many in a query are ignored: each is one more posting list to intersect. */
const QUERY_MAX_WORDS = 16;
/** Roles whose `message` entries are searchable (never tool results or events). */
const SEARCHABLE_ROLES = new Set(["user", "assistant", "human_agent"]);

const encoder = new TextEncoder();
/** Letters, digits and marks (the tokenizer's word characters), after compatibility composition. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/**
 * The tenant's key as every one of its terms starts: `t`, the hex of the id's UTF-8 bytes, `x`. Letters and digits
 * only, so the tokenizer never cuts a term inside it, and injective: hex has no `x`, so where the key ends is fixed.
 */
export function tenantToken(tenantId: string): string {
  let hex = "";
  for (const byte of encoder.encode(tenantId)) hex += byte.toString(16).toUpperCase().padStart(2, "0");
  return `t${hex}x`;
}

function words(text: string): string[] {
  return text.normalize("NFKC").match(WORD) ?? [];
}

/** The words of a user's query (at most 16), or none (then nothing can match). */
export function searchWords(q: string): string[] {
  return words(q).slice(0, QUERY_MAX_WORDS);
}

/** The text the index gets for a message: each word as `<tenant key><word>`, space-separated; '' for no words. */
export function indexTerms(tenantId: string, text: string): string {
  const key = tenantToken(tenantId);
  return words(text)
    .map((w) => key + w)
    .join(" ");
}

/** `search_terms` for a projected row: its terms when it is searchable conversation text, else null. */
export function searchableTerms(
  tenantId: string,
  m: { kind: string; role: string | null; content: string },
): string | null {
  if (m.kind !== "message" || m.role === null || !SEARCHABLE_ROLES.has(m.role)) return null;
  const terms = indexTerms(tenantId, m.content);
  return terms === "" ? null : terms;
}

/**
 * The FTS5 expression for a tenant and a user's words: every word as the tenant's term, each quoted, so `"`, `*`,
 * `OR`, `NEAR(`, `:` and `^` in the user's text are plain text.
 */
export function matchExpression(tenantId: string, queryWords: readonly string[]): string {
  const key = tenantToken(tenantId);
  return queryWords.map((w) => `"${key}${w}"`).join(" AND ");
}
