// The widget's markdown: an allowlist of DOM nodes, inert against HTML and script URLs, stable while streaming.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_NESTING, safeHref } from "../../src/widget/markdown";
import { headingLine, itemLine, type ScanMeter, trimUrlTail } from "../../src/widget/markdown-scan";
import { MarkdownView, renderMarkdown } from "../../src/widget/render-markdown";
import { StubNode, stubDocument, toHtml } from "../helpers/dom-stub";

const html = (text: string) => toHtml(renderMarkdown(stubDocument, text));
const LINK = 'rel="noopener noreferrer nofollow" target="_blank"';

describe("markdown blocks", () => {
  it("renders paragraphs, soft line breaks and headings without heading elements", () => {
    expect(html("one\ntwo\n\nthree")).toBe("<p>one<br>two</p><p>three</p>");
    expect(html("## Title ##\nbody")).toBe("<p><strong>Title</strong></p><p>body</p>");
  });

  it("renders bullet, ordered and nested lists", () => {
    expect(html("- a\n- b")).toBe("<ul><li><p>a</p></li><li><p>b</p></li></ul>");
    expect(html("3. c\n4. d")).toBe('<ol start="3"><li><p>c</p></li><li><p>d</p></li></ol>');
    expect(html("1. x\n\n2. y")).toBe("<ol><li><p>x</p></li><li><p>y</p></li></ol>");
    expect(html("- a\n  - b\n- c")).toBe(
      "<ul><li><p>a</p><ul><li><p>b</p></li></ul></li><li><p>c</p></li></ul>",
    );
    expect(html("- a\n* b")).toBe("<ul><li><p>a</p></li></ul><ul><li><p>b</p></li></ul>");
  });

  it("renders fenced code as text, also while the fence is still open", () => {
    expect(html("```js\n<b>x</b>\n  y\n```\nafter")).toBe(
      '<pre data-lang="js" tabindex="0"><code>&lt;b&gt;x&lt;/b&gt;\n  y</code></pre><p>after</p>',
    );
    expect(html("text\n```\nstill streaming")).toBe(
      '<p>text</p><pre tabindex="0"><code>still streaming</code></pre>',
    );
  });

  it("renders blockquotes and rules", () => {
    expect(html("> quoted\n> **more**\n\n---")).toBe(
      "<blockquote><p>quoted<br><strong>more</strong></p></blockquote><hr>",
    );
  });
});

describe("markdown inlines", () => {
  it("renders emphasis, strong and code spans, leaving intraword underscores alone", () => {
    expect(html("*em* **strong** `a < b` _u_ snake_case_name ***both***")).toBe(
      "<p><em>em</em> <strong>strong</strong> <code>a &lt; b</code> <em>u</em> snake_case_name " +
        "<strong><em>both</em></strong></p>",
    );
    expect(html("2 * 3 * 4 and ** not closed")).toBe("<p>2 * 3 * 4 and ** not closed</p>");
    expect(html("\\*literal\\* and \\`tick\\`")).toBe("<p>*literal* and `tick`</p>");
  });

  it("links http(s) and mailto targets in a new tab without an opener", () => {
    expect(html("[site](https://example.com/a?b=1)")).toBe(
      `<p><a href="https://example.com/a?b=1" ${LINK}>site</a></p>`,
    );
    expect(html("[**mail**](mailto:team@example.com)")).toBe(
      `<p><a href="mailto:team@example.com" ${LINK}><strong>mail</strong></a></p>`,
    );
    expect(html("<https://example.com>")).toBe(
      `<p><a href="https://example.com/" ${LINK}>https://example.com</a></p>`,
    );
    expect(html("see https://example.com/x_(y). next")).toBe(
      `<p>see <a href="https://example.com/x_(y)" ${LINK}>https://example.com/x_(y)</a>. next</p>`,
    );
  });

  it("never links script, data, relative or obfuscated URLs: the label stays as text", () => {
    for (const url of [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      "&#106;avascript:alert(1)",
      "vbscript:msgbox(1)",
      "data:text/html,<script>alert(1)</script>",
      "/relative/path",
      "//evil.example/x",
      "file:///etc/passwd",
    ]) {
      const out = html(`[x](${url})`);
      expect(out, url).not.toContain("<a");
      expect(out, url).toContain("x");
    }
    expect(html("[x](java\tscript:alert(1))")).not.toContain("<a");
    expect(html("[x](javascript:alert(1))")).toBe("<p>x</p>");
  });

  it("never creates images: a markdown image becomes a link to it", () => {
    expect(html("![a cat](https://example.com/cat.png)")).toBe(
      `<p><a href="https://example.com/cat.png" ${LINK}>a cat</a></p>`,
    );
    expect(html("![x](javascript:alert(1))")).toBe("<p>x</p>");
  });

  it("shows raw HTML as text", () => {
    expect(html("<img src=x onerror=alert(1)>")).toBe("<p>&lt;img src=x onerror=alert(1)&gt;</p>");
    expect(html("<script>alert(1)</script> <b onclick=x>b</b>")).toBe(
      "<p>&lt;script&gt;alert(1)&lt;/script&gt; &lt;b onclick=x&gt;b&lt;/b&gt;</p>",
    );
  });
});

