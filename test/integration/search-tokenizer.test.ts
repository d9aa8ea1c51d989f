// Search terms are cut exactly where D1's FTS5 tokenizer cuts them, read back from the real index with fts5vocab:
// every code point's class, and random Unicode text word for word.
import { env } from "cloudflare:workers";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { TOKEN_CLASS_RUNS } from "../../src/storage/d1/fts5-token-classes";
import { indexTerms, tenantToken, words } from "../../src/storage/d1/search-terms";

const terms = z.array(z.tuple([z.string()]));
/** Rowids far below any the projection writes (they are minus agent_messages' rowids). */
let nextRow = -1_000_000_000;

beforeAll(async () => {
  await env.DB.exec(
    "CREATE VIRTUAL TABLE IF NOT EXISTS search_probe_vocab USING fts5vocab(agent_messages_fts, instance)",
  );
});

/** The terms FTS5 makes of each text, in order, as the real index (agent_messages_fts) tokenizes them. */
async function tokenize(texts: string[]): Promise<string[][]> {
  const rows = texts.map(() => nextRow--);
  await env.DB.batch(
    texts.map((text, i) =>
      env.DB.prepare(
        "INSERT INTO agent_messages_fts (rowid, body, tenant_id, session_id, entry_id) VALUES (?, ?, 'probe', 'probe', 'probe')",
      ).bind(rows[i], text),
    ),
  );
  const out: string[][] = [];
  for (const row of rows) {
    const result = await env.DB.prepare("SELECT term FROM search_probe_vocab WHERE doc = ? ORDER BY offset")
      .bind(row)
      .raw();
    out.push(terms.parse(result).map(([term]) => term));
  }
  await env.DB.batch(
    rows.map((row) => env.DB.prepare("DELETE FROM agent_messages_fts WHERE rowid = ?").bind(row)),
  );
  return out;
}

describe("search terms and the FTS5 tokenizer", () => {
  it("class every code point as the tokenizer does", { timeout: 180_000 }, async () => {
    // Each code point c as "q<c>z" (one term when c is part of a word) and as "<c>z" (c starts a word unless the
    // term is a bare "z"); surrogates are skipped (D1 stores a lone one as U+FFFD, a separator).
    const classes = new Uint8Array(0x110000);
    const BATCH = 8192;
    for (let base = 0; base < 0x110000; base += BATCH) {
      const points: number[] = [];
      for (let c = base; c < Math.min(base + BATCH, 0x110000); c++)
        if (c < 0xd800 || c > 0xdfff) points.push(c);
      const [inside, first] = await tokenize([
        points.map((c) => `q${String.fromCodePoint(c)}z`).join(" "),
        points.map((c) => `${String.fromCodePoint(c)}z`).join(" "),
      ]);
      let k = 0;
      points.forEach((c, i) => {
        const joined = inside![k] !== "q";
        k += joined ? 1 : 2;
        const starts = first![i] !== "z";
        classes[c] = starts ? 2 : joined ? 1 : 0;
      });
      expect(k).toBe(inside!.length);
      expect(first!.length).toBe(points.length);
    }
    const runs: string[] = [];
    let at = 0;
    for (let c = 1; c < 0x110000; c++) {
      if (classes[c] !== classes[c - 1]) {
        runs.push(`${(c - at).toString(36)}${classes[c]}`);
        at = c;
      }
    }
    // On a mismatch this prints the table src/storage/d1/fts5-token-classes.ts should hold.
    expect(runs.join(",")).toBe(TOKEN_CLASS_RUNS);
  });

  it("cut any Unicode text into the words FTS5 makes of it, one term per word under the tenant's key", async () => {
    const key = tenantToken("ten_probe").toLowerCase();
    const unit = fc.oneof(
      fc.constantFrom(
        "a",
        "Z",
        "7",
        " ",
        "-",
        "'",
        "\u0301",
        "\u0308",
        "\u0331",
        "\u0332",
        "\u0903",
        "\u064b",
      ),
      fc.constantFrom(
        "\u19b0",
        "\ue000",
        "\u0378",
        "\ud800",
        "\u00e9",
        "e\u0301",
        "\ufb01",
        "\u2460",
        "東",
        "\u200d",
      ),
      fc.constantFrom(
        "Mu\u0308ller",
        "t74656E5F62x",
        "\u0301x",
        "x\u0903y",
        "\u{1f600}",
        "\u{e0001}",
        "\u{10ffff}",
      ),
      fc.string({ unit: "binary", maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(unit, { maxLength: 24 }).map((parts) => parts.join("")),
        async (text) => {
          const cut = words(text);
          const [whole, joined, indexed] = await tokenize([
            text.normalize("NFKC"),
            cut.join(" "),
            indexTerms("ten_probe", text),
          ]);
          // Our words, once FTS5 folds them, are exactly the terms FTS5 makes of the text itself...
          expect(joined).toEqual(whole);
          expect(joined!.length).toBe(cut.length);
          // ...so each indexed word stays one term, and each term starts with the tenant's key.
          expect(indexed!.length).toBe(cut.length);
          for (const term of indexed!) expect(term.startsWith(key)).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });
});
