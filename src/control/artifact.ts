// The agent artifact: what a version pins. Strict zod schema (unknown keys refused), schemaVersion 1.
import { z } from "zod";
import { ACCENT_COLOR_PATTERN, LOCALE_PATTERN, POSITIONS, THEMES } from "../shared/presentation";
import { MAX_ATTACHMENTS_PER_MESSAGE, MULTITASK_STRATEGIES } from "../shared/protocol";
import { jsonSchemaIssues } from "./json-schema-check";
import { secretAlias, toolSchema } from "./tool-schema";
import { modelUrlProblem } from "./url-policy";

export * from "./tool-schema";

export const MODEL_PROVIDERS = ["local", "workers-ai", "openai-compatible", "anthropic"] as const;

/** At most this many calls the `local` model makes in one step (`toolCalls`). */
export const MAX_LOCAL_TOOL_CALLS = 8;

const localToolCallSchema = z
  .strictObject({
    name: z.string().min(1).max(64).describe("The tool to call: one of the artifact's `tools` by name."),
    input: z.record(z.string(), z.unknown()).describe("The arguments the model passes to the tool."),
  })
  .describe("One call: a tool's name and the input the model passes it.");

/** The offline `local` model's knobs, for testing an agent without a provider (docs/tools.md#test-a-tool-offline). */
export const localModelOptionsSchema = z
  .strictObject({
    chunks: z
      .number()
      .int()
      .min(1)
      .max(10_000)
      .optional()
      .describe("How many deltas the reply streams in (default 8)."),
    chunkDelayMs: z
      .number()
      .int()
      .min(0)
      .max(60_000)
      .optional()
      .describe(
        "Milliseconds between deltas, to watch a slow reply stream, resume it or cancel it (default 0).",
      ),
    failAfterChunks: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .optional()
      .describe("Fail the run after this many deltas, as a provider error would (`upstream_unavailable`)."),
    hangAfterChunks: z
      .number()
      .int()
      .min(0)
      .max(10_000)
      .optional()
      .describe("Stop streaming after this many deltas and never finish, as a stalled provider would."),
    toolCall: localToolCallSchema
      .optional()
      .describe(
        "Each turn first calls this tool with this input; the reply then says what the tool returned.",
      ),
    toolCalls: z
      .array(localToolCallSchema)
      .min(1)
      .max(MAX_LOCAL_TOOL_CALLS)
      .optional()
      .describe(
        "Each turn first calls all these tools at once, in one step (1–8 calls); the reply then says what each returned.",
      ),
  })
  .superRefine((options, ctx) => {
    if (options.toolCall !== undefined && options.toolCalls !== undefined) {
      ctx.addIssue({ code: "custom", path: ["toolCalls"], message: "not allowed together with toolCall" });
    }
  })
  .describe("Options of the offline `local` model (provider `local` only).");

export const modelSchema = z
  .strictObject({
    provider: z
      .enum(MODEL_PROVIDERS)
      .describe("Who runs the model; `local` is the offline echo model, publishable only in development."),
    model: z
      .string()
      .min(1)
      .max(200)
      .describe(
        "The provider's model name, e.g. `claude-sonnet-4-5`; for `local`, `echo` repeats the message and any other name writes fixed filler text.",
      ),
    temperature: z
      .number()
      .min(0)
      .max(2)
      .optional()
      .describe("Sampling temperature, 0–2 (the provider's default)."),
    maxOutputTokens: z
      .number()
      .int()
      .min(1)
      .max(200_000)
      .optional()
      .describe("At most this many tokens per reply (the provider's default)."),
    // The URL policy is judged when publishing and before every call (`publishIssues`), not here: stored versions
    // are re-parsed on every read, and a stricter policy must not make an already pinned thread unreadable.
    baseUrl: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .describe("The endpoint of an `openai-compatible` provider (required there); a public https URL."),
    apiKeySecret: secretAlias
      .optional()
      .describe("Alias of the tenant secret holding the provider's API key (`PUT /v1/secrets/:alias`)."),
    local: localModelOptionsSchema.optional(),
  })
  .describe("The model that writes the replies.")
  .superRefine((model, ctx) => {
    if (model.local !== undefined && model.provider !== "local") {
      ctx.addIssue({ code: "custom", path: ["local"], message: "only allowed with provider 'local'" });
    }
    if (model.provider === "openai-compatible" && model.baseUrl === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["baseUrl"],
        message: "required for provider 'openai-compatible'",
      });
    }
  });

