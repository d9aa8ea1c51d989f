// Search snippets: plain text around the first matching word, cut with an ellipsis, accents and case folded.
import { describe, expect, it } from "vitest";
import { searchWords, snippetOf } from "../../src/storage/d1/session-search";

describe("search snippets", () => {
  it("shows a short text whole", () => {
    expect(snippetOf("Where is my refund?", ["refund"])).toBe("Where is my refund?");
  });

  it("cuts a long text around the first matching word, with ellipses", () => {
    const text = `${"alpha ".repeat(30)}the Refund arrived\n\nlate ${"omega ".repeat(30)}`;
    const snippet = snippetOf(text, ["refund"]);
    expect(snippet.startsWith("…")).toBe(true);
    expect(snippet.endsWith("…")).toBe(true);
    expect(snippet).toContain("the Refund arrived late");
    expect(snippet.split(" ").length).toBeLessThanOrEqual(13);
  });

  it("folds accents and case as the index does, and cuts queries into plain words", () => {
    expect(snippetOf("Le café est fermé", searchWords("CAFE"))).toBe("Le café est fermé");
    expect(searchWords('"refund* OR NEAR(x, 2)')).toEqual(["refund", "OR", "NEAR", "x", "2"]);
    expect(searchWords('"*"')).toEqual([]);
  });
});
