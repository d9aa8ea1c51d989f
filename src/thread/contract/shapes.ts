// The thread object's requests and answers as the Worker sees them (docs/api.md): the shapes of its RPC methods.
import { z } from "zod";
import type { ModelParameters } from "../../models/model-input";
import {
  ATTACHMENT_ID_PATTERN,
  FEEDBACK_RATINGS,
  MAX_ATTACHMENTS_PER_MESSAGE,
  MAX_FEEDBACK_COMMENT_CHARS,
  MULTITASK_STRATEGIES,
  type RunStatus,
  type ThreadMode,
  type WireEntry,
  type WireFeedback,
} from "../../shared/protocol";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import type { RunError } from "../../storage/thread/run-store";

/** The body of `POST /v1/threads/:threadId/messages`, parsed by the Worker and again by the object for SSE. */
export const postMessageSchema = z.strictObject({
  clientMessageId: z.string().regex(/^[A-Za-z0-9_-]{8,128}$/),
  text: z.string().min(1),
  parentId: z.string().min(1).max(128).optional(),
  /** This message's double-texting strategy, over the artifact's `conversation.multitask`. */
  multitask: z.enum(MULTITASK_STRATEGIES).optional(),
  /** Ids of attachments uploaded to this thread (docs/api.md#attachments), as the `send` frame names them. */
  attachments: z
    .array(z.string().regex(ATTACHMENT_ID_PATTERN))
    .min(1)
    .max(MAX_ATTACHMENTS_PER_MESSAGE)
    .optional(),
});
export type PostMessage = z.infer<typeof postMessageSchema>;

/** The body of `POST /v1/threads/:threadId/entries/:entryId/feedback`: the frame's fields without its type. */
export const feedbackBodySchema = z.strictObject({
  rating: z.enum(FEEDBACK_RATINGS).nullable(),
  comment: z.string().max(MAX_FEEDBACK_COMMENT_CHARS).optional(),
});
export type FeedbackBody = z.infer<typeof feedbackBodySchema>;

export interface ThreadInfo {
  threadId: string;
  /** The pinned version. */
  agent: { id: string; name: string; version: number; versionId: string; digest: string };
  /** The version of the current leaf (docs/api.md). */
  version: number;
  createdAt: string;
  updatedAt: string;
  leafId: string | null;
  /** `handoff` while a person answers (docs/protocol.md). */
  mode: ThreadMode;
}

export interface EntriesPage {
  items: WireEntry[];
  nextCursor?: string;
}

/** `limit` as the HTTP query gave it (`Number(param)`): an empty thread answers before it is checked, as always. */
export interface EntriesQuery {
  leafId?: string;
  cursor?: string;
  limit?: number;
}

export interface MessageReply {
  /** null: the thread is in handoff, so the message was stored and no run started. */
  run: { id: string; status: RunStatus; error?: RunError; reason?: string } | null;
  entries: WireEntry[];
}

export interface HandoffView {
  threadId: string;
  mode: ThreadMode;
  agentName?: string;
  /** ISO time the handoff started; only in handoff. */
  since?: string;
  /** False when the thread was already in the asked mode: nothing was written or announced. */
  changed: boolean;
}

export interface FeedbackReply {
  entryId: string;
  feedback: WireFeedback | null;
}

export interface UpgradeReply {
  threadId: string;
  fromVersion: number;
  toVersion: number;
  entryId: string;
}

/**
 * The audit view of one model call of a run: its record, the input rebuilt from storage, and whether that input
 * hashes to it.
 */
export interface RunInputView {
  runId: string;
  inputDigest: string;
  promptBuilder: string;
  artifactDigest: string;
  agentVersion: number;
  contextVersion: number;
  userEntryId: string;
  model: string;
  /** A `LanguageModelV4Prompt` (typed loosely here: the provider types are too deep for an RPC signature). */
  messages: unknown[];
  /** `LanguageModelV4FunctionTool[]`. */
  tools: unknown[];
  parameters: ModelParameters;
  /** True when the rebuilt input's canonical JSON hashes to `inputDigest`. */
  verified: boolean;
  /** The model call this input was handed to (0 first); `inputDigest` is its recorded digest. */
  step: number;
  /** Every model call of the run, in order, with its recorded digest (null where digesting failed, a bug). */
  steps: { step: number; inputDigest: string | null }[];
}

/** What a preview launch pins its new thread to: a checked draft artifact (version 0) or a published version. */
export type PreviewPin = Omit<
  ThreadBinding,
  "tenantId" | "environment" | "agentId" | "threadId" | "boundAt"
> & {
  preview: NonNullable<ThreadBinding["preview"]>;
};

/** What an eval case's thread did (docs/evals.md): its active branch's messages, tool calls, runs and tokens. */
export interface EvalOutcome {
  messages: { role: string; text: string }[];
  /** Input and output as JSON text: a recursive JSON type is too deep for the RPC stub's types. */
  toolCalls: { name: string; inputJson: string; outputJson: string; status: string }[];
  runs: { status: RunStatus; error: string | null }[];
  tokens: { input: number; output: number };
}
