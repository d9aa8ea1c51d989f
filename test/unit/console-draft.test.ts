// The console's draft tools without a browser: the live check against the served artifact schema (it must name
// the same fields the server's zod schema refuses), edits at a path, the structural diff, and release weights.

import type { Schema } from "@cfworker/json-schema";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { diffJson, sameJson } from "../../src/console/draft/diff";
import { anchorOf, anchorsOf } from "../../src/console/draft/form-fields";
import { fromPointer, parseJson, parseKey, pathKey, setAt } from "../../src/console/draft/json-path";
import { artifactCheck, serverIssues } from "../../src/console/draft/schema";
import { evenSplit, percent, rebalance, TOTAL } from "../../src/console/draft/weights";
import { artifactSchema } from "../../src/control/artifact";
import { artifactDocument } from "../../src/routes/contract";

const check = artifactCheck(artifactDocument() as Schema);
const valid = {
  schemaVersion: 1,
  name: "Support",
  instructions: "Be kind.",
  model: { provider: "local", model: "echo" },
  greeting: "Hi!",
  suggestedPrompts: ["Where is my order?"],
  widget: { accentColor: "#3b3bd6", theme: "dark" },
  limits: { maxMessageChars: 4000, retention: { mode: "zero", idleMinutes: 10 } },
};

describe("the live artifact check", () => {
  it("accepts what the server's schema accepts", () => {
    expect(artifactSchema.safeParse(valid).success).toBe(true);
    expect(check(valid)).toEqual([]);
  });

  it("names each failing field by the path the API uses, in a sentence", () => {
    const draft = {
      ...valid,
      name: "",
      model: { provider: "nope", model: "echo" },
      widget: { accentColor: "red" },
      suggestedPrompts: ["ok", ""],
      limits: { maxMessageChars: "many" },
      colour: "blue",
    };
    const issues = check(draft);
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: "name", message: "must not be empty", source: "schema" },
        {
          path: "model.provider",
          message: "must be one of: local, workers-ai, openai-compatible, anthropic",
          source: "schema",
        },
        { path: "widget.accentColor", message: "must be a colour as #rrggbb", source: "schema" },
        { path: "suggestedPrompts.1", message: "must not be empty", source: "schema" },
        { path: "limits.maxMessageChars", message: "must be a whole number", source: "schema" },
        { path: "colour", message: "is not a field here (unknown fields are refused)", source: "schema" },
      ]),
    );
    // One issue per field: the "a property below failed" reports are not repeated at the parents.
    expect(issues.map((i) => i.path).sort()).toEqual(
      [
        "colour",
        "limits.maxMessageChars",
        "model.provider",
        "name",
        "suggestedPrompts.1",
        "widget.accentColor",
      ].sort(),
    );
    // The server's own schema refuses the same fields.
    const zodPaths =
      artifactSchema.safeParse(draft).error?.issues.map((i) => i.path.join(".") || "(root)") ?? [];
    for (const path of [
      "name",
      "model.provider",
      "widget.accentColor",
      "suggestedPrompts.1",
      "limits.maxMessageChars",
    ])
      expect(zodPaths).toContain(path);
  });

  it("reports a missing required field at the field, not at its object", () => {
    const { model: _model, ...noModel } = valid;
    expect(check(noModel)).toEqual([{ path: "model", message: "is required", source: "schema" }]);
    expect(check({ ...valid, model: { provider: "local" } })).toEqual([
      { path: "model.model", message: "is required", source: "schema" },
    ]);
    expect(check([])).toEqual([{ path: "(root)", message: "must be an object", source: "schema" }]);
  });

  it("reads the server's 400 details, and nothing else, as issues", () => {
    expect(serverIssues([{ path: "model.baseUrl", message: "must be public" }, { path: 3 }, "x"])).toEqual([
      { path: "model.baseUrl", message: "must be public", source: "server" },
    ]);
    expect(serverIssues(undefined)).toEqual([]);
  });

  it("places every issue at the nearest field the form shows", () => {
    const anchors = anchorsOf({ ...valid, tools: [{ name: "a" }] });
    expect(anchorOf("widget.accentColor", anchors)).toBe("widget.accentColor");
    expect(anchorOf("tools.0.identity./user", anchors)).toBe("tools.0");
    expect(anchorOf("model.local.chunks", anchors)).toBe("model");
    expect(anchorOf("tools.1.name", anchors)).toBe("tools");
    expect(anchorOf("colour", anchors)).toBeNull();
  });
});

