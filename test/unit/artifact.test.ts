// The artifact schema: strict keys, field paths in refusals, provider-specific options.
import { describe, expect, it } from "vitest";
import { artifactSchema, attachmentPolicyOf } from "../../src/control/artifact";
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

  it("takes an `attachments` policy with bounded limits, refusing by field path", () => {
    const parsed = artifactSchema.parse({
      ...minimal,
      attachments: { enabled: true, accept: ["image/png"], maxBytes: 25 * 1024 * 1024, maxFiles: 10 },
    });
    expect(attachmentPolicyOf(parsed)).toEqual({
      accept: ["image/png"],
      maxBytes: 25 * 1024 * 1024,
      maxFiles: 10,
      maxPerThread: 50,
    });
    expect(attachmentPolicyOf(artifactSchema.parse({ ...minimal, attachments: { enabled: true } }))).toEqual({
      accept: ["image/png", "image/jpeg", "image/webp", "image/gif", "application/pdf", "text/plain"],
      maxBytes: 10 * 1024 * 1024,
      maxFiles: 4,
      maxPerThread: 50,
    });
    expect(attachmentPolicyOf(artifactSchema.parse(minimal))).toBeNull();
    expect(
      attachmentPolicyOf(artifactSchema.parse({ ...minimal, attachments: { enabled: false } })),
    ).toBeNull();
    const refused = (attachments: unknown) => issuesOf({ ...minimal, attachments }).map((i) => i.path);
    expect(refused({ enabled: true, maxBytes: 25 * 1024 * 1024 + 1 })).toEqual(["attachments.maxBytes"]);
    expect(refused({ enabled: true, maxFiles: 11 })).toEqual(["attachments.maxFiles"]);
    expect(refused({ enabled: true, maxPerThread: 201 })).toEqual(["attachments.maxPerThread"]);
    expect(refused({ enabled: true, accept: ["application/zip"] })).toEqual(["attachments.accept.0"]);
    expect(refused({ enabled: true, accept: [] })).toEqual(["attachments.accept"]);
    expect(refused({ maxFiles: 2 })).toEqual(["attachments.enabled"]);
    expect(issuesOf({ ...minimal, attachments: { enabled: true, maxSize: 1 } })).toEqual([
      { path: "attachments.maxSize", message: "unknown field" },
    ]);
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

  it("takes 1–8 local toolCalls, not together with toolCall", () => {
    const local = (options: Record<string, unknown>) => ({
      ...minimal,
      model: { provider: "local", model: "echo", local: options },
    });
    const call = { name: "lookup", input: { q: "x" } };
    expect(artifactSchema.parse(local({ toolCalls: [call, call] })).model.local?.toolCalls).toHaveLength(2);
    expect(issuesOf(local({ toolCalls: [] })).map((i) => i.path)).toEqual(["model.local.toolCalls"]);
    expect(issuesOf(local({ toolCalls: Array(9).fill(call) })).map((i) => i.path)).toEqual([
      "model.local.toolCalls",
    ]);
    expect(issuesOf(local({ toolCalls: [{ name: "lookup" }] })).map((i) => i.path)).toEqual([
      "model.local.toolCalls.0.input",
    ]);
    expect(issuesOf(local({ toolCall: call, toolCalls: [call] }))).toEqual([
      { path: "model.local.toolCalls", message: "not allowed together with toolCall" },
    ]);
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

describe("tools: executor, approval and output schema", () => {
  const server = {
    name: "refund",
    description: "Refunds an order.",
    url: "https://tools.example.com/refund",
    signingSecret: "refund-signing",
  };
  const client = { name: "pick_date", description: "Asks the visitor for a date.", executor: "client" };
  const withTool = (tool: Record<string, unknown>) => ({ ...minimal, tools: [tool] });
  const publishPaths = (tool: Record<string, unknown>) => {
    const result = artifactFromDefinition(withTool(tool));
    if (result.ok) throw new Error("expected the artifact to be refused");
    return (result.details ?? []) as { path: string; message: string }[];
  };

  it("accepts a client tool without url or signing secret, and a server tool marked as one", () => {
    expect(artifactSchema.parse(withTool(client)).tools?.[0]).toEqual(client);
    expect(artifactSchema.parse(withTool({ ...server, executor: "server" })).tools?.[0]?.executor).toBe(
      "server",
    );
    expect(artifactFromDefinition(withTool({ ...client, timeoutMs: 600_000 })).ok).toBe(true);
  });

  it("refuses a client tool's url and signing secret, and still requires both of a server tool", () => {
    expect(issuesOf(withTool({ ...client, url: server.url, signingSecret: "s" }))).toEqual([
      { path: "tools.0.url", message: "not allowed for a client tool" },
      { path: "tools.0.signingSecret", message: "not allowed for a client tool" },
    ]);
    expect(issuesOf(withTool({ name: "t", description: "d" })).map((i) => i.path)).toEqual([
      "tools.0.url",
      "tools.0.signingSecret",
    ]);
    expect(issuesOf(withTool({ ...client, executor: "browser" })).map((i) => i.path)).toEqual([
      "tools.0.executor",
    ]);
  });

  it("bounds timeoutMs per executor: server 100–30,000, client 1,000–600,000", () => {
    const paths = (tool: Record<string, unknown>) => issuesOf(withTool(tool)).map((i) => i.path);
    expect(paths({ ...server, timeoutMs: 30_001 })).toEqual(["tools.0.timeoutMs"]);
    expect(paths({ ...server, timeoutMs: 99 })).toEqual(["tools.0.timeoutMs"]);
    expect(paths({ ...client, timeoutMs: 999 })).toEqual(["tools.0.timeoutMs"]);
    expect(paths({ ...client, timeoutMs: 600_001 })).toEqual(["tools.0.timeoutMs"]);
    expect(artifactSchema.parse(withTool({ ...server, timeoutMs: 100 })).tools?.[0]?.timeoutMs).toBe(100);
    expect(artifactSchema.parse(withTool({ ...client, timeoutMs: 1_000 })).tools?.[0]?.timeoutMs).toBe(1_000);
  });

  it("takes approval as never, always or rules, naming each bad field", () => {
    const policy = {
      when: [
        { pointer: "/amount", op: "gt", value: 100 },
        { pointer: "/currency", op: "in", value: ["EUR", "USD"] },
        { pointer: "/note/~1x", op: "ne", value: null },
      ],
      by: "tenant",
      timeoutMs: 3_600_000,
      onTimeout: "handoff",
      title: "Refund",
      description: "Sends the money back.",
    };
    for (const approval of ["never", "always", {}, policy]) {
      expect(artifactSchema.parse(withTool({ ...server, approval })).tools?.[0]?.approval).toEqual(approval);
    }
    const paths = (approval: unknown) => issuesOf(withTool({ ...server, approval })).map((i) => i.path);
    expect(issuesOf(withTool({ ...server, approval: "sometimes" }))).toEqual([
      { path: "tools.0.approval", message: "must be 'never', 'always' or an object of approval rules" },
    ]);
    expect(paths({ by: "robot" })).toEqual(["tools.0.approval.by"]);
    expect(paths({ onTimeout: "approve" })).toEqual(["tools.0.approval.onTimeout"]);
    expect(paths({ timeoutMs: 9_999 })).toEqual(["tools.0.approval.timeoutMs"]);
    expect(paths({ timeoutMs: 604_800_001 })).toEqual(["tools.0.approval.timeoutMs"]);
    expect(paths({ title: "x".repeat(121) })).toEqual(["tools.0.approval.title"]);
    expect(paths({ description: "x".repeat(1001) })).toEqual(["tools.0.approval.description"]);
    expect(paths({ when: [] })).toEqual(["tools.0.approval.when"]);
    expect(paths({ approver: "user" })).toEqual(["tools.0.approval.approver"]);
    expect(
      paths({
        when: [
          { pointer: "amount", op: "eq", value: 1 },
          { pointer: "/a/", op: "eq", value: 1 },
          { pointer: "/a", op: "like", value: 1 },
          { pointer: "/a", op: "in", value: "EUR" },
          { pointer: "/a", op: "gte", value: "100" },
          { pointer: "/a", op: "eq" },
          { pointer: "/a", op: "eq", value: 1, extra: true },
        ],
      }),
    ).toEqual([
      "tools.0.approval.when.0.pointer",
      "tools.0.approval.when.1.pointer",
      "tools.0.approval.when.2.op",
      "tools.0.approval.when.3.value",
      "tools.0.approval.when.4.value",
      "tools.0.approval.when.5.value",
      "tools.0.approval.when.6.extra",
    ]);
  });

  it("publishes a valid output schema and refuses an invalid one at its place", () => {
    const outputSchema = {
      type: "object",
      properties: { date: { type: "string", format: "date" }, slots: { $ref: "#/$defs/slots" } },
      required: ["date"],
      $defs: { slots: { type: "array", items: { type: "integer" } } },
    };
    expect(artifactFromDefinition(withTool({ ...client, outputSchema })).ok).toBe(true);
    expect(publishPaths({ ...client, outputSchema: { type: "strng" } })).toEqual([
      { path: "tools.0.outputSchema.type", message: expect.stringContaining("not a valid JSON Schema") },
    ]);
    expect(
      publishPaths({ ...server, outputSchema: { properties: { a: { type: 5 } }, required: "a" } })
        .map((i) => i.path)
        .sort(),
    ).toEqual(["tools.0.outputSchema.properties.a.type", "tools.0.outputSchema.required"]);
    expect(publishPaths({ ...client, outputSchema: { items: { $ref: "#/$defs/none" } } })).toEqual([
      {
        path: "tools.0.outputSchema.items.$ref",
        message: "must be a reference inside this schema, such as '#/$defs/name'",
      },
    ]);
    expect(
      publishPaths({ ...client, outputSchema: { $ref: "https://example.com/schema.json" } }).map(
        (i) => i.path,
      ),
    ).toEqual(["tools.0.outputSchema.$ref"]);
    expect(issuesOf(withTool({ ...client, outputSchema: [] })).map((i) => i.path)).toEqual([
      "tools.0.outputSchema",
    ]);
  });
});