describe("safeHref", () => {
  it("normalises allowed URLs and refuses everything else", () => {
    expect(safeHref(" https://Example.COM/path ")).toBe("https://example.com/path");
    expect(safeHref("mailto:a@b.example")).toBe("mailto:a@b.example");
    expect(safeHref("https://example.com/a b")).toBeNull();
    expect(safeHref("https://example.com/\u0000")).toBeNull();
    expect(safeHref("https://example.com/\u0085")).toBeNull();
    expect(safeHref("ftp://example.com")).toBeNull();
    expect(safeHref("")).toBeNull();
  });
});

const ALLOWED_TAGS = new Set([
  "p",
  "br",
  "em",
  "strong",
  "code",
  "pre",
  "ul",
  "ol",
  "li",
  "a",
  "blockquote",
  "hr",
]);
const ALLOWED_ATTRIBUTES = new Set(["href", "target", "rel", "start", "tabindex", "data-lang"]);

describe("any model output", () => {
  const markdownish = fc.string({
    unit: fc.constantFrom(
      ..."ab <>*_`[]()!#>-+1.\n\\:/\"'=&;",
      "javascript:",
      "https://",
      "<img ",
      "onerror=",
      "```",
    ),
    maxLength: 80,
  });

  it("renders only allowlisted elements and attributes, and links only to http(s) or mailto", () => {
    fc.assert(
      fc.property(fc.oneof(markdownish, fc.string()), (text) => {
        for (const root of renderMarkdown(stubDocument, text)) {
          for (const el of root.elements()) {
            expect(ALLOWED_TAGS.has(el.tag), el.tag).toBe(true);
            for (const name of el.attributes.keys()) expect(ALLOWED_ATTRIBUTES.has(name), name).toBe(true);
            const href = el.attributes.get("href");
            if (href !== undefined) expect(href).toMatch(/^(https?:\/\/|mailto:)/);
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it("shows prose without markdown characters exactly as written", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z ,.?'<&"]{1,60}$/), (text) => {
        fc.pre(text.trim() !== "");
        expect(html(text)).toBe(
          `<p>${text.trim().replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")}</p>`,
        );
      }),
    );
  });
});

/** The text a reader sees, in document order (a code block's language label first, as the widget shows it). */
function shownText(nodes: StubNode[]): string {
  return nodes
    .map((node) =>
      node.nodeType === 3 ? node.text : (node.attributes.get("data-lang") ?? "") + shownText(node.children),
    )
    .join("");
}

/** How many elements deep the rendered tree goes. */
function depthOf(nodes: StubNode[]): number {
  let deepest = 0;
  for (const node of nodes) if (node.nodeType === 1) deepest = Math.max(deepest, 1 + depthOf(node.children));
  return deepest;
}

// Each block level adds at most a list and its item, each inline level one element.
const MAX_ELEMENT_DEPTH = 2 * (MAX_NESTING + 2) + 2;
const words = (text: string) => text.replace(/[^xyz]/g, "");

describe("deeply nested or very long replies", () => {
  const syntax = [
    "> ",
    ">",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "> - ",
    "- > ",
    "*",
    "**",
    "_",
    "__",
    "` ",
    "`x`",
    // A fence's info string shows only its first word (as the language label), so fences end their line here.
    "```\n",
    "~~~\n",
    "```zy\n",
    "[",
    "]",
    "![",
    "# ",
    "---",
    "\\",
    "<",
    ")",
    "https://1.2/",
    "[x](https://1.2/)",
    "![y](https://1.2/)",
  ];
  // Words use only x, y and z, which no syntax token above contains, so every one must reach the page.
  const token = fc.oneof(
    fc.constantFrom(...syntax),
    fc.stringMatching(/^[xyz]{1,6}$/),
    fc.constantFrom(" ", "  ", "    ", "\t", "\n", "\n\n", "\n    "),
  );
  const shallow = fc.array(token, { maxLength: 120 }).map((parts) => parts.join(""));
  // A short run of nesting syntax repeated up to 3,000 times, then a body: the shape that used to overflow the stack.
  const deep = fc
    .tuple(
      fc.array(fc.constantFrom(...syntax.slice(0, 21), "  ", "\n", "\n  ", "x"), {
        minLength: 1,
        maxLength: 4,
      }),
      fc.integer({ min: 1, max: 3_000 }),
      fc.array(token, { maxLength: 20 }),
    )
    .map(([unit, times, body]) => {
      const run = unit.join("");
      return run.repeat(Math.min(times, Math.floor(8_000 / run.length))) + body.join("");
    });

  it('renders `"> - "` repeated 2,000 times, nesting 32 levels and showing the rest as text', () => {
    const text = `${"> - ".repeat(1_999)}deep`;
    expect(text.length).toBe(8_000);
    const nodes = renderMarkdown(stubDocument, text);
    expect(depthOf(nodes)).toBeLessThanOrEqual(MAX_ELEMENT_DEPTH);
    // 17 quotes and 16 lists deep (33 levels), then the rest of the line as it was written.
    const rest = text.slice(16 * 4 + 2).replace(/>/g, "&gt;");
    expect(toHtml(nodes)).toBe(
      `${"<blockquote><ul><li>".repeat(16)}<blockquote><p>${rest}</p></blockquote>${"</li></ul></blockquote>".repeat(16)}`,
    );
    // While streaming too: the transcript re-renders the growing reply on every frame.
    const root = new StubNode(1, "div");
    const view = new MarkdownView(stubDocument, root);
    for (let end = 0; end <= text.length; end += 997) view.update(text.slice(0, end));
    view.update(text);
    expect(toHtml(root.children)).toBe(toHtml(nodes));
  });

  it("renders any nesting of quotes, lists, code, emphasis and links without throwing, keeping every word", () => {
    fc.assert(
      fc.property(fc.oneof(shallow, deep), (text) => {
        const nodes = renderMarkdown(stubDocument, text);
        expect(depthOf(nodes)).toBeLessThanOrEqual(MAX_ELEMENT_DEPTH);
        expect(words(shownText(nodes))).toBe(words(text));
      }),
      { numRuns: 300 },
    );
  });

  it("renders replies of hundreds of thousands of lines, as the model's output limit allows", () => {
    // 200,000 output tokens is about 800,000 characters. Each shape once spread one argument per node into a single
    // call, which overflows the stack past about 120,000 arguments.
    for (const unit of ["x\n", "x\n\n", "- x\n", "> x\n", "[x\n"]) {
      const text = unit === "[x\n" ? `[${"x\n".repeat(150_000)}](javascript:1)` : unit.repeat(150_000);
      const root = new StubNode(1, "div");
      new MarkdownView(stubDocument, root).update(text);
      expect(words(shownText(root.children)).length, JSON.stringify(unit)).toBe(words(text).length);
    }
  });
});

describe("MarkdownView", () => {
  it("keeps finished blocks' nodes while the last block grows", () => {
    const root = new StubNode(1, "div");
    const view = new MarkdownView(stubDocument, root);
    view.update("First paragraph.\n\nSecond");
    const [first, second] = root.children;
    view.update("First paragraph.\n\nSecond, longer");
    expect(root.children[0]).toBe(first);
    expect(root.children[1]).not.toBe(second);
    expect(toHtml(root.children)).toBe("<p>First paragraph.</p><p>Second, longer</p>");
  });

  it("renders the same as a one-shot render however the text was split into deltas", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(..."ab *_`\n-1.>[]()", "https://x.io"), maxLength: 60 }),
        fc.array(fc.nat(60), { maxLength: 6 }),
        (text, cuts) => {
          const root = new StubNode(1, "div");
          const view = new MarkdownView(stubDocument, root);
          for (const cut of [...cuts].sort((a, b) => a - b)) view.update(text.slice(0, cut));
          view.update(text);
          expect(toHtml(root.children)).toBe(html(text));
        },
      ),
    );
  });
});

