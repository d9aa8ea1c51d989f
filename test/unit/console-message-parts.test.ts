// What the console's session view reads out of projected messages' JSON: tool calls and version changes, never
// trusting their shape.
import { describe, expect, it } from "vitest";
import type { MessageResponse } from "../../src/client/admin";
import { forkLabel, toolCallsOf, versionChangeOf } from "../../src/console/sessions/message-parts";

describe("toolCallsOf", () => {
  it("reads the reply's stored calls and results", () => {
    const toolCalls: MessageResponse["toolCalls"] = [
      {
        toolCallId: "call_1",
        toolName: "lookup",
        input: { id: 1 },
        output: { ok: true },
        step: 0,
        textOffset: 0,
      },
      {
        toolCallId: "call_2",
        toolName: "fail",
        input: {},
        output: "boom",
        isError: true,
        step: 1,
        textOffset: 4,
      },
    ];
    expect(toolCallsOf({ toolCalls })).toEqual([
      { toolCallId: "call_1", toolName: "lookup", input: { id: 1 }, output: { ok: true }, isError: false },
      { toolCallId: "call_2", toolName: "fail", input: {}, output: "boom", isError: true },
    ]);
  });

  it("leaves out what is not a call, and answers nothing for no calls", () => {
    expect(toolCallsOf({ toolCalls: [null, 3, { toolName: 7 }, { toolName: "ok" }] })).toEqual([
      { toolCallId: "", toolName: "ok", input: undefined, output: undefined, isError: false },
    ]);
    expect(toolCallsOf({ toolCalls: null })).toEqual([]);
    expect(toolCallsOf({ toolCalls: { toolName: "x" } })).toEqual([]);
  });
});

describe("versionChangeOf", () => {
  it("reads a version_change entry's move and who made it", () => {
    const content = JSON.stringify({ fromVersion: 1, toVersion: 2, by: "visitor" });
    expect(versionChangeOf({ kind: "version_change", content })).toEqual({
      fromVersion: 1,
      toVersion: 2,
      by: "the visitor",
    });
  });

  it("is null for other kinds and for content that is not a move", () => {
    expect(versionChangeOf({ kind: "message", content: '{"fromVersion":1,"toVersion":2}' })).toBeNull();
    expect(versionChangeOf({ kind: "version_change", content: "" })).toBeNull();
    expect(versionChangeOf({ kind: "version_change", content: '{"fromVersion":"1"}' })).toBeNull();
  });
});

describe("forkLabel", () => {
  it("names alternatives by what they are", () => {
    expect(forkLabel([{ role: "user" }, { role: "user" }])).toBe("edited or resent message");
    expect(forkLabel([{ role: "assistant" }, { role: "assistant" }])).toBe("regenerated reply");
    expect(forkLabel([{ role: "user" }, { role: null }])).toBe("branch");
  });
});
