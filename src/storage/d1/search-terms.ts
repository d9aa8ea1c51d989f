// The words of message text and of search queries as the search index stores them (migrations/0010): each word is
// one term that starts with its tenant's key, so a query reads only its own tenant's doclist for each word.
//
// Index and query cut words with the same function, and it cuts exactly where FTS5's tokenizer does
// (./fts5-token-classes): were FTS5 to cut inside one of our words, the part after the cut would be a term without
// this tenant's key, or with another tenant's key spelled out in the text (docs/security.md#tenancy). FTS5 then folds
// both the same way (case, and diacritics).

import { CONTINUES, tokenClass, WORD } from "./fts5-token-classes";

/** Words beyond this many in a query are ignored: each is one more posting list to intersect. */
const QUERY_MAX_WORDS = 16;
/** Roles whose `message` entries are searchable (never tool results or events). */
const SEARCHABLE_ROLES = new Set(["user", "assistant", "human_agent"]);

const encoder = new TextEncoder();

/**
 * The tenant's key as every one of its terms starts: `t`, the hex of the id's UTF-8 bytes, `x`. Letters and digits
 * only, so the tokenizer never cuts a term inside it, and injective: hex has no `x`, so where the key ends is fixed.
 */
export function tenantToken(tenantId: string): string {
  let hex = "";
  for (const byte of encoder.encode(tenantId)) hex += byte.toString(16).toUpperCase().padStart(2, "0");
  return `t${hex}x`;
}

/**
 * The words of `text` after compatibility composition, cut as FTS5's unicode61 tokenizer cuts them: a word starts at a
 * word character and runs over word characters and the diacritics it folds away; everything else separates.
 */
export function words(text: string): string[] {
  const out: string[] = [];
  let word = "";
  for (const char of text.normalize("NFKC")) {
    const kind = tokenClass(char.codePointAt(0)!);
    if (kind === WORD || (kind === CONTINUES && word !== "")) word += char;
    else if (word !== "") {
      out.push(word);
      word = "";
    }
  }
  if (word !== "") out.push(word);
  return out;
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
