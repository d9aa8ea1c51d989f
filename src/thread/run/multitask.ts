// Double-texting (docs/protocol.md): which strategy a turn that arrives during a run follows, and how a queued turn is kept.
import type { Artifact } from "../../control/artifact";
import type { MultitaskStrategy, ServerFrame } from "../../shared/protocol";
import type { QueuedTurn, QueuedTurnRecord } from "../../storage/thread/queued-turn-store";
import { readRequestMeta } from "../contract";
import type { TurnRequest } from "./place-user-turn";

/** The send's own strategy, else the artifact's, else `reject`. */
export function multitaskStrategy(request: TurnRequest, artifact: Artifact): MultitaskStrategy {
  return request.multitask ?? artifact.conversation?.multitask ?? "reject";
}

/** A run waiting behind another: `position` 1 runs next. */
export function queuedFrame(runId: string, position: number): ServerFrame {
  return { type: "run", runId, status: "queued", position };
}

/** What is kept of a request while it waits: the turn itself, who asked and through which Worker request. */
export function queuedTurnOf(request: TurnRequest): Pick<QueuedTurnRecord, "turn" | "subject" | "meta"> {
  let turn: QueuedTurn;
  switch (request.kind) {
    case "send":
      turn = {
        kind: "send",
        clientMessageId: request.clientMessageId,
        text: request.text,
        ...(request.parentId !== undefined ? { parentId: request.parentId } : {}),
        ...(request.attachments !== undefined && request.attachments.length > 0
          ? { attachments: request.attachments }
          : {}),
      };
      break;
    case "edit":
      turn = {
        kind: "edit",
        entryId: request.entryId,
        clientMessageId: request.clientMessageId,
        text: request.text,
      };
      break;
    case "regenerate":
      turn = { kind: "regenerate", entryId: request.entryId };
      break;
  }
  return { turn, subject: request.subject, ...(request.meta !== undefined ? { meta: request.meta } : {}) };
}

/** The request a queued turn came from, to place and start it when its turn comes. */
export function requestOfQueued(record: QueuedTurnRecord): TurnRequest {
  const meta = readRequestMeta(record.meta);
  return { ...record.turn, subject: record.subject, ...(meta !== undefined ? { meta } : {}) };
}
