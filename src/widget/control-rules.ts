// The rules behind the conversation controls, free of the DOM (unit-tested in workerd): which message shows which
// control, what a thumb click sends, what the handoff line says, what the widget takes from /v1/me/threads.
import type { ThreadMode } from "../shared/protocol";
import { nonEmpty as str } from "./checks";
import { format, type Strings } from "./strings";

export type Rating = "up" | "down";

/** What the rules read of a message on screen (a transcript `Item`). */
export interface MessageFacts {
  role: "user" | "assistant" | "tool";
  state: string;
  entryId?: string;
  author?: string;
}

/** The rating a click on `clicked` sends: the active thumb clicked again takes the rating back (null). */
export function nextRating(current: Rating | undefined, clicked: Rating): Rating | null {
  return current === clicked ? null : clicked;
}

/**
 * Which controls a message shows: thumbs on stored model replies; retry on the last message when it is a model
 * reply (also a failed or stopped one); edit on the last own message once stored. A person's message has none.
 */
export function controlsFor(
  item: MessageFacts,
  last: MessageFacts | undefined,
  lastUser: MessageFacts | undefined,
  canFork: boolean,
): { rate: boolean; retry: boolean; edit: boolean } {
  const reply = item.role === "assistant" && item.author === undefined;
  const settled = item.state !== "streaming" && item.state !== "pending";
  return {
    rate: reply && settled && item.entryId !== undefined,
    retry: reply && settled && canFork && item === last,
    edit: item === lastUser && canFork && item.entryId !== undefined,
  };
}

/** What the handoff line says: nothing while the model answers; who answers, once a person has written, in handoff. */
export function handoffText(s: Strings, mode: ThreadMode, person: string | undefined): string {
  if (mode === "agent") return "";
  return person === undefined ? s.handoffWaiting : format(s.handoffWith, { name: person });
}

export interface PastThread {
  threadId: string;
  title: string | null;
  /** ISO time of the last message (or of the last change), "" when unknown. */
  at: string;
}

/** The threads of a `/v1/me/threads` answer, read field by field; anything unusable is left out. */
export function parsePastThreads(body: unknown): PastThread[] {
  const items = (body as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) return [];
  return items.flatMap((v: Record<string, unknown> | null) => {
    const threadId = str(v?.threadId);
    return threadId && v
      ? [{ threadId, title: str(v.title) ?? null, at: str(v.lastMessageAt) ?? str(v.updatedAt) ?? "" }]
      : [];
  });
}
