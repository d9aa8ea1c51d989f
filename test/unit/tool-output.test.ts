// A client tool's answer: at most 64 KiB as JSON, and what its outputSchema admits, with field issues otherwise.
import { describe, expect, it } from "vitest";
import { type ArtifactTool, toolSchema } from "../../src/control/artifact";
import { checkToolOutput } from "../../src/control/tool-output";
import { MAX_TOOL_RESULT_BYTES } from "../../src/shared/protocol";

const tool = (fields: Record<string, unknown> = {}): ArtifactTool =>
  toolSchema.parse({ name: "pick_date", description: "Asks for a date.", executor: "client", ...fields });

const slots = tool({
  outputSchema: {
    type: "object",
    properties: {
      date: { type: "string" },
      slots: { type: "array", items: { type: "integer", minimum: 0 } },
      who: { $ref: "#/$defs/who" },
    },
    required: ["date"],
    additionalProperties: false,
    $defs: { who: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
  },
});

describe("checkToolOutput", () => {
  it("admits any JSON up to 64 KiB when the tool has no outputSchema", () => {
    expect(checkToolOutput(tool(), { anything: [1, "two", null] })).toEqual([]);
    expect(checkToolOutput(tool(), "x".repeat(MAX_TOOL_RESULT_BYTES - 2))).toEqual([]);
    expect(checkToolOutput(tool(), null)).toEqual([]);
  });

  it("refuses an answer over 64 KiB as JSON text, at `output`, counting bytes not characters", () => {
    expect(checkToolOutput(tool(), "x".repeat(MAX_TOOL_RESULT_BYTES - 1))).toEqual([
      { path: "output", message: expect.stringContaining(String(MAX_TOOL_RESULT_BYTES)) },
    ]);
    // 3 bytes each in UTF-8: 22,000 characters are 66,000 bytes.
    expect(checkToolOutput(tool(), "€".repeat(22_000)).map((i) => i.path)).toEqual(["output"]);
    expect(checkToolOutput(slots, { date: "x".repeat(MAX_TOOL_RESULT_BYTES) }).map((i) => i.path)).toEqual([
      "output",
    ]);
  });

  it("admits what the outputSchema admits", () => {
    expect(checkToolOutput(slots, { date: "2026-12-05" })).toEqual([]);
    expect(checkToolOutput(slots, { date: "2026-12-05", slots: [9, 10], who: { name: "Ada" } })).toEqual([]);
  });

  it("names each place the outputSchema refuses, under output", () => {
    const issues = checkToolOutput(slots, { slots: [9, -1, "ten"], who: {}, extra: true });
    expect(issues.map((i) => i.path).sort()).toEqual(
      ["output", "output.extra", "output.slots.1", "output.slots.2", "output.who"].sort(),
    );
    expect(issues.find((i) => i.path === "output")?.message).toContain('"date"');
    expect(issues.find((i) => i.path === "output.who")?.message).toContain('"name"');
    expect(checkToolOutput(slots, "2026-12-05")).toEqual([{ path: "output", message: expect.any(String) }]);
  });
});
