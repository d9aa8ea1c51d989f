// The sessions, messages, usage and "my threads" API contract (docs/protocol.md, docs/api.md): zod request and response shapes.
import { z } from "zod";
import { environmentSchema } from "./api";
import { subjectField } from "./erasure-api";
import { attachmentRef, FEEDBACK_RATINGS, MAX_AGENT_NAME_CHARS, THREAD_MODES } from "./protocol";

const isoTime = z.iso.datetime();
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date such as 2026-05-01");

export const RUN_STATUS_NAMES = [
  "queued",
  "running",
  "requires_action",
  "succeeded",
  "failed",
  "aborted",
] as const;

/** docs/privacy.md: a legal hold as a session view shows it; `scope` says whether the thread or its subject is held. */
export const sessionHold = z.object({
  reason: z.string(),
  since: isoTime,
  scope: z.enum(["thread", "subject"]),
});

export const MAX_HOLD_REASON_CHARS = 500;

const holdReason = z.string().trim().min(1).max(MAX_HOLD_REASON_CHARS);

/** `PUT /v1/sessions/:threadId/hold`. */
export const holdRequest = z.strictObject({ reason: holdReason });

/** `PUT /v1/subject-holds`: the subject in the body, never in the URL; the reason is optional (kept as ""). */
export const subjectHoldRequest = z.strictObject({ subject: subjectField, reason: holdReason.optional() });

/** `DELETE /v1/subject-holds`: a reason may be sent, as with the PUT; a lifted hold keeps nothing of it. */
export const subjectHoldRelease = z.strictObject({ subject: subjectField, reason: holdReason.optional() });

/** A hold as `GET /v1/holds` and the PUT routes answer it. */
export const holdResponse = z.object({
  scope: z.enum(["thread", "subject"]),
  /** The thread id, or the subject id. */
  target: z.string(),
  reason: z.string(),
  since: isoTime,
});
export type HoldResponse = z.infer<typeof holdResponse>;

export const sessionResponse = z.object({
  threadId: z.string(),
  agentId: z.string(),
  agentName: z.string(),
  environment: environmentSchema,
  /** The pinned version (and its digest): the one the thread was bound to. */
  agentVersion: z.number().int(),
  artifactDigest: z.string(),
  /** The version of the current leaf: the pinned one until an upgrade moved the thread (docs/api.md). */
  version: z.number().int(),
  subject: z.string(),
  title: z.string().nullable(),
  messageCount: z.number().int(),
  lastMessageAt: isoTime.nullable(),
  leafId: z.string().nullable(),
  lastRun: z.object({ id: z.string(), status: z.enum(RUN_STATUS_NAMES) }).nullable(),
  /** `handoff` while a person of the tenant's team handles the thread (docs/protocol.md). */
  mode: z.enum(THREAD_MODES),
  /** The legal hold that keeps this thread from retention and erasure, or null. */
  hold: sessionHold.nullable(),
  /** Present (true) only on a preview thread of the console (docs/api.md): listed with `preview=true`, gone after 24 h. */
  preview: z.literal(true).optional(),
  createdAt: isoTime,
  updatedAt: isoTime,
});
export type SessionResponse = z.infer<typeof sessionResponse>;

/** A search hit (`POST /v1/sessions/search` with `q`): the newest matching message and plain text around the match. */
export const sessionMatch = z.object({ entryId: z.string(), snippet: z.string() });

/** `GET /v1/sessions` items: with `q`, each also carries `match`. */
export const sessionListItem = sessionResponse.extend({ match: sessionMatch.optional() });

/** What an end user sees of their own thread: no subject, no digest. */
export const myThreadResponse = z.object({
  threadId: z.string(),
  agentVersion: z.number().int(),
  /** The version of the current leaf (docs/api.md). */
  version: z.number().int(),
  title: z.string().nullable(),
  messageCount: z.number().int(),
  lastMessageAt: isoTime.nullable(),
  createdAt: isoTime,
  updatedAt: isoTime,
});
export type MyThreadResponse = z.infer<typeof myThreadResponse>;

