// The eval API's wire shapes (docs/evals.md): suites and their cases, runs and their results, the release gate.
import { z } from "zod";

export const MAX_CASES_PER_SUITE = 200;
export const MAX_MESSAGES_PER_CASE = 50;
export const MAX_MESSAGE_CHARS = 8000;
export const MAX_EXPECTATIONS_PER_CASE = 20;
export const MAX_REGEX_PATTERN_CHARS = 200;
/** A regex is tested against at most this many characters of the reply (docs/evals.md#regex). */
export const MAX_REGEX_INPUT_CHARS = 20_000;
export const MAX_GATE_SUITES = 10;
export const MAX_REPEATS = 5;

const caseId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1–64 letters, digits, '_' or '-'");
const jsonSchemaValue = z
  .custom<Record<string, unknown> | boolean>(
    (v) => typeof v === "boolean" || (typeof v === "object" && v !== null && !Array.isArray(v)),
    "must be a JSON Schema",
  )
  .meta({ description: "A JSON Schema (2020-12)." });

export const expectationSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("contains"),
    text: z.string().min(1).max(2000),
    caseSensitive: z.boolean().optional(),
  }),
  z.strictObject({
    type: z.literal("not_contains"),
    text: z.string().min(1).max(2000),
    caseSensitive: z.boolean().optional(),
  }),
  z.strictObject({
    type: z.literal("regex"),
    pattern: z.string().min(1).max(MAX_REGEX_PATTERN_CHARS),
    flags: z
      .string()
      .regex(/^[imsu]{0,4}$/, "may hold only i, m, s and u")
      .optional(),
  }),
  z.strictObject({
    type: z.literal("tool_called"),
    tool: z.string().min(1).max(128),
    input: jsonSchemaValue.optional(),
  }),
  z.strictObject({ type: z.literal("tool_not_called"), tool: z.string().min(1).max(128) }),
  z.strictObject({ type: z.literal("json_schema"), schema: jsonSchemaValue }),
  z.strictObject({
    type: z.literal("judge"),
    /** A model config as an artifact's `model` (GET /v1/schemas/artifact.json). */
    model: z.record(z.string(), z.unknown()),
    rubric: z.string().min(1).max(4000),
    threshold: z.number().min(0).max(1),
  }),
]);
export type Expectation = z.infer<typeof expectationSchema>;

export const caseMessageSchema = z.strictObject({
  role: z.enum(["user", "assistant"]),
  text: z.string().min(1).max(MAX_MESSAGE_CHARS),
});

export const fromThreadSchema = z.strictObject({
  threadId: z.string().min(1).max(128),
  entryId: z.string().min(1).max(128),
});

/** A case as stored and answered: its messages are always there (a `fromThread` case is copied when it is added). */
export const evalCaseSchema = z.strictObject({
  id: caseId,
  messages: z.array(caseMessageSchema).min(1).max(MAX_MESSAGES_PER_CASE),
  /** Where the messages were copied from, when they were. */
  fromThread: fromThreadSchema.optional(),
  context: z.record(z.string(), z.unknown()).optional(),
  toolMocks: z.record(z.string(), z.json()).optional(),
  expect: z.array(expectationSchema).max(MAX_EXPECTATIONS_PER_CASE),
});
export type EvalCase = z.infer<typeof evalCaseSchema>;

/** A case as written: messages, or a branch of a real thread to copy them from (redacted as the export is). */
export const evalCaseInput = evalCaseSchema
  .extend({
    messages: evalCaseSchema.shape.messages.optional(),
    expect: evalCaseSchema.shape.expect.optional(),
  })
  .refine((c) => c.messages !== undefined || c.fromThread !== undefined, {
    message: "needs messages or fromThread",
    path: ["messages"],
  });
export type EvalCaseInput = z.infer<typeof evalCaseInput>;

const uniqueCaseIds = (cases: { id: string }[]) => new Set(cases.map((c) => c.id)).size === cases.length;

export const createSuiteRequest = z.strictObject({
  name: z.string().trim().min(1).max(200),
  cases: z
    .array(evalCaseInput)
    .max(MAX_CASES_PER_SUITE)
    .refine(uniqueCaseIds, { message: "case ids must be unique" })
    .default([]),
});

export const patchSuiteRequest = z.strictObject({
  name: createSuiteRequest.shape.name.optional(),
  cases: z
    .array(evalCaseInput)
    .max(MAX_CASES_PER_SUITE)
    .refine(uniqueCaseIds, { message: "case ids must be unique" })
    .optional(),
});

