// The prompt decides what the model remembers: instructions always, then as much recent history as the budget allows.
import { describe, expect, it } from "vitest";
import {
  attachmentTokens,
  type BranchMessage,
  buildPrompt,
  estimateTokens,
  IMAGE_TOKENS,
  type PromptAttachment,
} from "../../src/models/prompt";

// 40 characters = 10 estimated tokens each.
const long = (tag: string) => tag.padEnd(40, ".");

const texts = (prompt: ReturnType<typeof buildPrompt>) =>
  prompt.map((m) =>
    m.role === "system"
      ? `system:${m.content}`
      : `${m.role}:${m.content.map((p) => (p.type === "text" ? p.text : p.type)).join("+")}`,
  );

describe("buildPrompt", () => {
  it("estimates tokens as characters / 4 rounded up", () => {
    expect(estimateTokens(0)).toBe(0);
    expect(estimateTokens(1)).toBe(1);
    expect(estimateTokens(8)).toBe(2);
    expect(estimateTokens(9)).toBe(3);
  });

  it("puts the instructions first and keeps the whole branch in order when it fits", () => {
    const branch: BranchMessage[] = [
      { role: "user", text: "hi" },
      { role: "assistant", text: "hello" },
      { role: "user", text: "how are you?" },
    ];
    const prompt = buildPrompt({ instructions: "Be kind.", branch, maxContextTokens: 1000 });
    expect(texts(prompt)).toEqual(["system:Be kind.", "user:hi", "assistant:hello", "user:how are you?"]);
  });

  it("drops the oldest messages first when over budget and keeps the conversation opening with a user", () => {
    const branch: BranchMessage[] = [
      { role: "user", text: long("u1") },
      { role: "assistant", text: long("a1") },
      { role: "user", text: long("u2") },
      { role: "assistant", text: long("a2") },
      { role: "user", text: long("u3") },
    ];
    // instructions 2 tokens + 10 per message: room for u3, a2 and u2 (32), not a1 (42 > 35).
    const prompt = buildPrompt({ instructions: "Be kind.", branch, maxContextTokens: 35 });
    expect(texts(prompt)).toEqual([
      "system:Be kind.",
      `user:${long("u2")}`,
      `assistant:${long("a2")}`,
      `user:${long("u3")}`,
    ]);

    // Room for u3 and a2 only: a window may not open with the assistant, so a2 goes too.
    const tighter = buildPrompt({ instructions: "Be kind.", branch, maxContextTokens: 25 });
    expect(texts(tighter)).toEqual(["system:Be kind.", `user:${long("u3")}`]);
  });

  it("always keeps the latest user message, even when it alone exceeds the budget", () => {
    const branch: BranchMessage[] = [
      { role: "user", text: "earlier" },
      { role: "assistant", text: "sure" },
      { role: "user", text: "x".repeat(4000) },
    ];
    const prompt = buildPrompt({ instructions: "Be kind.", branch, maxContextTokens: 256 });
    expect(texts(prompt)).toEqual(["system:Be kind.", `user:${"x".repeat(4000)}`]);
  });

  it("keeps a tool call and its results together, or drops them together", () => {
    const branch: BranchMessage[] = [
      { role: "user", text: long("u1") },
      {
        role: "assistant",
        text: "",
        toolCalls: [{ toolCallId: "c1", toolName: "lookup", input: { q: "x" } }],
      },
      { role: "tool", toolCallId: "c1", toolName: "lookup", output: long("result") },
      { role: "assistant", text: long("a1") },
      { role: "user", text: long("u2") },
    ];
    const all = buildPrompt({ instructions: "", branch, maxContextTokens: 1000 });
    expect(texts(all)).toEqual([
      `user:${long("u1")}`,
      "assistant:tool-call",
      "tool:tool-result",
      `assistant:${long("a1")}`,
      `user:${long("u2")}`,
    ]);
    const toolResult = all[2];
    expect(toolResult?.role === "tool" && toolResult.content[0]).toMatchObject({
      type: "tool-result",
      toolCallId: "c1",
      toolName: "lookup",
      output: { type: "text", value: long("result") },
    });

    // Room for u2, a1 and the tool result but not its call: both go, and so does the orphaned assistant reply.
    const cut = buildPrompt({ instructions: "", branch, maxContextTokens: 32 });
    expect(texts(cut)).toEqual([`user:${long("u2")}`]);
  });

  it("keeps the tool round trip after the latest user message whatever the budget", () => {
    const branch: BranchMessage[] = [
      { role: "user", text: long("old") },
      { role: "user", text: long("now") },
      { role: "assistant", text: "checking", toolCalls: [{ toolCallId: "c9", toolName: "t", input: {} }] },
      { role: "tool", toolCallId: "c9", toolName: "t", output: "boom", isError: true },
    ];
    const prompt = buildPrompt({ instructions: "", branch, maxContextTokens: 1 });
    expect(texts(prompt)).toEqual([
      `user:${long("now")}`,
      "assistant:checking+tool-call",
      "tool:tool-result",
    ]);
    const result = prompt[2];
    expect(result?.role === "tool" && result.content[0]).toMatchObject({
      output: { type: "error-text", value: "boom" },
    });
  });

  it("leaves out empty assistant replies, which providers refuse", () => {
    const branch: BranchMessage[] = [
      { role: "user", text: "hi" },
      { role: "assistant", text: "" },
      { role: "user", text: "again" },
    ];
    expect(texts(buildPrompt({ instructions: "I", branch, maxContextTokens: 1000 }))).toEqual([
      "system:I",
      "user:hi",
      "user:again",
    ]);
  });

  it("hands attachments after the message's text: images and PDF as base64 file parts, text inlined", () => {
    const ref = (name: string, mediaType: string, data: string | null): PromptAttachment => ({
      id: `att_${name}`,
      sha256: "ab".repeat(32),
      mediaType,
      size: 3,
      name,
      data,
    });
    const branch: BranchMessage[] = [
      {
        role: "user",
        text: "Look",
        attachments: [
          ref("shot.png", "image/png", "iVBO"),
          ref("doc.pdf", "application/pdf", "JVBE"),
          ref("notes.txt", "text/plain", btoa("héllo".replace("é", "e"))),
          ref("gone.png", "image/png", null),
        ],
      },
    ];
    const prompt = buildPrompt({ instructions: "", branch, maxContextTokens: 100_000 });
    expect(prompt).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          {
            type: "file",
            mediaType: "image/png",
            filename: "shot.png",
            data: { type: "data", data: "iVBO" },
          },
          {
            type: "file",
            mediaType: "application/pdf",
            filename: "doc.pdf",
            data: { type: "data", data: "JVBE" },
          },
          { type: "text", text: "Attachment notes.txt (text/plain):\nhello" },
          { type: "text", text: "Attachment gone.png (image/png) is no longer stored." },
        ],
      },
    ]);
  });

  it("counts an attachment at a fixed estimate, so an image pushes older history out of the budget", () => {
    expect(attachmentTokens({ name: "a.png", mediaType: "image/png", size: 9_000_000 })).toBe(IMAGE_TOKENS);
    expect(attachmentTokens({ name: "a.pdf", mediaType: "application/pdf", size: 120 * 1024 })).toBe(4500);
    const image: PromptAttachment = {
      id: "att_1",
      sha256: "0".repeat(64),
      mediaType: "image/png",
      size: 1,
      name: "a.png",
      data: "iVBO",
    };
    const branch: BranchMessage[] = [
      { role: "user", text: long("old") },
      { role: "assistant", text: long("reply") },
      { role: "user", text: "see", attachments: [image] },
    ];
    const budget = IMAGE_TOKENS + 15;
    expect(texts(buildPrompt({ instructions: "", branch, maxContextTokens: budget }))).toEqual([
      "user:see+file",
    ]);
    expect(
      texts(buildPrompt({ instructions: "", branch, maxContextTokens: budget + 20 })).map((t) =>
        t.slice(0, 9),
      ),
    ).toEqual(["user:old.", "assistant", "user:see+"]);
  });
});