export const RETENTION_MODES = ["standard", "zero"] as const;
export const DEFAULT_IDLE_MINUTES = 30;
const MIN_IDLE_MINUTES = 5;
const MAX_IDLE_MINUTES = 1440;

/** A run's wall-clock limit unless the artifact sets `limits.runTimeoutMs` (docs/api.md, "The artifact"). */
export const DEFAULT_RUN_TIMEOUT_MS = 300_000;
const MIN_RUN_TIMEOUT_MS = 1_000;
const MAX_RUN_TIMEOUT_MS = 900_000;

export const limitsSchema = z.strictObject({
  maxMessageChars: z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .optional()
    .describe("Longest user message, in characters (default 8,000)."),
  maxSendsPerMinute: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .optional()
    .describe("Messages a thread accepts per minute (default 20)."),
  maxSocketsPerThread: z
    .number()
    .int()
    .min(1)
    .max(64)
    .optional()
    .describe("Sockets open at once on one thread (default 8)."),
  idleTimeoutSeconds: z
    .number()
    .int()
    .min(10)
    .max(86_400)
    .optional()
    .describe("A socket without a frame for this long closes with 4408 (default 300)."),
  maxContextTokens: z
    .number()
    .int()
    .min(256)
    .max(2_000_000)
    .optional()
    .describe("Budget of the prompt sent to the model; the oldest turns are left out past it."),
  runTimeoutMs: z
    .number()
    .int()
    .min(MIN_RUN_TIMEOUT_MS)
    .max(MAX_RUN_TIMEOUT_MS)
    .optional()
    .describe(
      "Wall-clock limit of one run (model calls and tool calls together), in ms: 1000–900000, default 300000 (5 min). A run past it ends failed with reason 'timeout', keeping the text streamed so far.",
    ),
  retention: z
    .strictObject({
      maxAgeDays: z
        .number()
        .int()
        .min(1)
        .max(3650)
        .optional()
        .describe("Messages older than this many days are deleted."),
      maxMessagesPerThread: z
        .number()
        .int()
        .min(1)
        .max(1_000_000)
        .optional()
        .describe("A thread keeps at most this many messages; the oldest go first."),
      /**
       * docs/privacy.md zero retention: D1 never receives message text, and the thread object blanks all entry text
       * `idleMinutes` (default 30) after the thread's last activity. `standard` (the default) keeps text.
       */
      mode: z
        .enum(RETENTION_MODES)
        .optional()
        .describe("`zero`: no message text reaches the database, and the thread forgets it when idle."),
      idleMinutes: z
        .number()
        .int()
        .min(MIN_IDLE_MINUTES)
        .max(MAX_IDLE_MINUTES)
        .optional()
        .describe(
          "Zero retention only: minutes of inactivity before the thread forgets its text (default 30).",
        ),
    })
    .superRefine((retention, ctx) => {
      if (retention.idleMinutes !== undefined && retention.mode !== "zero") {
        ctx.addIssue({ code: "custom", path: ["idleMinutes"], message: "only allowed with mode 'zero'" });
      }
    })
    .optional()
    .describe("How long conversations are kept."),
});

export const widgetSchema = z.strictObject({
  title: z.string().max(120).optional().describe("The widget header's title (default: the agent's name)."),
  theme: z.enum(THEMES).optional().describe("Light, dark, or the visitor's system setting."),
  accentColor: z
    .string()
    .regex(ACCENT_COLOR_PATTERN, "must be a colour as #rrggbb")
    .optional()
    .describe("The launcher's and the visitor's bubbles' colour, as #rrggbb."),
  position: z.enum(POSITIONS).optional().describe("Which bottom corner the floating launcher sits in."),
  strings: z
    .record(z.string().max(64), z.string().max(500))
    .optional()
    .describe("The widget's own texts replaced by key (docs/widget.md lists the keys)."),
  /** The widget's language for this agent (its greeting and prompts are written in it): a BCP 47 tag. */
  locale: z
    .string()
    .max(35)
    .regex(LOCALE_PATTERN, "must be a BCP 47 language tag such as 'es' or 'pt-BR'")
    .optional()
    .describe("The widget's language for this agent, a BCP 47 tag such as `es` or `pt-BR`."),
});