export const addCaseRequest = z.strictObject({
  fromThread: fromThreadSchema,
  id: caseId.optional(),
  expect: evalCaseSchema.shape.expect.optional(),
  toolMocks: evalCaseSchema.shape.toolMocks,
});

export const suiteResponse = z.strictObject({
  id: z.string(),
  agentId: z.string(),
  name: z.string(),
  revision: z.number().int(),
  cases: z.array(evalCaseSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SuiteResponse = z.infer<typeof suiteResponse>;

export const evalTargetSchema = z.union([
  z.strictObject({ draftRevision: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) }),
  z.strictObject({ version: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) }),
]);
export type EvalTarget = z.infer<typeof evalTargetSchema>;

export const createRunRequest = z.strictObject({
  target: evalTargetSchema,
  repeats: z.number().int().min(1).max(MAX_REPEATS).optional(),
});

export const EVAL_RUN_STATUSES = ["queued", "running", "completed", "failed"] as const;
export type EvalRunStatus = (typeof EVAL_RUN_STATUSES)[number];

export const expectationFailureSchema = z.strictObject({
  /** The expectation's index in the case's `expect`, or -1 for the case itself (a failed run, an unmocked tool). */
  index: z.number().int(),
  type: z.string(),
  message: z.string(),
  /** What was seen instead (the reply, the tools called, the judge's verdict), cut to a readable length. */
  seen: z.json().optional(),
});
export type ExpectationFailure = z.infer<typeof expectationFailureSchema>;

export const judgeVerdictSchema = z.strictObject({
  index: z.number().int(),
  score: z.number().nullable(),
  passed: z.boolean(),
  reasoning: z.string(),
});
export type JudgeVerdict = z.infer<typeof judgeVerdictSchema>;

export const caseResultSchema = z.strictObject({
  caseId: z.string(),
  repeat: z.number().int(),
  passed: z.boolean(),
  failures: z.array(expectationFailureSchema),
  judge: z.array(judgeVerdictSchema),
  transcript: z.strictObject({
    messages: z.array(z.strictObject({ role: z.string(), text: z.string() })),
    toolCalls: z.array(z.strictObject({ name: z.string(), input: z.json(), output: z.json() })),
  }),
  transcriptSha256: z.string(),
  tokens: z.strictObject({ input: z.number().int(), output: z.number().int() }),
  durationMs: z.number().int(),
});
export type CaseResult = z.infer<typeof caseResultSchema>;

export const runResponse = z.strictObject({
  id: z.string(),
  agentId: z.string(),
  suiteId: z.string(),
  suiteRevision: z.number().int(),
  target: evalTargetSchema,
  artifactDigest: z.string(),
  repeats: z.number().int(),
  status: z.enum(EVAL_RUN_STATUSES),
  total: z.number().int(),
  passed: z.number().int(),
  failed: z.number().int(),
  /** passed / total once completed; null before. */
  passRate: z.number().nullable(),
  tokens: z.strictObject({ input: z.number().int(), output: z.number().int() }),
  durationMs: z.number().int().nullable(),
  createdAt: z.string(),
  completedAt: z.string().nullable(),
  cases: z.array(caseResultSchema),
});
export type RunResponse = z.infer<typeof runResponse>;

export const createdRunResponse = z.strictObject({ runId: z.string(), status: z.enum(EVAL_RUN_STATUSES) });

export const releaseGateSchema = z.strictObject({
  suiteIds: z
    .array(z.string().min(1).max(64))
    .min(1)
    .max(MAX_GATE_SUITES)
    .refine((ids) => new Set(ids).size === ids.length, { message: "must not repeat a suite" }),
  minPassRate: z.number().min(0).max(1),
});
export type ReleaseGate = z.infer<typeof releaseGateSchema>;

/** A release past a failing gate (`force: true`): who, when, why. */
export const gateOverrideSchema = z.strictObject({
  action: z.enum(["create", "activate"]),
  by: z.string(),
  at: z.string(),
  reason: z.string(),
  failing: z.json(),
});
export type GateOverride = z.infer<typeof gateOverrideSchema>;

/** The body `force` takes on a release's create and activate (docs/evals.md#the-release-gate). */
export const gateForce = {
  force: z.literal(true).optional(),
  reason: z.string().trim().min(1).max(1000).optional(),
};
export const activateReleaseRequest = z
  .strictObject(gateForce)
  .refine((b) => b.force === undefined || b.reason !== undefined, {
    message: "force needs a reason",
    path: ["reason"],
  });
