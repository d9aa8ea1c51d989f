// Search index terms: every word of a message and of a query becomes one term that carries its tenant's key.
import { describe, expect, it } from "vitest";
import {
  indexTerms,
  matchExpression,
  searchableTerms,
  searchWords,
  tenantToken,
} from "../../src/storage/d1/search-terms";

describe("search index terms", () => {
  it("prefixes every word of the text with the tenant's key, and nothing else", () => {
    const key = tenantToken("ten_a");
    expect(indexTerms("ten_a", "Where's my refund? Order #1234, café")).toBe(
      [`${key}Where`, `${key}s`, `${key}my`, `${key}refund`, `${key}Order`, `${key}1234`, `${key}café`].join(
        " ",
      ),
    );
    expect(indexTerms("ten_a", "Привет, 東京!")).toBe(`${key}Привет ${key}東京`);
    expect(indexTerms("ten_a", " ?! ")).toBe("");
  });

  it("cuts a query's words as the text's, so decomposed and composed accents meet", () => {
    const decomposed = "Mu\u0308ller";
    expect(indexTerms("ten_a", decomposed)).toBe(indexTerms("ten_a", "Müller"));
    expect(matchExpression("ten_a", searchWords("Müller"))).toBe(`"${tenantToken("ten_a")}Müller"`);
  });

  it("cuts words where FTS5's tokenizer does, not where JS Unicode properties would", () => {
    const key = tenantToken("ten_a");
    // U+0903 and U+064B are marks, but FTS5 separates at them; U+0301 it folds away inside a word only.
    expect(indexTerms("ten_a", "ab\u0903cd e\u064bf")).toBe(
      [`${key}ab`, `${key}cd`, `${key}e`, `${key}f`].join(" "),
    );
    expect(indexTerms("ten_a", "\u0301e\u0301")).toBe(`${key}\u00e9`);
    // An unassigned code point is part of a word to FTS5; a lone surrogate is stored as U+FFFD, a separator.
    expect(indexTerms("ten_a", "a\u0378b c\ud800d")).toBe([`${key}a\u0378b`, `${key}c`, `${key}d`].join(" "));
  });

  it("gives two tenants different terms for the same word, and quotes every query word", () => {
    expect(indexTerms("ten_a", "refund")).not.toBe(indexTerms("ten_b", "refund"));
    // A key cannot run into another's: hex has no `x`, so `t…x` ends at the first `x`.
    expect(tenantToken("ten_a")).toMatch(/^t[0-9A-F]+x$/);
    expect(matchExpression("ten_a", searchWords('refund* OR "x'))).toBe(
      ["refund", "OR", "x"].map((w) => `"${tenantToken("ten_a")}${w}"`).join(" AND "),
    );
  });

  it("indexes only conversation text", () => {
    const message = { kind: "message", role: "user", content: "hello there" };
    expect(searchableTerms("ten_a", message)).toBe(indexTerms("ten_a", "hello there"));
    expect(searchableTerms("ten_a", { ...message, role: "assistant" })).not.toBeNull();
    expect(searchableTerms("ten_a", { ...message, role: "human_agent" })).not.toBeNull();
    expect(searchableTerms("ten_a", { ...message, role: "tool" })).toBeNull();
    expect(searchableTerms("ten_a", { ...message, kind: "event", role: null })).toBeNull();
    expect(searchableTerms("ten_a", { ...message, content: "" })).toBeNull();
  });
});
