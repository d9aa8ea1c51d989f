// The sessions, messages, usage and "my threads" API contract (SPEC §3.3, §3.4): zod request and response shapes.
import { z } from "zod";
import { environmentSchema } from "./api";
import { FEEDBACK_RATINGS, MAX_AGENT_NAME_CHARS, THREAD_MODES } from "./protocol";

const isoTime = z.iso.datetime();
const day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date such as 2026-05-01");

export const RUN_STATUS_NAMES = ["queued", "running", "succeeded", "failed", "aborted"] as const;

export const sessionResponse = z.object({
  threadId: z.string(),
  agentId: z.string(),
  agentName: z.string(),
  environment: environmentSchema,
  agentVersion: z.number().int(),
  artifactDigest: z.string(),
  subject: z.string(),
  title: z.string().nullable(),
  messageCount: z.number().int(),
  lastMessageAt: isoTime.nullable(),
  leafId: z.string().nullable(),
  lastRun: z.object({ id: z.string(), status: z.enum(RUN_STATUS_NAMES) }).nullable(),
  /** `handoff` while a person of the tenant's team handles the thread (SPEC §8). */
  mode: z.enum(THREAD_MODES),
  createdAt: isoTime,
  updatedAt: isoTime,
});
export type SessionResponse = z.infer<typeof sessionResponse>;

/** A search hit (`GET /v1/sessions?q=`): the newest matching message and plain text around the match. */
export const sessionMatch = z.object({ entryId: z.string(), snippet: z.string() });

/** `GET /v1/sessions` items: with `q`, each also carries `match`. */
export const sessionListItem = sessionResponse.extend({ match: sessionMatch.optional() });

/** What an end user sees of their own thread: no subject, no digest. */
export const myThreadResponse = z.object({
  threadId: z.string(),
  agentVersion: z.number().int(),
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
  runId: z.string().nullable(),
  kind: z.string(),
  role: z.string().nullable(),
  content: z.string(),
  status: z.string().nullable(),
  toolCallId: z.string().nullable(),
  toolName: z.string().nullable(),
  toolCalls: z.json().nullable(),
  /** `human_agent` messages: the person's display name. */
  authorName: z.string().nullable(),
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

export const sessionListQuery = z.strictObject({
  /** Full-text search: plain words, every one must appear in a message of the session. */
  q: z.string().trim().min(1).max(SEARCH_QUERY_MAX_CHARS).optional(),
  agentId: id.optional(),
  mode: z.enum(THREAD_MODES).optional(),
  subject: id.optional(),
  updatedAfter: isoTime.optional(),
  cursor: z.string().optional(),
  limit: z.string().optional(),
});

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

export const pageQuery = z.strictObject({ cursor: z.string().optional(), limit: z.string().optional() });

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

/** `POST /v1/sessions/:threadId/messages`: a person's reply during a handoff (the text limit is the agent's). */
export const humanMessageRequest = z.strictObject({
  text: z.string().min(1).max(100_000),
  authorName: agentName.optional(),
});
export type HumanMessageRequest = z.infer<typeof humanMessageRequest>;