/** How the thread behaves as a conversation; `multitask` defaults to `reject` (docs/protocol.md, double-texting). */
export const conversationSchema = z.strictObject({
  multitask: z
    .enum(MULTITASK_STRATEGIES)
    .optional()
    .describe("What a message sent during a reply does: reject (default), enqueue, interrupt or rollback."),
});

/** docs/protocol.md: a person of the tenant's team may take the conversation over; `enabled` gives the model a tool to ask. */
export const handoffSchema = z.strictObject({
  enabled: z
    .boolean()
    .describe("Give the model a `request_handoff` tool to ask for a person of the tenant's team."),
});

/** Media types an agent with attachments takes unless its `attachments.accept` says otherwise (docs/api.md). */
export const DEFAULT_ATTACHMENT_TYPES = [
  "image/png",
  "image/jpeg",
  "image/webp",
  "image/gif",
  "application/pdf",
  "text/plain",
] as const;
const MIB = 1024 * 1024;
export const ATTACHMENT_LIMITS = {
  defaultMaxBytes: 10 * MIB,
  maxBytes: 25 * MIB,
  defaultMaxFiles: 4,
  maxFiles: MAX_ATTACHMENTS_PER_MESSAGE,
  defaultMaxPerThread: 50,
  maxPerThread: 200,
} as const;

/** docs/api.md, "Attachments": whether visitors may send files, which ones, and how many and how large. */
export const attachmentsSchema = z.strictObject({
  enabled: z.boolean().describe("Let the thread's user upload files and send them with a message."),
  accept: z
    .array(z.enum(DEFAULT_ATTACHMENT_TYPES))
    .min(1)
    .max(DEFAULT_ATTACHMENT_TYPES.length)
    .refine((types) => new Set(types).size === types.length, "must not repeat a media type")
    .optional()
    .describe("The media types accepted (default: PNG, JPEG, WebP and GIF images, PDF, plain text)."),
  maxBytes: z
    .number()
    .int()
    .min(1)
    .max(ATTACHMENT_LIMITS.maxBytes)
    .optional()
    .describe("The largest file in bytes (default 10 MiB, at most 25 MiB)."),
  maxFiles: z
    .number()
    .int()
    .min(1)
    .max(ATTACHMENT_LIMITS.maxFiles)
    .optional()
    .describe("Files one message may carry (default 4, at most 10)."),
  maxPerThread: z
    .number()
    .int()
    .min(1)
    .max(ATTACHMENT_LIMITS.maxPerThread)
    .optional()
    .describe("Files one conversation may hold (default 50, at most 200)."),
});

/** An artifact's attachment rules with every default applied. */
export interface AttachmentPolicy {
  accept: string[];
  maxBytes: number;
  maxFiles: number;
  maxPerThread: number;
}

/** The artifact's attachment rules, defaults applied; null when attachments are not enabled. */
export function attachmentPolicyOf(artifact: Pick<Artifact, "attachments">): AttachmentPolicy | null {
  const attachments = artifact.attachments;
  if (attachments?.enabled !== true) return null;
  return {
    accept: [...(attachments.accept ?? DEFAULT_ATTACHMENT_TYPES)],
    maxBytes: attachments.maxBytes ?? ATTACHMENT_LIMITS.defaultMaxBytes,
    maxFiles: attachments.maxFiles ?? ATTACHMENT_LIMITS.defaultMaxFiles,
    maxPerThread: attachments.maxPerThread ?? ATTACHMENT_LIMITS.defaultMaxPerThread,
  };
}

/**
 * docs/api.md: `offer` lets the visitor of a thread on this version accept the version the agent's active release would
 * give the thread now, when that one is newer (`ready.upgrade`); `never` (the default) offers nothing.
 */
export const UPGRADE_POLICIES = ["never", "offer"] as const;

