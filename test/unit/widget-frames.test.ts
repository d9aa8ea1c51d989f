// The widget's zod-free frame validator agrees with the protocol's zod schema on every input, and its wire
// constants equal the protocol's.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BEARER_PREFIX,
  LIMITS,
  PROTOCOL,
  PROTOCOL_VERSION,
  serverFrameSchema,
} from "../../src/shared/protocol";
import * as widget from "../../src/widget/constants";
import { isServerFrame, parseServerFrame } from "../../src/widget/frames";

const entry = {
  id: "ent_1",
  parentId: null,
  kind: "message",
  role: "assistant",
  runId: "run_1",
  text: "Hello",
  status: "complete",
  createdAt: "2026-01-01T00:00:00.000Z",
};

const action = {
  approvalId: "apr_1",
  toolCallId: "call_1",
  name: "refund",
  input: { orderId: "A-1", amount: 30, lines: [{ sku: "x" }] },
  by: "user",
  expiresAt: "2026-01-01T00:05:00.000Z",
};

const VALID: unknown[] = [
  {
    type: "ready",
    protocol: 1,
    threadId: "thr_1",
    leafId: null,
    agent: { name: "Support", version: 3 },
    mode: "agent",
    presentation: { title: "Acme", suggestedPrompts: ["Hi"], accentColor: "#0f766e", locale: "es" },
  },
  {
    type: "ready",
    protocol: 1,
    threadId: "thr_1",
    leafId: "ent_9",
    agent: { name: "", version: 0 },
    mode: "handoff",
    agentName: "Dana",
  },
  { type: "entry", entry },
  {
    type: "entry",
    entry: { ...entry, role: "user", runId: null, status: undefined, clientMessageId: "cm_12345678" },
  },
  { type: "run", runId: "run_1", status: "running" },
  { type: "run", runId: "run_1", status: "failed", error: { code: "upstream_unavailable", message: "down" } },
  { type: "delta", runId: "run_1", seq: 1, text: "" },
  { type: "history", items: [entry, { ...entry, id: "ent_2" }], nextCursor: "2" },
  { type: "history", items: [] },
  { type: "error", code: "conflict", message: "busy" },
  { type: "mode", mode: "handoff", agentName: "Dana" },
  { type: "mode", mode: "agent" },
  {
    type: "feedback",
    entryId: "ent_1",
    feedback: { rating: "up", comment: "thanks", at: "2026-01-01T00:00:00.000Z" },
  },
  { type: "feedback", entryId: "ent_1", feedback: null },
  {
    type: "entry",
    entry: { ...entry, role: "human_agent", runId: null, status: undefined, authorName: "Dana" },
  },
  {
    type: "entry",
    entry: {
      ...entry,
      kind: "event",
      role: null,
      text: "",
      event: { type: "handoff_started", agentName: "Dana" },
    },
  },
  { type: "history", items: [{ ...entry, feedback: { rating: "down", at: "2026-01-01T00:00:00.000Z" } }] },
  { type: "pong" },
  { type: "pong", extra: "ignored like zod does" },
  // The answer to a `refresh` frame: a new launch token for the same thread.
  { type: "token", token: "eyJ.a.b", expiresAt: "2026-01-01T00:05:00.000Z" },
  // Handoff (docs/protocol.md): the thread's mode on ready and on each change, and a person's message.
  {
    type: "ready",
    protocol: 1,
    threadId: "thr_1",
    leafId: null,
    agent: { name: "a", version: 1 },
    mode: "handoff",
  },
  { type: "mode", mode: "handoff" },
  { type: "mode", mode: "agent" },
  { type: "entry", entry: { ...entry, role: "human_agent", runId: null, authorName: "Dana" } },
  // Approvals and client tools (docs/widget.md#approvals-and-client-tools).
  { type: "run", runId: "run_1", status: "requires_action", actions: [action] },
  {
    type: "run",
    runId: "run_1",
    status: "requires_action",
    actions: [{ ...action, by: "any", title: "Refund", description: "Sends money back" }, action],
  },
  { type: "run", runId: "run_1", status: "running", actions: [] },
  {
    type: "tool_request",
    runId: "run_1",
    toolCallId: "call_2",
    name: "cart",
    input: {},
    expiresAt: "2026-01-01T00:01:00.000Z",
  },
  { type: "entry", entry: { ...entry, kind: "approval_request", role: null, text: "", approval: action } },
  {
    type: "entry",
    entry: {
      ...entry,
      kind: "approval_decision",
      role: null,
      text: "",
      decision: { approvalId: "apr_1", decision: "deny", by: "timeout", reason: null },
    },
  },
  {
    type: "history",
    items: [
      {
        ...entry,
        kind: "tool_request",
        role: null,
        text: "",
        toolRequest: { toolCallId: "call_2", name: "cart", input: { a: 1 }, expiresAt: "x" },
      },
      {
        ...entry,
        kind: "approval_decision",
        decision: { approvalId: "apr_1", decision: "approve", by: "user", reason: "ok" },
      },
    ],
  },
];

