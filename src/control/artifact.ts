// The agent artifact: what a version pins. Strict zod schema (unknown keys refused), schemaVersion 1.
import { z } from "zod";
import { ACCENT_COLOR_PATTERN, LOCALE_PATTERN, POSITIONS, THEMES } from "../shared/presentation";
import { MULTITASK_STRATEGIES } from "../shared/protocol";
import { IDENTITY_FACTS, identityProblems, MAX_IDENTITY_POINTERS } from "./tool-identity";
import { modelUrlProblem, toolUrlProblem } from "./url-policy";

export const MODEL_PROVIDERS = ["local", "workers-ai", "openai-compatible", "anthropic"] as const;

const secretAlias = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "must be a secret alias: lowercase letters, digits, '-' or '_'");

export const localModelOptionsSchema = z.strictObject({
  chunks: z.number().int().min(1).max(10_000).optional(),
  chunkDelayMs: z.number().int().min(0).max(60_000).optional(),
  failAfterChunks: z.number().int().min(0).max(10_000).optional(),
  hangAfterChunks: z.number().int().min(0).max(10_000).optional(),
  toolCall: z
    .strictObject({ name: z.string().min(1).max(64), input: z.record(z.string(), z.unknown()) })
    .optional(),
});

export const modelSchema = z
  .strictObject({
    provider: z.enum(MODEL_PROVIDERS),
    model: z.string().min(1).max(200),
    temperature: z.number().min(0).max(2).optional(),
    maxOutputTokens: z.number().int().min(1).max(200_000).optional(),
    // The URL policy is judged when publishing and before every call (`publishIssues`), not here: stored versions
    // are re-parsed on every read, and a stricter policy must not make an already pinned thread unreadable.
    baseUrl: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional(),
    apiKeySecret: secretAlias.optional(),
    local: localModelOptionsSchema.optional(),
  })
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

export const toolSchema = z
  .strictObject({
    name: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/),
    description: z.string().min(1).max(2000),
    // Public https hosts only (src/control/url-policy.ts), or local plain http, which publishing admits only in
    // development; the platform's own host is refused where it is known (routes/versions.ts).
    url: z.string().superRefine((url, ctx) => {
      const problem = toolUrlProblem(url, { allowLocalHttp: true });
      if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
    }),
    /** Alias of the tenant secret (`whsec_…`) that signs every call to this tool. */
    signingSecret: secretAlias,
    inputSchema: z.record(z.string(), z.unknown()).optional(),
    /**
     * Where the runtime writes who is calling: JSON pointers into the input, each naming a runtime fact. Those
     * properties are hidden from the model and overwritten in its arguments (src/control/tool-identity.ts).
     */
    identity: z
      .record(z.string(), z.enum(IDENTITY_FACTS))
      .refine((identity) => Object.keys(identity).length <= MAX_IDENTITY_POINTERS, {
        message: `at most ${MAX_IDENTITY_POINTERS} pointers`,
      })
      .optional(),
    timeoutMs: z.number().int().min(100).max(30_000).optional(),
  })
  .superRefine((tool, ctx) => {
    if (tool.identity === undefined) return;
    for (const problem of identityProblems(tool.identity, tool.inputSchema)) {
      ctx.addIssue({ code: "custom", path: ["identity", problem.pointer], message: problem.message });
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
  maxMessageChars: z.number().int().min(1).max(100_000).optional(),
  maxSendsPerMinute: z.number().int().min(1).max(1000).optional(),
  maxSocketsPerThread: z.number().int().min(1).max(64).optional(),
  idleTimeoutSeconds: z.number().int().min(10).max(86_400).optional(),
  maxContextTokens: z.number().int().min(256).max(2_000_000).optional(),
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
      maxAgeDays: z.number().int().min(1).max(3650).optional(),
      maxMessagesPerThread: z.number().int().min(1).max(1_000_000).optional(),
      /**
       * SPEC §12 zero retention: D1 never receives message text, and the thread object blanks all entry text
       * `idleMinutes` (default 30) after the thread's last activity. `standard` (the default) keeps text.
       */
      mode: z.enum(RETENTION_MODES).optional(),
      idleMinutes: z.number().int().min(MIN_IDLE_MINUTES).max(MAX_IDLE_MINUTES).optional(),
    })
    .superRefine((retention, ctx) => {
      if (retention.idleMinutes !== undefined && retention.mode !== "zero") {
        ctx.addIssue({ code: "custom", path: ["idleMinutes"], message: "only allowed with mode 'zero'" });
      }
    })
    .optional(),
});

export const widgetSchema = z.strictObject({
  title: z.string().max(120).optional(),
  theme: z.enum(THEMES).optional(),
  accentColor: z.string().regex(ACCENT_COLOR_PATTERN, "must be a colour as #rrggbb").optional(),
  position: z.enum(POSITIONS).optional(),
  strings: z.record(z.string().max(64), z.string().max(500)).optional(),
  /** The widget's language for this agent (its greeting and prompts are written in it): a BCP 47 tag. */
  locale: z
    .string()
    .max(35)
    .regex(LOCALE_PATTERN, "must be a BCP 47 language tag such as 'es' or 'pt-BR'")
    .optional(),
});

/** How the thread behaves as a conversation; `multitask` defaults to `reject` (SPEC §8, double-texting). */
export const conversationSchema = z.strictObject({
  multitask: z.enum(MULTITASK_STRATEGIES).optional(),
});

/** SPEC §8: a person of the tenant's team may take the conversation over; `enabled` gives the model a tool to ask. */
export const handoffSchema = z.strictObject({ enabled: z.boolean() });

/**
 * SPEC §11: `offer` lets the visitor of a thread on this version accept the version the agent's active release would
 * give the thread now, when that one is newer (`ready.upgrade`); `never` (the default) offers nothing.
 */
export const UPGRADE_POLICIES = ["never", "offer"] as const;

/** The built-in tool an artifact with `handoff.enabled` gives its model; no artifact tool may take its name. */
export const REQUEST_HANDOFF_TOOL = "request_handoff";

export const artifactSchema = z.strictObject({
  schemaVersion: z.literal(1),
  name: z.string().min(1).max(200),
  instructions: z.string().max(100_000),
  model: modelSchema,
  greeting: z.string().max(2000).optional(),
  suggestedPrompts: z.array(z.string().min(1).max(500)).max(8).optional(),
  limits: limitsSchema.optional(),
  tools: z.array(toolSchema).max(32).optional(),
  widget: widgetSchema.optional(),
  conversation: conversationSchema.optional(),
  handoff: handoffSchema.optional(),
  upgrades: z.enum(UPGRADE_POLICIES).optional(),
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
