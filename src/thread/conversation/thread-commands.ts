// The thread's operations, once: the WebSocket frames and the Worker's RPC calls both run these over a ThreadRuntime.
import { fail, ok, type Result } from "../../errors";
import { LIMITS, type ServerFrame } from "../../shared/protocol";
import {
  type EntriesPage,
  type EntriesQuery,
  type FeedbackReply,
  feedbackBodySchema,
  type MessageReply,
  type PostMessage,
  postMessageSchema,
  type RequestMeta,
  type ThreadInfo,
} from "../contract";
import { toWireEntry } from "../run";
import { withFeedback } from "./feedback";
import type { HeldTurn } from "./handoff";
import type { ThreadRuntime, TurnAccepted, TurnRequest } from "./thread-runtime";

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
    ...(message.attachments !== undefined ? { attachmentIds: message.attachments } : {}),
  };
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

/**
 * `POST …/messages` as JSON: the turn once settled; `created` is false for a retried clientMessageId. Parsed by the
 * Worker already; parsed again because this is the object's own boundary.
 */
export async function postMessage(
  runtime: ThreadRuntime,
  subject: string,
  message: unknown,
  meta: RequestMeta | undefined,
): Promise<Result<{ created: boolean; reply: MessageReply }>> {
  const parsed = postMessageSchema.safeParse(message);
  if (!parsed.success) return fail("bad_request", "Request body is invalid.");
  const accepted = await runtime.submit(sendRequest(subject, parsed.data, meta));
  return accepted.ok ? ok(await settledReply(runtime, accepted.value)) : accepted;
}

/** `POST …/entries/:entryId/feedback`: the subject's rating of an assistant entry, latest wins. */
export function rateEntry(
  runtime: ThreadRuntime,
  subject: string,
  entryId: unknown,
  body: unknown,
): Result<FeedbackReply> {
  // Parsed by the Worker already; parsed again because this is the object's own boundary.
  const parsed = feedbackBodySchema.safeParse(body);
  if (!parsed.success || typeof entryId !== "string") return fail("bad_request", "Request body is invalid.");
  return runtime.giveFeedback(subject, {
    entryId,
    rating: parsed.data.rating,
    ...(parsed.data.comment !== undefined ? { comment: parsed.data.comment } : {}),
  });
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
  // A run waiting for a person: what it waits for, again (its approvals, its client tool requests).
  const waiting = caughtUp.some((f) => f.type === "run" && f.status === "requires_action")
    ? []
    : runtime.waitingFrames();
  return [runtime.readyFrame(), ...caughtUp, ...waiting, ...queued];
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
