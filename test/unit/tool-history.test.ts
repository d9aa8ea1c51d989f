// What a reply's tool calls become: the record its assistant entry keeps, and the prompt messages a later turn sends.
import { describe, expect, it } from "vitest";
import { buildPrompt } from "../../src/models/prompt";
import type { TurnStep } from "../../src/models/turn";
import {
  assistantMessages,
  MAX_STORED_TOOL_OUTPUT_CHARS,
  OMITTED_OUTPUT,
  storedToolCalls,
  toolCallsOfSteps,
} from "../../src/thread/run/tool-history";

const usage = { inputTokens: 0, outputTokens: 0 };

function step(text: string, calls: [id: string, output: unknown, input?: unknown][] = []): TurnStep {
  return {
    text,
    usage,
    finishReason: calls.length > 0 ? "tool-calls" : "stop",
    toolCalls: calls.map(([id, output, input]) => ({
      toolCallId: id,
      toolName: "lookup",
      input,
      outcome: { output: output as never },
    })),
  };
}

describe("toolCallsOfSteps", () => {
  it("records each answered call with the step that asked for it and the text written before it", () => {
    const steps = [
      step("Checking. ", [
        ["c1", { a: 1 }, { q: "x" }],
        ["c2", "plain", { q: "y" }],
      ]),
      step("", [["c3", { b: 2 }, { q: "z" }]]),
      step("Done."),
    ];
    expect(toolCallsOfSteps(steps, "Checking. Done.")).toEqual([
      { toolCallId: "c1", toolName: "lookup", input: { q: "x" }, output: { a: 1 }, step: 0, textOffset: 10 },
      { toolCallId: "c2", toolName: "lookup", input: { q: "y" }, output: "plain", step: 0, textOffset: 10 },
      { toolCallId: "c3", toolName: "lookup", input: { q: "z" }, output: { b: 2 }, step: 1, textOffset: 10 },
    ]);
  });

  it("stores {} for arguments that were not JSON, and keeps the error mark of a failed call", () => {
    const failed: TurnStep = {
      ...step("", []),
      toolCalls: [
        {
          toolCallId: "bad",
          toolName: "lookup",
          input: undefined,
          outcome: { output: "The tool input was not valid JSON.", isError: true },
        },
      ],
    };
    expect(toolCallsOfSteps([failed, step("Sorry.")], "Sorry.")).toEqual([
      {
        toolCallId: "bad",
        toolName: "lookup",
        input: {},
        output: "The tool input was not valid JSON.",
        isError: true,
        step: 0,
        textOffset: 0,
      },
    ]);
  });

  it("keeps every call's pair but omits answers past the reply's budget for tool output", () => {
    const big = "x".repeat(MAX_STORED_TOOL_OUTPUT_CHARS / 2);
    const stored = toolCallsOfSteps(
      [
        step("", [
          ["c1", big],
          ["c2", big],
          ["c3", big],
        ]),
        step("ok"),
      ],
      "ok",
    );
    expect(stored.map((c) => c.toolCallId)).toEqual(["c1", "c2", "c3"]);
    expect(stored.map((c) => c.output === big)).toEqual([true, true, false]);
    expect(stored[2]?.output).toBe(OMITTED_OUTPUT);
  });
});

describe("assistantMessages", () => {
  it("puts each stretch of text before the calls that followed it, then the results, then the rest", () => {
    const text = "Checking. Found it.";
    const stored = toolCallsOfSteps([step("Checking. ", [["c1", { a: 1 }, {}]]), step("Found it.")], text);
    const prompt = buildPrompt({
      instructions: "",
      branch: [
        { role: "user", text: "q" },
        ...assistantMessages(text, stored),
        { role: "user", text: "next" },
      ],
      maxContextTokens: 1000,
    });
    expect(prompt).toEqual([
      { role: "user", content: [{ type: "text", text: "q" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking. " },
          { type: "tool-call", toolCallId: "c1", toolName: "lookup", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "lookup",
            output: { type: "json", value: { a: 1 } },
          },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "Found it." }] },
      { role: "user", content: [{ type: "text", text: "next" }] },
    ]);
  });

  it("keeps all the text when redaction shortened it below a stored offset", () => {
    const stored = toolCallsOfSteps(
      [step("a long preamble ", [["c1", "r"]]), step("end")],
      "a long preamble end",
    );
    const messages = assistantMessages("[REDACTED]", stored);
    const texts = messages.flatMap((m) => (m.role === "assistant" ? [m.text] : []));
    expect(texts.join("")).toBe("[REDACTED]");
    expect(messages.map((m) => m.role)).toEqual(["assistant", "tool"]);
  });

  it("is the reply alone when it called no tools, and ignores a body whose toolCalls is not ours", () => {
    expect(assistantMessages("hi", [])).toEqual([{ role: "assistant", text: "hi" }]);
    expect(storedToolCalls({ text: "hi" })).toEqual([]);
    expect(storedToolCalls({ text: "hi", toolCalls: [{ name: "x" }] })).toEqual([]);
    expect(storedToolCalls(null)).toEqual([]);
  });
});
