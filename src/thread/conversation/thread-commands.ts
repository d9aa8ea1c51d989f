// The thread's operations, once: the WebSocket frames and the Worker's RPC calls both run these over a ThreadRuntime.
import { z } from "zod";
import { fail, ok, type Result } from "../../errors";
import {
  FEEDBACK_RATINGS,
  LIMITS,
  MAX_FEEDBACK_COMMENT_CHARS,
  MULTITASK_STRATEGIES,
  type RunStatus,
  type ServerFrame,
  type ThreadMode,
  type WireEntry,
} from "../../shared/protocol";
import type { RunError } from "../../storage/thread/run-store";
import type { RequestMeta } from "../contract/request-meta";
import { toWireEntry } from "../run/frames";
import { withFeedback } from "./feedback";
import type { HeldTurn } from "./handoff";
import type { ThreadRuntime, TurnAccepted, TurnRequest } from "./thread-runtime";

/** The body of `POST /v1/threads/:threadId/messages`, parsed by the Worker and again by the object for SSE. */
export const postMessageSchema = z.strictObject({
  clientMessageId: z.string().regex(/^[A-Za-z0-9_-]{8,128}$/),
  text: z.string().min(1),
  parentId: z.string().min(1).max(128).optional(),
  /** This message's double-texting strategy, over the artifact's `conversation.multitask`. */
  multitask: z.enum(MULTITASK_STRATEGIES).optional(),
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

export function threadInfo(runtime: ThreadRuntime): ThreadInfo {
  const binding = runtime.binding;
  const first = runtime.entries.all({ limit: 1 })[0];
  const leaf = runtime.entries.latestLeaf();
  return {
    threadId: binding.threadId,
    agent: {
      id: binding.agentId,
      name: binding.artifact.name,
      version: binding.version,
      versionId: binding.versionId,
      digest: binding.digest,
    },
    version: runtime.current().version,
    createdAt: new Date(first?.createdAt ?? binding.boundAt).toISOString(),
    updatedAt: new Date(leaf?.createdAt ?? binding.boundAt).toISOString(),
    leafId: leaf?.id ?? null,
    mode: runtime.handoff.mode(),
  };
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

/** A page of the branch ending at `leafId` (default: the active leaf); an empty thread has no branch to page. */
export function entriesPage(runtime: ThreadRuntime, query: EntriesQuery): Result<EntriesPage> {
  const leafId = query.leafId ?? runtime.leafId();
  if (leafId === null) return ok({ items: [] });
  const limit = query.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > LIMITS.historyPageMax) {
    return fail("bad_request", `limit must be an integer from 1 to ${LIMITS.historyPageMax}.`);
  }
  const page = runtime.entries.branch(leafId, {
    limit,
    ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
  });
  if (!page.ok) return page;
  return ok({
    items: withFeedback(page.value.items.map(toWireEntry), runtime.feedback),
    ...(page.value.nextCursor !== undefined ? { nextCursor: page.value.nextCursor } : {}),
  });
}

export function sendRequest(subject: string, message: PostMessage, meta?: RequestMeta): TurnRequest {
  return {
    kind: "send",
    subject,
    ...(meta !== undefined ? { meta } : {}),
    clientMessageId: message.clientMessageId,
    text: message.text,
    ...(message.parentId !== undefined ? { parentId: message.parentId } : {}),
    ...(message.multitask !== undefined ? { multitask: message.multitask } : {}),
  };
}

export interface MessageReply {
  /** null: the thread is in handoff, so the message was stored and no run started. */
  run: { id: string; status: RunStatus; error?: RunError; reason?: string } | null;
  entries: WireEntry[];
}

/**
 * The JSON answer to a message: waits for the run to settle (a queued one for its turn first); `created` is false for
 * a retried clientMessageId. A queued message cancelled before it started has no entries.
 */
export async function settledReply(
  runtime: ThreadRuntime,
  accepted: TurnAccepted | HeldTurn,
): Promise<{ created: boolean; reply: MessageReply }> {
  if ("held" in accepted) {
    return { created: accepted.created, reply: { run: null, entries: [toWireEntry(accepted.userEntry)] } };
  }
  const { run } = accepted;
  const final = (await runtime.settled(run.id)) ?? run;
  const userEntry =
    accepted.userEntry ?? (final.userEntryId === null ? null : runtime.entries.get(final.userEntryId));
  const assistant = final.assistantEntryId === null ? null : runtime.entries.get(final.assistantEntryId);
  return {
    created: accepted.created,
    reply: {
      run: {
        id: final.id,
        status: final.status,
        ...(final.error !== null ? { error: final.error } : {}),
        ...(final.status === "aborted" && final.abortReason !== null ? { reason: final.abortReason } : {}),
      },
      entries: [userEntry, assistant].filter((e) => e !== null).map(toWireEntry),
    },
  };
}

export function cancelRun(
  runtime: ThreadRuntime,
  runId: string,
): Result<{ runId: string; status: "cancelling" }> {
  const cancelled = runtime.cancel(runId);
  if (!cancelled.ok) return cancelled;
  return ok({ runId: cancelled.value.id, status: "cancelling" });
}

/** What a socket receives for `hello`: `ready`, then the live run (or the one it resumes) from where it left off. */
export function helloFrames(
  runtime: ThreadRuntime,
  resume: { runId: string; afterSeq: number } | undefined,
): ServerFrame[] {
  const live = runtime.liveRunId();
  const from = resume ?? (live !== null ? { runId: live, afterSeq: 0 } : undefined);
  const caughtUp = from !== undefined ? runtime.catchUp(from.runId, from.afterSeq) : [];
  // Then every turn waiting behind the live run, with its position (the one resumed is already in the catch-up).
  const queued = runtime.queuedFrames().filter((f) => f.type !== "run" || f.runId !== from?.runId);
  return [runtime.readyFrame(), ...caughtUp, ...queued];
}

/** A retried send starts nothing: its peer learns where its message already is (or its place in the queue). */
export function retriedFrames(runtime: ThreadRuntime, accepted: TurnAccepted | HeldTurn): ServerFrame[] {
  if ("held" in accepted) return [{ type: "entry", entry: toWireEntry(accepted.userEntry) }];
  const user = accepted.userEntry;
  return [
    ...(user !== null ? [{ type: "entry" as const, entry: toWireEntry(user) }] : []),
    ...runtime.catchUp(accepted.run.id, 0),
  ];
}
