// The pure rules behind the widget's conversation controls: which message shows which control, what a thumb click
// sends, what the handoff line says, and what the widget takes from a /v1/me/threads answer.
import { describe, expect, it } from "vitest";
import {
  controlsFor,
  handoffText,
  type MessageFacts,
  nextRating,
  parsePastThreads,
} from "../../src/widget/control-rules";
import { DEFAULT_STRINGS } from "../../src/widget/strings";

function item(role: MessageFacts["role"], state = "done", extra: Partial<MessageFacts> = {}): MessageFacts {
  return { role, state, entryId: "ent", ...extra };
}

describe("controlsFor", () => {
  const question = item("user");
  const reply = item("assistant");
  const items = [question, reply];
  const show = (target: MessageFacts, list: MessageFacts[] = items, canFork = true) =>
    controlsFor(
      target,
      list.at(-1),
      [...list].reverse().find((i) => i.role === "user"),
      canFork,
    );

  it("puts thumbs and retry on the last reply and edit on the last own message", () => {
    expect(show(reply)).toEqual({ rate: true, retry: true, edit: false });
    expect(show(question)).toEqual({ rate: false, retry: false, edit: true });
  });

  it("keeps thumbs on earlier replies but retry and edit only on the last ones", () => {
    const later = [...items, item("user"), item("assistant")];
    expect(show(reply, later)).toEqual({ rate: true, retry: false, edit: false });
    expect(show(question, later)).toEqual({ rate: false, retry: false, edit: false });
  });

  it("offers retry on a failed or stopped reply, also one that was never stored", () => {
    const failed = item("assistant", "failed", { entryId: undefined });
    expect(show(failed, [question, failed])).toEqual({ rate: false, retry: true, edit: false });
    const stopped = item("assistant", "stopped");
    expect(show(stopped, [question, stopped])).toEqual({ rate: true, retry: true, edit: false });
  });

  it("shows nothing to retry or edit while a reply streams, a send waits, or a person answers", () => {
    const streaming = item("assistant", "streaming", { entryId: undefined });
    expect(show(streaming, [question, streaming], false)).toEqual({ rate: false, retry: false, edit: false });
    expect(show(question, [question, streaming], false).edit).toBe(false);
    expect(show(reply, items, false)).toEqual({ rate: true, retry: false, edit: false });
    const pending = item("user", "pending", { entryId: undefined });
    expect(show(pending, [...items, pending]).edit).toBe(false);
  });

  it("gives a person's message (handoff) no thumbs and no retry", () => {
    const person = item("assistant", "done", { author: "Dana" });
    expect(show(person, [question, person])).toEqual({ rate: false, retry: false, edit: false });
  });
});

describe("nextRating", () => {
  it("sends the clicked thumb, and null when the active thumb is clicked again", () => {
    expect(nextRating(undefined, "up")).toBe("up");
    expect(nextRating("up", "down")).toBe("down");
    expect(nextRating("down", "down")).toBeNull();
    expect(nextRating("up", "up")).toBeNull();
  });
});

describe("handoffText", () => {
  it("says nothing while the model answers, who answers in handoff", () => {
    expect(handoffText(DEFAULT_STRINGS, "agent", "Dana")).toBe("");
    expect(handoffText(DEFAULT_STRINGS, "handoff", undefined)).toBe("A person will reply soon.");
    expect(handoffText(DEFAULT_STRINGS, "handoff", "Dana")).toBe("You're chatting with Dana");
  });
});

describe("parsePastThreads", () => {
  it("takes the threads of a /v1/me/threads answer, field by field", () => {
    const body = {
      items: [
        { threadId: "thr_2", title: "Second", lastMessageAt: "2026-01-02T00:00:00.000Z", updatedAt: "x" },
        { threadId: "thr_1", title: null, lastMessageAt: null, updatedAt: "2026-01-01T00:00:00.000Z" },
      ],
      nextCursor: "c",
    };
    expect(parsePastThreads(body)).toEqual([
      { threadId: "thr_2", title: "Second", at: "2026-01-02T00:00:00.000Z" },
      { threadId: "thr_1", title: null, at: "2026-01-01T00:00:00.000Z" },
    ]);
  });

  it("leaves out what it cannot show and never throws", () => {
    expect(parsePastThreads(null)).toEqual([]);
    expect(parsePastThreads({ items: "no" })).toEqual([]);
    expect(parsePastThreads({ items: [null, 5, { threadId: "" }, { threadId: 7 }, { title: "x" }] })).toEqual(
      [],
    );
    expect(parsePastThreads({ items: [{ threadId: "thr_1", title: 3 }] })).toEqual([
      { threadId: "thr_1", title: null, at: "" },
    ]);
  });
});