const INVALID: unknown[] = [
  { type: "token", token: "eyJ.a.b" },
  { type: "token", token: 5, expiresAt: "2026-01-01T00:05:00.000Z" },
  null,
  [],
  "pong",
  { type: "nope" },
  { type: "ready", protocol: 2, threadId: "thr_1", leafId: null, agent: { name: "a", version: 1 } },
  {
    type: "ready",
    protocol: 1,
    threadId: "thr_1",
    leafId: null,
    agent: { name: "a", version: 1 },
    presentation: { accentColor: "red" },
  },
  { type: "ready", protocol: 1, threadId: "", leafId: null, agent: { name: "a", version: 1 } },
  { type: "ready", protocol: 1, threadId: "thr_1", leafId: null, agent: { name: "a", version: 1.5 } },
  { type: "ready", protocol: 1, threadId: "t".repeat(129), leafId: null, agent: { name: "a", version: 1 } },
  { type: "entry", entry: { ...entry, kind: "html" } },
  { type: "entry", entry: { ...entry, role: "admin" } },
  { type: "entry", entry: { ...entry, text: 5 } },
  { type: "entry", entry: { ...entry, createdAt: undefined } },
  { type: "run", runId: "run_1", status: "done" },
  { type: "run", runId: "run_1", status: "failed", error: { code: "teapot", message: "x" } },
  { type: "delta", runId: "run_1", seq: 0, text: "a" },
  { type: "delta", runId: "run_1", seq: 1.5, text: "a" },
  { type: "delta", runId: "run_1", seq: 2 ** 60, text: "a" },
  { type: "delta", runId: "run_1", seq: "1", text: "a" },
  { type: "history", items: [{ ...entry, id: "" }] },
  { type: "history", items: [], nextCursor: 5 },
  { type: "error", code: "conflict" },
  { type: "ready", protocol: 1, threadId: "thr_1", leafId: null, agent: { name: "a", version: 1 } },
  { type: "mode", mode: "human" },
  { type: "feedback", entryId: "ent_1", feedback: { rating: "meh", at: "2026-01-01T00:00:00.000Z" } },
  { type: "feedback", entryId: "ent_1" },
  { type: "entry", entry: { ...entry, event: { type: "handoff_paused" } } },
  {
    type: "ready",
    protocol: 1,
    threadId: "thr_1",
    leafId: null,
    agent: { name: "a", version: 1 },
    mode: "human",
  },
  { type: "mode" },
  { type: "mode", mode: "handoff ", extra: 1 },
  { type: "entry", entry: { ...entry, role: "human_agent", authorName: 7 } },
  { type: "run", runId: "run_1", status: "requires_action", actions: {} },
  { type: "run", runId: "run_1", status: "requires_action", actions: [{ ...action, by: "timeout" }] },
  { type: "run", runId: "run_1", status: "requires_action", actions: [{ ...action, input: [] }] },
  { type: "run", runId: "run_1", status: "requires_action", actions: [{ ...action, approvalId: "" }] },
  { type: "run", runId: "run_1", status: "requires_action", actions: [{ ...action, title: 1 }] },
  { type: "tool_request", runId: "run_1", toolCallId: "call_2", name: "cart", input: null, expiresAt: "x" },
  { type: "tool_request", toolCallId: "call_2", name: "cart", input: {}, expiresAt: "x" },
  { type: "entry", entry: { ...entry, approval: { ...action, expiresAt: 5 } } },
  {
    type: "entry",
    entry: { ...entry, decision: { approvalId: "apr_1", decision: "maybe", by: "user", reason: null } },
  },
  { type: "entry", entry: { ...entry, decision: { approvalId: "apr_1", decision: "deny", by: "any" } } },
  { type: "entry", entry: { ...entry, toolRequest: { toolCallId: "c", name: "x", input: {} } } },
];

