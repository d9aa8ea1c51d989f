// What a parsed client frame does to the thread: the frames to answer, a close, or the socket becoming ready.
import type { ErrorCode, ErrorReason } from "../../shared/errors";
import { WS_CLOSE_CODE } from "../../shared/errors";
import type { ClientFrame, ServerFrame } from "../../shared/protocol";
import type { RequestMeta } from "../contract";
import type { ThreadRuntime, TurnRequest } from "../conversation";
import { cancelRun, entriesPage, helloFrames, retriedFrames, sendRequest } from "../conversation";

export interface FrameOutcome {
  frames: ServerFrame[];
  close?: { code: number; reason: string };
  /** The socket finished `hello` and now receives the live stream. */
  ready?: true;
}

export function closeCode(code: ErrorCode): number {
  return WS_CLOSE_CODE[code] ?? 4400;
}

const errorFrame = (failure: { code: ErrorCode; reason?: ErrorReason; message: string }): ServerFrame => ({
  type: "error",
  code: failure.code,
  ...(failure.reason !== undefined ? { reason: failure.reason } : {}),
  message: failure.message,
});

/** The frames that start a run: answered after the tenant's quota, so never synchronously. */
export type TurnFrame = Extract<ClientFrame, { type: "send" | "edit" | "regenerate" }>;

/** Answered by the object after its own signing (async), never by `dispatchFrame`. */
export type RefreshFrame = Extract<ClientFrame, { type: "refresh" }>;

export function isTurnFrame(frame: ClientFrame): frame is TurnFrame {
  return frame.type === "send" || frame.type === "edit" || frame.type === "regenerate";
}

function turnRequest(frame: TurnFrame, subject: string, meta: RequestMeta | undefined) {
  const via = meta !== undefined ? { meta } : {};
  const request: TurnRequest =
    frame.type === "send"
      ? sendRequest(subject, frame, meta)
      : frame.type === "edit"
        ? {
            kind: "edit",
            subject,
            entryId: frame.entryId,
            clientMessageId: frame.clientMessageId,
            text: frame.text,
            ...via,
          }
        : { kind: "regenerate", subject, entryId: frame.entryId, ...via };
  return request;
}

/**
 * A turn frame: stored and started once the tenant's quota admits it, or answered with why not. `meta` is the
 * socket's upgrade request: the turns it starts are logged under that request's id.
 */
export async function dispatchTurn(
  runtime: ThreadRuntime,
  frame: TurnFrame,
  subject: string,
  meta?: RequestMeta,
): Promise<FrameOutcome> {
  const accepted = await runtime.submit(turnRequest(frame, subject, meta));
  if (!accepted.ok) {
    // Over the thread's send rate, or a tenant the operator disabled: the socket closes.
    if (accepted.code === "rate_limited" || accepted.code === "forbidden") {
      return { frames: [], close: { code: closeCode(accepted.code), reason: accepted.code } };
    }
    return { frames: [errorFrame(accepted)] };
  }
  if (!accepted.value.created) return { frames: retriedFrames(runtime, accepted.value) };
  // The new user entry already reached this socket with every other; a held send (handoff) starts no run.
  return { frames: [] };
}

/** The visitor's accept of an offered upgrade: the new entry reaches every socket; a refusal answers this one. */
export type UpgradeFrame = Extract<ClientFrame, { type: "upgrade" }>;

export async function dispatchUpgrade(runtime: ThreadRuntime, frame: UpgradeFrame): Promise<FrameOutcome> {
  const upgraded = await runtime.upgrade(frame.version, "visitor");
  return { frames: upgraded.ok ? [] : [errorFrame(upgraded)] };
}

/** Synchronous, so catch-up and becoming ready happen with no stream frame in between. */
export function dispatchFrame(
  runtime: ThreadRuntime,
  frame: Exclude<ClientFrame, TurnFrame | UpgradeFrame | RefreshFrame>,
  subject: string,
): FrameOutcome {
  switch (frame.type) {
    case "hello":
      return { frames: helloFrames(runtime, frame.resume), ready: true };
    case "ping":
      return { frames: [{ type: "pong" }] };
    case "approval": {
      const decided = runtime.decide({
        approvalId: frame.approvalId,
        decision: frame.decision,
        ...(frame.reason !== undefined ? { reason: frame.reason } : {}),
        by: "user",
      });
      return { frames: decided.ok ? [] : [errorFrame(decided)] };
    }
    case "tool_result": {
      const answered = runtime.answerTool(frame);
      if (!answered.ok) return { frames: [errorFrame(answered)] };
      if (answered.value.status === "refused") {
        const issues = answered.value.issues.map((i) => `${i.path}: ${i.message}`).join("; ");
        return {
          frames: [
            { type: "error", code: "bad_request", message: `The tool's answer was refused: ${issues}` },
          ],
        };
      }
      return { frames: [] };
    }
    case "cancel": {
      const cancelled = cancelRun(runtime, frame.runId);
      return { frames: cancelled.ok ? [] : [errorFrame(cancelled)] };
    }
    case "feedback": {
      const given = runtime.giveFeedback(subject, {
        entryId: frame.entryId,
        rating: frame.rating,
        ...(frame.comment !== undefined ? { comment: frame.comment } : {}),
      });
      if (given.ok) return { frames: [] };
      if (given.code === "rate_limited") {
        return { frames: [], close: { code: closeCode(given.code), reason: given.code } };
      }
      return { frames: [errorFrame(given)] };
    }
    case "history": {
      const page = entriesPage(runtime, {
        ...(frame.leafId !== undefined ? { leafId: frame.leafId } : {}),
        ...(frame.cursor !== undefined ? { cursor: frame.cursor } : {}),
        ...(frame.limit !== undefined ? { limit: frame.limit } : {}),
      });
      return { frames: [page.ok ? { type: "history", ...page.value } : errorFrame(page)] };
    }
  }
}