export const messageResponse = z.object({
  id: z.string(),
  seq: z.number().int(),
  parentId: z.string().nullable(),
  runId: z
    .string()
    .nullable()
    .describe(
      "The run that produced the reply (or that the user message started); its audit: GET …/runs/:runId/input.",
    ),
  kind: z.string(),
  role: z.string().nullable(),
  content: z.string(),
  status: z.string().nullable(),
  toolCallId: z.string().nullable(),
  toolName: z.string().nullable(),
  toolCalls: z.json().nullable(),
  attachments: z
    .array(attachmentRef)
    .optional()
    .describe("User messages sent with files: their refs (docs/api.md#attachments); absent otherwise."),
  /** `human_agent` messages: the person's display name. */
  authorName: z.string().nullable(),
  /** The agent version in effect where the entry sits: the one that produced a reply (docs/api.md). */
  version: z
    .number()
    .int()
    .nullable()
    .describe("The agent version in effect where the entry sits: for a reply, the version that produced it."),
  inputDigest: z
    .string()
    .nullable()
    .describe(
      "Assistant messages: the `inputDigest` of the run that produced it (docs/api.md), as GET …/runs/:runId/input verifies it; null otherwise or when the run never reached a model.",
    ),
  /** Assistant messages the user rated: the current rating (latest wins); null otherwise. */
  feedback: z
    .object({ rating: z.enum(FEEDBACK_RATINGS), comment: z.string().nullable(), at: isoTime })
    .nullable(),
  createdAt: isoTime,
});
export type MessageResponse = z.infer<typeof messageResponse>;

