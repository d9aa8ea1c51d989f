// Where a send, an edit or a regenerate puts its user message, checked before anything is stored.
import { fail, ok, type Result } from "../../errors";
import type { AttachmentRef, MultitaskStrategy } from "../../shared/protocol";
import type { Entry, EntryStore } from "../../storage/thread/entry-store";
import type { RequestMeta } from "../contract";
import { messageBody } from "./frames";

/**
 * A send's `parentId`: absent = the thread's leaf; null (only a queued rollback sets it) = a new root. A send names
 * its attachments by id (`attachmentIds`, as the client sent them); the thread resolves them to `attachments` before
 * anything else looks at the turn (docs/protocol.md#attachments).
 */
export type TurnRequest = (
  | {
      kind: "send";
      clientMessageId: string;
      text: string;
      parentId?: string | null;
      attachmentIds?: string[];
      attachments?: AttachmentRef[];
    }
  | { kind: "edit"; entryId: string; clientMessageId: string; text: string }
  | { kind: "regenerate"; entryId: string }
) & {
  /** Verified subject of the requester. */
  subject: string;
  /** The Worker request that carried the turn, when the Worker named it. */
  meta?: RequestMeta;
  /** A send's own double-texting strategy, over the artifact's `conversation.multitask`. */
  multitask?: MultitaskStrategy;
};

export interface UserTurnPlace {
  parentId: string | null;
  text: string;
  clientMessageId?: string;
  /** The message's attachments (an edit keeps the original's). */
  attachments?: AttachmentRef[];
  /** For `regenerate`: the user entry already exists and is answered again. */
  existingUser?: Entry;
  /** Placed below the newest entry with no entry marked selected (`EntryStore.selection`), read just now. */
  unmarked?: true;
}

/** Resolves where a user turn goes; for `regenerate` the user entry already exists. */
export function placeUserTurn(request: TurnRequest, entries: EntryStore): Result<UserTurnPlace> {
  switch (request.kind) {
    case "send": {
      const selection = request.parentId === undefined ? entries.selection() : null;
      const parentId = selection !== null ? (selection.leaf?.id ?? null) : (request.parentId ?? null);
      if (request.parentId != null && entries.get(request.parentId) === null) {
        return fail("not_found", "The entry to reply below does not exist in this thread.");
      }
      return ok({
        parentId,
        text: request.text,
        clientMessageId: request.clientMessageId,
        ...(request.attachments !== undefined && request.attachments.length > 0
          ? { attachments: request.attachments }
          : {}),
        ...(selection !== null && !selection.marked ? { unmarked: true as const } : {}),
      });
    }
    case "edit": {
      const original = entries.get(request.entryId);
      if (original === null || original.role !== "user") {
        return fail("not_found", "Only a user message of this thread can be edited.");
      }
      // An edit changes the words: the files sent with the original go with the edit (docs/protocol.md#attachments).
      return ok({
        parentId: original.parentId,
        text: request.text,
        clientMessageId: request.clientMessageId,
        ...(original.attachments !== undefined ? { attachments: original.attachments } : {}),
      });
    }
    case "regenerate": {
      const target = entries.get(request.entryId);
      if (target === null || (target.role !== "assistant" && target.role !== "user")) {
        return fail("not_found", "Only a message of this thread can be regenerated.");
      }
      const user = target.role === "user" ? target : target.parentId ? entries.get(target.parentId) : null;
      if (user === null || user.role !== "user") return fail("not_found", "That reply has no user message.");
      return ok({ parentId: user.parentId, text: messageBody(user).text, existingUser: user });
    }
  }
}

/**
 * The user entry of a placed turn (the one a regenerate answers again), inside the caller's transaction; a fork (an
 * edit) becomes the selected leaf.
 */
export function storeUserEntry(entries: EntryStore, place: UserTurnPlace): Result<Entry> {
  const { parentId, text, clientMessageId, attachments, existingUser, unmarked } = place;
  if (existingUser !== undefined) return ok(existingUser);
  const appended = entries.append({
    parentId,
    ...(parentId !== null ? { expectedParentId: parentId } : {}),
    kind: "message",
    role: "user",
    // A retried send or edit is answered from its run's idempotency key, so the entry needs none.
    body: { text, ...(clientMessageId !== undefined ? { clientMessageId } : {}) },
    ...(attachments !== undefined ? { attachments } : {}),
    // The thread continues below it (a fork, an edit, selects itself too); it must be stored in the same synchronous
    // stretch as the place was read for `unmarked` to hold.
    select: true,
    ...(unmarked === true ? { unmarked } : {}),
  });
  if (!appended.ok) return appended;
  return ok(appended.value.entry);
}