describe("paths and edits", () => {
  it("spells paths as the API does and reads JSON Pointers", () => {
    expect(pathKey([])).toBe("(root)");
    expect(pathKey(["tools", 0, "name"])).toBe("tools.0.name");
    expect(fromPointer("#/tools/0/name")).toEqual(["tools", 0, "name"]);
    expect(fromPointer("#/widget/strings/a~1b")).toEqual(["widget", "strings", "a/b"]);
    expect(fromPointer("#")).toEqual([]);
    expect(parseKey("tools.0.name")).toEqual(["tools", 0, "name"]);
    expect(parseKey("(root)")).toEqual([]);
  });

  it("sets a value at a path, creating what is missing, without touching the original", () => {
    const before = { name: "a" };
    const after = setAt(before, ["widget", "theme"], "dark");
    expect(after).toEqual({ name: "a", widget: { theme: "dark" } });
    expect(before).toEqual({ name: "a" });
    expect(setAt({ suggestedPrompts: ["a"] }, ["suggestedPrompts", 1], "b")).toEqual({
      suggestedPrompts: ["a", "b"],
    });
  });

  it("removes a cleared optional field and the container it leaves empty", () => {
    expect(setAt({ name: "a", widget: { theme: "dark" } }, ["widget", "theme"], undefined)).toEqual({
      name: "a",
    });
    expect(setAt({ handoff: { enabled: true } }, ["handoff", "enabled"], undefined)).toEqual({});
    expect(setAt({ suggestedPrompts: ["a", "b", "c"] }, ["suggestedPrompts", 1], undefined)).toEqual({
      suggestedPrompts: ["a", "c"],
    });
    expect(setAt({ tools: [{ name: "x" }] }, ["tools", 0], undefined)).toEqual({});
    // A required text cleared to "" stays, so the check can say it must not be empty.
    expect(setAt({ name: "a" }, ["name"], "")).toEqual({ name: "" });
  });

  it("says where JSON stops parsing", () => {
    expect(parseJson('{"a": 1}')).toEqual({ ok: true, value: { a: 1 } });
    const broken = parseJson('{\n  "a": 1,\n}');
    expect(broken.ok).toBe(false);
    if (!broken.ok) expect(broken.message).toMatch(/line 3, column 1/);
  });
});

describe("diffJson", () => {
  it("lists changed, added and removed fields by path, ignoring key order", () => {
    const a = {
      name: "A",
      model: { provider: "local", model: "echo" },
      greeting: "Hi",
      suggestedPrompts: ["x"],
    };
    const b = {
      model: { model: "lorem", provider: "local" },
      name: "A",
      suggestedPrompts: ["x", "y"],
      upgrades: "offer",
    };
    expect(diffJson(a, b)).toEqual([
      { path: "greeting", kind: "removed", before: "Hi" },
      { path: "model.model", kind: "changed", before: "echo", after: "lorem" },
      { path: "suggestedPrompts.1", kind: "added", after: "y" },
      { path: "upgrades", kind: "added", after: "offer" },
    ]);
    expect(diffJson(a, structuredClone(a))).toEqual([]);
  });

  it("reports a change of type as one change at that path", () => {
    expect(diffJson({ limits: { a: 1 } }, { limits: [1] })).toEqual([
      { path: "limits", kind: "changed", before: { a: 1 }, after: [1] },
    ]);
    expect(diffJson(1, 2)).toEqual([{ path: "(root)", kind: "changed", before: 1, after: 2 }]);
    expect(sameJson({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true);
    expect(sameJson({ a: undefined }, { b: undefined })).toBe(false);
  });
});

describe("release weights", () => {
  const sum = (weights: number[]) => weights.reduce((a, b) => a + b, 0);

  it("splits evenly into positive parts that sum to 10,000", () => {
    expect(evenSplit(2)).toEqual([5000, 5000]);
    expect(evenSplit(3)).toEqual([3334, 3333, 3333]);
    expect(sum(evenSplit(7))).toBe(TOTAL);
  });

  it("moves one weight and shares the rest among the others in proportion", () => {
    expect(rebalance([5000, 5000], 0, 7000)).toEqual([7000, 3000]);
    expect(rebalance([5000, 3000, 2000], 0, 6000)).toEqual([6000, 2400, 1600]);
    expect(rebalance([10_000], 0, 3)).toEqual([10_000]);
    // Others that were equal stay equal.
    expect(rebalance([9998, 1, 1], 0, 4000)).toEqual([4000, 3000, 3000]);
  });

  it("keeps every weight at least 1, whatever is asked", () => {
    expect(rebalance([5000, 5000], 0, 10_000)).toEqual([9999, 1]);
    expect(rebalance([5000, 5000], 1, -5)).toEqual([9999, 1]);
  });

  it("always answers positive integers summing to 10,000 (any weights, index and target)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: TOTAL }), { minLength: 1, maxLength: 50 }),
        fc.nat(),
        fc.integer({ min: -20_000, max: 20_000 }),
        (weights, at, target) => {
          const index = at % weights.length;
          const next = rebalance(weights, index, target);
          expect(next).toHaveLength(weights.length);
          expect(sum(next)).toBe(TOTAL);
          for (const w of next) {
            expect(Number.isInteger(w)).toBe(true);
            expect(w).toBeGreaterThanOrEqual(1);
          }
        },
      ),
    );
  });

  it("shows weights as percentages", () => {
    expect(percent(5000)).toBe("50 %");
    expect(percent(3333)).toBe("33.33 %");
    expect(percent(10_000)).toBe("100 %");
    expect(percent(1)).toBe("0.01 %");
    expect(percent(2050)).toBe("20.5 %");
  });
});
