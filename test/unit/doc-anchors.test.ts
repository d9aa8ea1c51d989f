// A comment or doc citing `docs/<name>.md#<section>` must name a heading that exists, so a renamed section cannot
// leave the code pointing at nothing (scripts/check-docs.mjs runs this over src/, scripts/, README.md and docs/).
import { describe, expect, it } from "vitest";
import { anchorOf, anchorsOf, brokenAnchors } from "../../scripts/lib/doc-paths.mjs";

const PROTOCOL =
  "# Protocol\n\n## Close codes\n\n```md\n## Not a heading\n```\n\n## One run at a time, and double-texting\n";
const anchorsIn = (doc: string) => (doc === "docs/protocol.md" ? anchorsOf(PROTOCOL) : null);

describe("doc anchors", () => {
  it("makes anchors the way GitHub does: lower case, punctuation dropped, spaces to hyphens", () => {
    expect(anchorOf("One run at a time, and double-texting")).toBe("one-run-at-a-time-and-double-texting");
    expect(anchorOf("HTTP API (same launch token, `Authorization: Bearer`)")).toBe(
      "http-api-same-launch-token-authorization-bearer",
    );
    expect([...anchorsOf(PROTOCOL)]).toEqual([
      "protocol",
      "close-codes",
      "one-run-at-a-time-and-double-texting",
    ]);
  });

  it("reports a cited section that is not a heading, and a document that does not exist, with file and line", () => {
    const source = [
      "// closes 1009 (docs/protocol.md#close-codes)",
      "// see docs/protocol.md#runs",
      "// and docs/missing.md#anything",
      "// queued (docs/protocol.md#one-run-at-a-time-and-double-texting)",
      "// not a heading: docs/protocol.md#not-a-heading",
    ].join("\n");
    expect(brokenAnchors("src/x.ts", source, anchorsIn)).toEqual([
      "src/x.ts:2: docs/protocol.md has no heading #runs",
      "src/x.ts:3: docs/missing.md does not exist",
      "src/x.ts:5: docs/protocol.md has no heading #not-a-heading",
    ]);
  });
});