describe("isServerFrame", () => {
  it("accepts the frames the server sends", () => {
    for (const frame of VALID) {
      expect(serverFrameSchema.safeParse(frame).success, JSON.stringify(frame)).toBe(true);
      expect(isServerFrame(frame), JSON.stringify(frame)).toBe(true);
    }
  });

  it("refuses what the schema refuses", () => {
    for (const frame of INVALID) {
      expect(serverFrameSchema.safeParse(frame).success, JSON.stringify(frame)).toBe(false);
      expect(isServerFrame(frame), JSON.stringify(frame)).toBe(false);
    }
  });

  it("agrees with serverFrameSchema on mutated frames and arbitrary JSON", () => {
    const anyValue = fc.oneof(
      fc.constantFrom(null, true, 0, 1, -1, 1.5, 2 ** 53, "", "x", "t".repeat(129), [], {}),
      fc.string(),
      fc.integer(),
      fc.constantFrom(
        "user",
        "assistant",
        "human_agent",
        "handoff",
        "message",
        "running",
        "conflict",
        "complete",
        "ent_1",
        "requires_action",
        "approval_request",
        "approve",
        "timeout",
      ),
    );
    const mutated = fc
      .tuple(
        fc.constantFrom(...VALID),
        fc.array(fc.tuple(fc.string({ maxLength: 3 }), anyValue), { maxLength: 2 }),
      )
      .chain(([frame, extra]) =>
        fc
          .tuple(
            fc.constantFrom(
              ...Object.keys(frame as object),
              "entry",
              "agent",
              "error",
              "items",
              "presentation",
              "mode",
              "actions",
              "approval",
              "decision",
              "toolRequest",
              "input",
            ),
            anyValue,
            fc.boolean(),
          )
          .map(([key, value, deep]) => {
            const copy = structuredClone(frame) as Record<string, unknown>;
            const target =
              deep && typeof copy.entry === "object" && copy.entry !== null
                ? (copy.entry as Record<string, unknown>)
                : copy;
            target[deep ? (Object.keys(target)[0] ?? key) : key] = value;
            for (const [k, v] of extra) copy[k] = v;
            return copy;
          }),
      );
    fc.assert(
      fc.property(fc.oneof(mutated, fc.jsonValue()), (value) => {
        expect(isServerFrame(value)).toBe(serverFrameSchema.safeParse(value).success);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("parseServerFrame", () => {
  it("parses JSON text and refuses anything else", () => {
    expect(parseServerFrame('{"type":"pong"}')).toEqual({ type: "pong" });
    expect(parseServerFrame("{not json")).toBeNull();
    expect(parseServerFrame('{"type":"delta"}')).toBeNull();
    expect(parseServerFrame(new ArrayBuffer(4))).toBeNull();
    expect(parseServerFrame(undefined)).toBeNull();
  });
});

describe("widget wire constants", () => {
  it("equal the protocol's (the widget cannot import them without bundling zod)", () => {
    expect(widget.PROTOCOL).toBe(PROTOCOL);
    expect(widget.PROTOCOL_VERSION).toBe(PROTOCOL_VERSION);
    expect(widget.BEARER_PREFIX).toBe(BEARER_PREFIX);
    expect(widget.MAX_MESSAGE_CHARS).toBe(LIMITS.maxMessageChars);
  });
});