export const usageDayResponse = z.object({
  day,
  runs: z.number().int(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
});
export type UsageDayResponse = z.infer<typeof usageDayResponse>;

export const usageResponse = z.object({
  from: day,
  to: day,
  agentId: z.string().nullable(),
  items: z.array(usageDayResponse),
  totals: z.object({ runs: z.number().int(), inputTokens: z.number().int(), outputTokens: z.number().int() }),
});
export type UsageResponse = z.infer<typeof usageResponse>;

const id = z.string().min(1).max(256);

/** At most this many characters of search text. */
export const SEARCH_QUERY_MAX_CHARS = 200;

/**
 * `?limit=` of a list: text in the query string (the route checks it), declared in the contract as the integer it
 * must be, with its bounds, so generated clients type it as a number (docs/api.md#conventions).
 */
export const pageLimit = z
  .string()
  .optional()
  .meta({
    description: "Items per page, 1–200 (default 50).",
    parameter: { type: "integer", minimum: 1, maximum: 200, default: 50 },
  });

/**
 * `GET /v1/sessions`: the filters that name no end user. `subject` and `q` travel only in the body of
 * `POST /v1/sessions/search`; on this route they answer 410 (docs/privacy.md#end-user-ids-stay-out-of-urls).
 */
export const sessionListQuery = z.strictObject({
  agentId: id.optional(),
  mode: z.enum(THREAD_MODES).optional(),
  updatedAfter: isoTime.optional(),
  /** `true`: only the console's preview threads; otherwise none of them. */
  preview: z.enum(["true", "false"]).optional(),
  cursor: z.string().optional(),
  limit: pageLimit,
});

/** The query parameters `GET /v1/sessions` no longer takes: they carry an end user's id or words (410). */
export const RETIRED_SESSION_LIST_PARAMETERS = ["subject", "q"] as const;

/**
 * `POST /v1/sessions/search`: every filter of the list, the end user's id and the search text included, in a JSON
 * body; the same page, order and cursors as `GET /v1/sessions` (docs/api.md#analytics-and-search).
 */
export const sessionSearchRequest = z.strictObject({
  /** Full-text search: plain words, every one must appear in a message of the session. */
  q: z.string().trim().min(1).max(SEARCH_QUERY_MAX_CHARS).optional(),
  agentId: id.optional(),
  mode: z.enum(THREAD_MODES).optional(),
  /** The end user's id the sessions were launched for. */
  subject: id.optional(),
  updatedAfter: isoTime.optional(),
  /** `true`: only the console's preview threads; otherwise none of them. */
  preview: z.boolean().optional(),
  cursor: z.string().optional(),
  /** Items per page, 1–200 (default 50). */
  limit: z.number().int().min(1).max(200).optional(),
});
export type SessionSearchRequest = z.input<typeof sessionSearchRequest>;

export const usageQuery = z.strictObject({
  from: day.optional(),
  to: day.optional(),
  agentId: id.optional(),
});

export const ANALYTICS_GROUPS = ["version", "day"] as const;

export const analyticsQuery = z.strictObject({
  agentId: id.optional(),
  from: day.optional(),
  to: day.optional(),
  groupBy: z.enum(ANALYTICS_GROUPS).optional(),
});

export const analyticsItem = z.object({
  /** groupBy=version: the version number as text (`unknown` when it cannot be told); groupBy=day: the UTC day. */
  key: z.string(),
  /** groupBy=version: the agent the version belongs to, and its number. */
  agentId: z.string().optional(),
  version: z.number().int().nullable().optional(),
  threads: z.number().int(),
  turns: z.number().int(),
  failedTurns: z.number().int(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  /** Milliseconds from a turn's acceptance to its first streamed delta, from a histogram (within about 9%). */
  firstDeltaMsP50: z.number().int().nullable(),
  firstDeltaMsP95: z.number().int().nullable(),
  feedbackUp: z.number().int(),
  feedbackDown: z.number().int(),
});

export const analyticsResponse = z.object({
  from: day,
  to: day,
  groupBy: z.enum(ANALYTICS_GROUPS),
  agentId: z.string().nullable(),
  items: z.array(analyticsItem),
});
export type AnalyticsResponse = z.infer<typeof analyticsResponse>;

export const pageQuery = z.strictObject({ cursor: z.string().optional(), limit: pageLimit });

export const USAGE_MAX_DAYS = 366;
export const USAGE_DEFAULT_DAYS = 30;

const agentName = z.string().trim().min(1).max(MAX_AGENT_NAME_CHARS);

/** `POST /v1/sessions/:threadId/handoff`: `agentName` names the person taking over (start only). */
export const handoffRequest = z.discriminatedUnion("action", [
  z.strictObject({ action: z.literal("start"), agentName: agentName.optional() }),
  z.strictObject({ action: z.literal("end") }),
]);
export type HandoffRequest = z.infer<typeof handoffRequest>;

export const handoffResponse = z.object({
  threadId: z.string(),
  mode: z.enum(THREAD_MODES),
  agentName: z.string().optional(),
  since: isoTime.optional(),
  /** False when the thread already was in that mode: nothing was written or announced. */
  changed: z.boolean(),
});
export type HandoffResponse = z.infer<typeof handoffResponse>;

/** `POST /v1/sessions/:threadId/upgrade`: a published version of the thread's own agent (docs/api.md). */
export const upgradeRequest = z.strictObject({ version: z.number().int().positive() });
export type UpgradeRequest = z.infer<typeof upgradeRequest>;

export const upgradeResponse = z.object({
  threadId: z.string(),
  fromVersion: z.number().int(),
  toVersion: z.number().int(),
  /** The `version_change` entry, appended at the leaf the thread was on. */
  entryId: z.string(),
});
export type UpgradeResponse = z.infer<typeof upgradeResponse>;

/** `POST /v1/sessions/:threadId/messages`: a person's reply during a handoff (the text limit is the agent's). */
export const humanMessageRequest = z.strictObject({
  text: z.string().min(1).max(100_000),
  authorName: agentName.optional(),
});
export type HumanMessageRequest = z.infer<typeof humanMessageRequest>;

/** `GET /v1/sessions/:threadId/runs/:runId/input?step=N`: which model call of the run (0 first; the last by default). */
export const runInputQuery = z.strictObject({
  step: z
    .string()
    .regex(/^\d+$/, "Must be a whole number, 0 or more.")
    .transform(Number)
    .optional()
    .meta({
      description: "The model call of the run to rebuild, 0 first (default: its last).",
      parameter: { type: "integer", minimum: 0 },
    }),
});

const runStepDigest = z.object({
  step: z.number().int(),
  inputDigest: z
    .string()
    .nullable()
    .describe("Null only where digesting that call's input failed (a bug, logged)."),
});

/**
 * A run's audit record with the model input of one of its calls rebuilt from storage (docs/api.md): the canonical
 * JSON of `{model, messages, tools, parameters}` hashes to `inputDigest`; `verified` says the server checked it does.
 */
export const runInputResponse = z.object({
  runId: z.string(),
  inputDigest: z
    .string()
    .describe("`sha256:` + hex of the canonical JSON of {model, messages, tools, parameters} (this step's)."),
  promptBuilder: z.string().describe("The prompt builder that made the input, e.g. `pb1`."),
  artifactDigest: z.string(),
  agentVersion: z.number().int(),
  contextVersion: z.number().int().describe("The thread's context version in force for the run (0: none)."),
  userEntryId: z.string(),
  model: z.string().describe("`<provider>/<model id>` as the artifact names it."),
  messages: z.array(z.record(z.string(), z.unknown())).describe("The LanguageModelV4 prompt, system first."),
  tools: z.array(z.record(z.string(), z.unknown())).describe("The function tools, identity fields hidden."),
  parameters: z.object({
    temperature: z.number().optional(),
    maxOutputTokens: z.number().int().optional(),
    toolChoice: z.object({ type: z.literal("auto") }).optional(),
  }),
  verified: z.boolean(),
  step: z
    .number()
    .int()
    .describe("The model call answered (0 first): the last one unless `?step=` names another."),
  steps: z
    .array(runStepDigest)
    .describe("Every model call of the run, in order: one, plus one per tool round trip."),
});
export type RunInputResponse = z.infer<typeof runInputResponse>;
