// The artifact schema: strict keys, field paths in refusals, provider-specific options.
import { describe, expect, it } from "vitest";
import { artifactSchema } from "../../src/control/artifact";
import { fieldIssues } from "../../src/control/field-issues";
import { artifactFromDefinition } from "../../src/control/store-rules";

const minimal = {
  schemaVersion: 1,
  name: "Support",
  instructions: "Be brief.",
  model: { provider: "local", model: "echo" },
};

function issuesOf(value: unknown) {
  const result = artifactSchema.safeParse(value);
  if (result.success) throw new Error("expected the artifact to be refused");
  return fieldIssues(result.error);
}

describe("artifactSchema", () => {
  it("accepts the minimal artifact unchanged", () => {
    expect(artifactSchema.parse(minimal)).toEqual(minimal);
  });

  it("accepts every optional section when well formed", () => {
    const full = {
      ...minimal,
      model: {
        provider: "local",
        model: "any-name",
        temperature: 0.2,
        maxOutputTokens: 512,
        local: { chunks: 5, chunkDelayMs: 10, failAfterChunks: 3, hangAfterChunks: 4 },
      },
      greeting: "Hello",
      suggestedPrompts: ["Track my order"],
      limits: { maxMessageChars: 8000, maxSendsPerMinute: 20, retention: { maxAgeDays: 30 } },
      tools: [
        {
          name: "lookup",
          description: "Looks things up.",
          url: "https://tools.example.com/lookup",
          signingSecret: "lookup-signing",
        },
      ],
      widget: { title: "Help", theme: "dark", accentColor: "#112233", position: "bottom-left" },
    };
    expect(artifactSchema.parse(full)).toEqual(full);
  });

  it("requires schemaVersion 1, name, instructions and model", () => {
    expect(issuesOf({}).map((i) => i.path)).toEqual(
      expect.arrayContaining(["schemaVersion", "name", "instructions", "model"]),
    );
    expect(issuesOf({ ...minimal, schemaVersion: 2 }).map((i) => i.path)).toEqual(["schemaVersion"]);
  });

  it("refuses unknown keys at the top level, naming the key", () => {
    expect(issuesOf({ ...minimal, prompt: "x" })).toEqual([{ path: "prompt", message: "unknown field" }]);
  });

  it("refuses unknown keys nested, with the full path", () => {
    expect(issuesOf({ ...minimal, model: { ...minimal.model, apiKey: "sk-live" } })).toEqual([
      { path: "model.apiKey", message: "unknown field" },
    ]);
    expect(issuesOf({ ...minimal, limits: { retention: { forever: true } } })).toEqual([
      { path: "limits.retention.forever", message: "unknown field" },
    ]);
    expect(
      issuesOf({
        ...minimal,
        tools: [{ name: "t", description: "d", url: "https://x.example", signingSecret: "s", verb: "GET" }],
      }),
    ).toEqual([{ path: "tools.0.verb", message: "unknown field" }]);
  });

  it("takes a double-texting strategy in `conversation.multitask`, one of four, with strict keys", () => {
    for (const multitask of ["reject", "enqueue", "interrupt", "rollback"]) {
      expect(artifactSchema.parse({ ...minimal, conversation: { multitask } }).conversation).toEqual({
        multitask,
      });
    }
    expect(artifactSchema.parse({ ...minimal, conversation: {} }).conversation).toEqual({});
    expect(issuesOf({ ...minimal, conversation: { multitask: "queue" } }).map((i) => i.path)).toEqual([
      "conversation.multitask",
    ]);
    expect(issuesOf({ ...minimal, conversation: { maxQueued: 9 } })).toEqual([
      { path: "conversation.maxQueued", message: "unknown field" },
    ]);
  });

  it("allows `local` options only with the local provider", () => {
    expect(
      artifactSchema.safeParse({ ...minimal, model: { ...minimal.model, local: { chunks: 2 } } }).success,
    ).toBe(true);
    const refused = issuesOf({
      ...minimal,
      model: { provider: "workers-ai", model: "@cf/x", local: { chunks: 2 } },
    });
    expect(refused.map((i) => i.path)).toEqual(["model.local"]);
  });

  it("refuses unknown providers and an openai-compatible model without a base URL", () => {
    expect(issuesOf({ ...minimal, model: { provider: "mystery", model: "m" } }).map((i) => i.path)).toEqual([
      "model.provider",
    ]);
    expect(
      issuesOf({ ...minimal, model: { provider: "openai-compatible", model: "m" } }).map((i) => i.path),
    ).toEqual(["model.baseUrl"]);
  });

  it("refuses model endpoints the tools' URL policy refuses when publishing, admitting local http for development", () => {
    const model = (baseUrl: string) => ({
      ...minimal,
      model: { provider: "openai-compatible", model: "m", baseUrl },
    });
    for (const baseUrl of ["ftp://llm.example.com/v1", "not a url"]) {
      expect(
        issuesOf(model(baseUrl)).map((i) => i.path),
        baseUrl,
      ).toEqual(["model.baseUrl"]);
    }
    for (const baseUrl of [
      "http://llm.example.com/v1",
      "https://127.0.0.1/v1",
      "https://169.254.169.254/latest/meta-data",
      "https://[::1]/v1",
      "https://192.168.1.10/v1",
    ]) {
      const published = artifactFromDefinition(model(baseUrl));
      expect(published.ok, baseUrl).toBe(false);
      if (!published.ok)
        expect(published.details, baseUrl).toEqual([{ path: "model.baseUrl", message: expect.any(String) }]);
      // Stored versions are re-parsed on read: the schema alone never makes a pinned artifact unreadable.
      expect(artifactSchema.safeParse(model(baseUrl)).success, baseUrl).toBe(true);
    }
    expect(artifactFromDefinition(model("https://llm.example.com/v1")).ok).toBe(true);
    // Admitted here; refused at publish and at call time outside development.
    expect(artifactFromDefinition(model("http://127.0.0.1:11434/v1")).ok).toBe(true);
  });

  it("refuses tools that are not https and secret aliases that are not aliases", () => {
    expect(
      issuesOf({
        ...minimal,
        tools: [{ name: "t", description: "d", url: "http://x.example", signingSecret: "s" }],
      }).map((i) => i.path),
    ).toEqual(["tools.0.url"]);
    expect(
      issuesOf({ ...minimal, model: { provider: "anthropic", model: "m", apiKeySecret: "sk-ant-REAL" } }).map(
        (i) => i.path,
      ),
    ).toEqual(["model.apiKeySecret"]);
  });
});
