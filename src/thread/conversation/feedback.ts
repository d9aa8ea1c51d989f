// Feedback on assistant replies (docs/protocol.md): checked, stored (latest wins), announced to every socket of the thread.
import { fail, ok, type Result } from "../../errors";
import {
  type FeedbackRating,
  MAX_FEEDBACK_COMMENT_CHARS,
  type ServerFrame,
  type WireEntry,
  type WireFeedback,
} from "../../shared/protocol";
import type { EntryStore } from "../../storage/thread/entry-store";
import type { Feedback, FeedbackStore } from "../../storage/thread/feedback-store";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import { recentThreadEvents } from "../../storage/thread/thread-events";
import type { FeedbackReply } from "../contract";
import type { ThreadLimits } from "../run";

export interface FeedbackInput {
  entryId: string;
  rating: FeedbackRating | null;
  comment?: string;
}

export interface FeedbackDeps {
  storage: DurableObjectStorage;
  entries: EntryStore;
  feedback: FeedbackStore;
  binding: ThreadBinding;
  limits: () => ThreadLimits;
  now: () => number;
  broadcast: (frame: ServerFrame) => void;
  project: () => void;
}

export function wireFeedback(feedback: Feedback | null | undefined): WireFeedback | null {
  if (feedback === null || feedback === undefined || feedback.rating === null) return null;
  return {
    rating: feedback.rating,
    ...(feedback.comment !== null ? { comment: feedback.comment } : {}),
    at: new Date(feedback.updatedAt).toISOString(),
  };
}

/**
 * Sets the verified subject's feedback on one assistant entry. A missing entry is not found; any other entry is a bad
 * request; a comment needs a rating (null clears both). Changes count against the thread's send rate.
 */
export function giveFeedback(
  deps: FeedbackDeps,
  subject: string,
  input: FeedbackInput,
): Result<FeedbackReply> {
  const comment = input.comment === undefined || input.comment === "" ? null : input.comment;
  if (comment !== null && comment.length > MAX_FEEDBACK_COMMENT_CHARS) {
    return fail("bad_request", `Comments are limited to ${MAX_FEEDBACK_COMMENT_CHARS} characters.`);
  }
  if (input.rating === null && comment !== null) {
    return fail("bad_request", "A comment needs a rating; a null rating clears the feedback.");
  }
  const entry = deps.entries.get(input.entryId);
  if (entry === null) return fail("not_found", "Entry not found.");
  if (entry.kind !== "message" || entry.role !== "assistant") {
    return fail("bad_request", "Feedback applies to assistant replies only.");
  }
  const limits = deps.limits();
  const since = deps.now() - 60_000;
  if (
    recentThreadEvents(deps.storage, "message.feedback", since, limits.sendsPerMinute + 1) >=
    limits.sendsPerMinute
  ) {
    return { ok: false, code: "rate_limited", message: "Too much feedback; slow down.", retryAfter: 60 };
  }
  const { feedback, changed } = deps.feedback.set({
    entryId: entry.id,
    rating: input.rating,
    comment,
    subject,
    event: {
      threadId: deps.binding.threadId,
      agentId: deps.binding.agentId,
      version: deps.binding.version,
      runId: entry.runId,
    },
  });
  const reply = { entryId: entry.id, feedback: wireFeedback(feedback) };
  deps.broadcast({ type: "feedback", ...reply });
  if (changed) deps.project();
  return ok(reply);
}

/** Wire entries with the current feedback on each assistant entry among them. */
export function withFeedback(items: WireEntry[], store: FeedbackStore): WireEntry[] {
  const ids = items.filter((e) => e.role === "assistant").map((e) => e.id);
  if (ids.length === 0) return items;
  const found = store.forEntries(ids);
  return items.map((item) => {
    const feedback = wireFeedback(found.get(item.id));
    return feedback === null ? item : { ...item, feedback };
  });
}