/** The built-in tool an artifact with `handoff.enabled` gives its model; no artifact tool may take its name. */
export const REQUEST_HANDOFF_TOOL = "request_handoff";

export const artifactSchema = z.strictObject({
  schemaVersion: z.literal(1).describe("Always 1."),
  name: z
    .string()
    .min(1)
    .max(200)
    .describe("The agent's name, shown to visitors unless `widget.title` is set."),
  instructions: z
    .string()
    .max(100_000)
    .describe("The system prompt; `{{name}}` (or `{{name|default}}`) expands a launch's context variable."),
  model: modelSchema,
  greeting: z
    .string()
    .max(2000)
    .optional()
    .describe("The first message a visitor sees; context variables expand as in `instructions`."),
  suggestedPrompts: z
    .array(z.string().min(1).max(500))
    .max(8)
    .optional()
    .describe("Up to 8 prompts the widget offers before the first message."),
  limits: limitsSchema.optional().describe("Per-thread limits and retention."),
  tools: z
    .array(
      toolSchema.describe(
        "A tool the model may call: an HTTPS webhook (`server`) or a function of the page or app (`client`).",
      ),
    )
    .max(32)
    .optional()
    .describe("Tools the model may call, at most 32."),
  widget: widgetSchema.optional().describe("How the embed widget presents this agent."),
  conversation: conversationSchema.optional().describe("How the thread behaves as a conversation."),
  handoff: handoffSchema.optional().describe("Whether a person may take the conversation over."),
  attachments: attachmentsSchema
    .optional()
    .describe("Whether the thread's user may send files (off by default)."),
  upgrades: z
    .enum(UPGRADE_POLICIES)
    .optional()
    .describe("`offer`: a thread on this version is offered a newer active version; `never` (default)."),
});

export type Artifact = z.infer<typeof artifactSchema>;

/** Minutes after the last activity at which a zero-retention thread loses its text; null for standard retention. */
export function zeroRetentionIdleMinutes(artifact: Artifact): number | null {
  const retention = artifact.limits?.retention;
  return retention?.mode === "zero" ? (retention.idleMinutes ?? DEFAULT_IDLE_MINUTES) : null;
}
export type ModelConfig = z.infer<typeof modelSchema>;

/**
 * What a parsed artifact must also pass to be published, in any environment: its model endpoint follows the
 * tools' URL policy, local plain http admitted (publishing refuses that outside development; `url-policy.ts`).
 */
export function publishIssues(artifact: Artifact): { path: string; message: string }[] {
  const baseUrl = artifact.model.baseUrl;
  const problem = baseUrl === undefined ? null : modelUrlProblem(baseUrl, { allowLocalHttp: true });
  const issues = problem === null ? [] : [{ path: "model.baseUrl", message: problem }];
  for (const [index, tool] of (artifact.tools ?? []).entries()) {
    for (const issue of tool.outputSchema === undefined ? [] : jsonSchemaIssues(tool.outputSchema)) {
      issues.push({ path: `tools.${index}.outputSchema${issue.path}`, message: issue.message });
    }
  }
  if (artifact.handoff?.enabled) {
    (artifact.tools ?? []).forEach((tool, index) => {
      if (tool.name === REQUEST_HANDOFF_TOOL) {
        issues.push({
          path: `tools.${index}.name`,
          message: `'${REQUEST_HANDOFF_TOOL}' is built in with handoff`,
        });
      }
    });
  }
  return issues;
}

/**
 * The `local` model is a deterministic stand-in for development and tests (docs/api.md, "Models"): a version that
 * answers real users with it is a mistake, so only a `development` deployment may publish one.
 */
export function localModelAllowed(environment: string): boolean {
  return environment === "development";
}

/** The issue (`model.provider`) of a draft definition whose model this deployment's environment refuses. */
export function environmentModelIssues(
  definition: unknown,
  environment: string,
): { path: string; message: string }[] {
  if (localModelAllowed(environment)) return [];
  if (typeof definition !== "object" || definition === null || !("model" in definition)) return [];
  const model = definition.model;
  const provider = typeof model === "object" && model !== null && "provider" in model ? model.provider : null;
  return provider === "local"
    ? [{ path: "model.provider", message: `the 'local' model is for development only, not ${environment}` }]
    : [];
}