// The regexes the scanners replaced, kept here only as the reference they must agree with.
const HEADING_REGEX = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const ITEM_REGEX = /^( {0,3})([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
const URL_TAIL_REGEX = /[.,;:!?'"*_~]+$/;

function headingOracle(line: string) {
  const m = line.match(HEADING_REGEX);
  return m === null ? null : { level: /^ *(#+)/.exec(line)![1]!.length, text: m[1] };
}

function itemOracle(line: string) {
  const m = line.match(ITEM_REGEX);
  return m === null ? null : { lead: m[1]!, mark: m[2]!, rest: m[3] };
}

function urlTailOracle(url: string) {
  let out = url.replace(URL_TAIL_REGEX, "");
  while (out.endsWith(")") && (out.match(/\(/g) ?? []).length < (out.match(/\)/g) ?? []).length) {
    out = out.slice(0, -1).replace(URL_TAIL_REGEX, "");
  }
  return out;
}

const grammarLine = fc.string({
  unit: fc.constantFrom(
    " ",
    "\t",
    "#",
    "a",
    "x",
    "\r",
    "\u2028",
    "\u2029",
    "-",
    "*",
    ">",
    "1",
    ".",
    "+",
    ")",
  ),
  maxLength: 40,
});
// Half the lines start like a heading or an item, so the property reaches the grammar's inner cases.
const syntaxLine = fc.oneof(
  grammarLine,
  fc
    .tuple(fc.constantFrom("", " ", "   ", "    ", "#", "######", "# ", "- ", "1. ", "12)"), grammarLine)
    .map(([head, rest]) => (head + rest).slice(0, 40)),
);

describe("markdown line scanners", () => {
  it("read headings exactly as the former heading regex did", () => {
    const cases: [string, { level: number; text: string | undefined } | null][] = [
      ["#", { level: 1, text: undefined }],
      ["# ", { level: 1, text: "" }],
      ["#\t \t", { level: 1, text: "" }],
      ["# #", { level: 1, text: "#" }],
      ["# ##", { level: 1, text: "##" }],
      ["#  foo ##  ", { level: 1, text: "foo" }],
      ["## foo # ##", { level: 2, text: "foo #" }],
      ["### foo#", { level: 3, text: "foo#" }],
      ["###### x", { level: 6, text: "x" }],
      ["   # x", { level: 1, text: "x" }],
      ["####### x", null],
      ["#foo", null],
      ["    # x", null],
      ["\t# x", null],
      ["# x\r", null],
      ["# \u2028", null],
      ["#\u2029", null],
    ];
    for (const [line, expected] of cases) {
      expect(headingLine(line), JSON.stringify(line)).toEqual(expected);
      expect(headingOracle(line), JSON.stringify(line)).toEqual(expected);
    }
  });

  it("agree with the former regexes on any line of markdown syntax characters", () => {
    fc.assert(
      fc.property(syntaxLine, (line) => {
        expect(headingLine(line)).toEqual(headingOracle(line));
        expect(itemLine(line)).toEqual(itemOracle(line));
      }),
      { numRuns: 5000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(..."a()/.,;:!?'\"*_~"), maxLength: 40 }), (tail) => {
        const url = `https://x.io/${tail}`;
        expect(trimUrlTail(url)).toBe(urlTailOracle(url));
      }),
      { numRuns: 2000 },
    );
  });

  it("examine each character of an adversarial line a bounded number of times", () => {
    const families: ((n: number) => string)[] = [
      (n) => `#${" ".repeat(n)}\u2028`,
      (n) => `# a${" ".repeat(n)}b`,
      (n) => `# a${" \t".repeat(n)}#\u2029`,
      (n) => `#${"#".repeat(n)}`,
      (n) => `- ${" ".repeat(n)}\u2028`,
      (n) => `1.${"\t".repeat(n)}\r`,
      (n) => `https://x.io/${".".repeat(n)}x`,
      (n) => `https://x.io/${")".repeat(n)}`,
    ];
    for (const family of families) {
      for (const n of [0, 1, 10, 1_000, 100_000]) {
        const line = family(n);
        for (const scan of [headingLine, itemLine, trimUrlTail]) {
          const meter: ScanMeter = { steps: 0 };
          scan(line, meter);
          expect(meter.steps, `${scan.name} on ${n}`).toBeLessThanOrEqual(4 * (line.length + 1));
        }
      }
    }
  });

  it("renders long adversarial lines with their text kept", () => {
    const spaces = " ".repeat(50_000);
    expect(html(`# a${spaces}b`)).toBe(`<p><strong>a${spaces}b</strong></p>`);
    expect(html(`## Title${spaces}###${spaces}`)).toBe("<p><strong>Title</strong></p>");
    expect(html(`#${spaces}\u2028`)).toBe("<p>#</p>");
    expect(html(`- item${spaces}\u2028 end`)).toBe(`<p>- item${spaces}\u2028 end</p>`);
    expect(html(`- item${spaces}end`)).toBe(`<ul><li><p>item${spaces}end</p></li></ul>`);
    expect(html(`see https://x.io/a${".".repeat(3_000)} next`)).toBe(
      `<p>see <a href="https://x.io/a" ${LINK}>https://x.io/a</a>${".".repeat(3_000)} next</p>`,
    );
    fc.assert(
      fc.property(
        fc.constantFrom("#", "##", "-", "1.", "> #", "- #"),
        fc.constantFrom(" ", "\t", " \t"),
        fc.integer({ min: 1_000, max: 20_000 }),
        fc.constantFrom("\u2028", "\u2029", "b", "#", " #x"),
        (head, run, n, tail) => {
          const text = `${head} a${run.repeat(n)}${tail}`;
          expect(html(text)).toContain("a");
          expect(html(text)).not.toContain("<h");
        },
      ),
      { numRuns: 20 },
    );
  });
});
