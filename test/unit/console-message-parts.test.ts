// What the console's session view reads out of projected messages' JSON: tool calls and version changes, never
// trusting their shape.
import { describe, expect, it } from "vitest";
import type { MessageResponse } from "../../src/client/admin";
import { actionOf, forkLabel, toolCallsOf, versionChangeOf } from "../../src/console/sessions/message-parts";

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

describe("actionOf", () => {
  it("reads approval requests, decisions and client tool requests from their bodies", () => {
    const approval = {
      approvalId: "apr_1",
      toolCallId: "call_1",
      name: "refund",
      input: { amount: 20 },
      by: "tenant",
      expiresAt: "2026-12-05T11:00:00.000Z",
      title: "Refund the order",
    };
    expect(actionOf({ kind: "approval_request", content: JSON.stringify({ text: "", approval }) })).toEqual({
      kind: "approval_request",
      approvalId: "apr_1",
      toolName: "refund",
      input: { amount: 20 },
      by: "tenant",
      expiresAt: "2026-12-05T11:00:00.000Z",
      title: "Refund the order",
    });
    const decision = { approvalId: "apr_1", decision: "deny", by: "user", reason: null };
    expect(actionOf({ kind: "approval_decision", content: JSON.stringify({ decision }) })).toEqual({
      kind: "approval_decision",
      approvalId: "apr_1",
      decision: "deny",
      by: "user",
      reason: null,
    });
    const toolRequest = {
      toolCallId: "call_2",
      name: "pick_date",
      input: {},
      expiresAt: "2026-12-05T10:01:00.000Z",
    };
    expect(actionOf({ kind: "tool_request", content: JSON.stringify({ toolRequest }) })).toMatchObject({
      kind: "tool_request",
      toolName: "pick_date",
    });
  });

  it("leaves out other kinds, purged text and bodies of another shape", () => {
    expect(actionOf({ kind: "message", content: "hello" })).toBeNull();
    expect(actionOf({ kind: "approval_request", content: "" })).toBeNull();
    expect(
      actionOf({ kind: "approval_request", content: JSON.stringify({ approval: { name: 3 } }) }),
    ).toBeNull();
    expect(actionOf({ kind: "approval_decision", content: "[1]" })).toBeNull();
  });
});
