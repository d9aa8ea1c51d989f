// The prompt history of a branch: its newest end, read back newest first only as far as the context budget reaches.
import { type BranchMessage, messageTokens } from "../../models/prompt";
import type { Entry, EntryStore } from "../../storage/thread/entry-store";
import type { Run } from "../../storage/thread/run-store";
import { messageBody } from "./frames";
import { assistantMessages, storedToolCalls } from "./tool-history";

/** Entries read per step of a branch read back from its leaf. */
const READ_STEP = 200;

/**
 * The shortest newest end of `messages` that costs more than `budget` tokens (all of them when they fit), widened
 * so that it never opens with a tool result whose call it left out.
 */
function newestWithin(messages: BranchMessage[], budget: number): BranchMessage[] {
  let used = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message !== undefined) used += messageTokens(message);
    if (used > budget) {
      let start = i;
      while (start > 0 && messages[start]?.role === "tool") start--;
      return messages.slice(start);
    }
  }
  return messages;
}

/** A user entry as a prompt message: its text and, when it has any, its attachments (their bytes read later). */
function userMessage(entry: Entry): BranchMessage {
  const text = messageBody(entry).text;
  return entry.attachments === undefined
    ? { role: "user", text }
    : { role: "user", text, attachments: entry.attachments.map((a) => ({ ...a })) };
}

/**
 * A stored entry as prompt messages, oldest first: a user message, or an assistant reply with the tool calls and
 * results its run recorded on it; none for entries a prompt leaves out.
 */
function asMessages(entry: Entry | null): BranchMessage[] {
  if (entry === null || entry.kind !== "message") return [];
  const body = messageBody(entry);
  if (entry.role === "user") return [userMessage(entry)];
  if (entry.role === "assistant") return assistantMessages(body.text, storedToolCalls(entry.body));
  // A person's replies during a handoff read as the agent's own turns, so the model carries on where they left off.
  if (entry.role === "human_agent" && body.text.length > 0) return [{ role: "assistant", text: body.text }];
  return [];
}

/**
 * The prompt messages of the branch ending at a turn's user message, oldest first, holding at least what
 * `buildPrompt` keeps under `maxContextTokens` and never much more: the branch is read from its leaf, newest first,
 * and reading stops at the first message past the budget, so a long thread costs a prompt what its budget allows,
 * not what it holds. The last turn's history is kept (cut to the same budget) so the next turn below it appends
 * its user message instead of reading back; entries never change, so only retention (which deletes and re-roots
 * them) invalidates it.
 */
export class PromptHistory {
  readonly #entries: EntryStore;
  /** The budget of a caller that names none (the pinned version's). */
  readonly #maxContextTokens: number;
  #known: { leafId: string; budget: number; messages: BranchMessage[] } | null = null;

  constructor(entries: EntryStore, maxContextTokens: number) {
    this.#entries = entries;
    this.#maxContextTokens = maxContextTokens;
  }

  /** Drops what is remembered (retention changed the tree). */
  forget(): void {
    this.#known = null;
  }

  /**
   * The prompt history ending at `userEntry` under the turn's budget (its version's): the remembered one plus this
   * message, or the branch read back.
   */
  historyFor(userEntry: Entry, maxContextTokens = this.#maxContextTokens): BranchMessage[] {
    const known = this.#known;
    if (known !== null && userEntry.parentId === known.leafId && known.budget === maxContextTokens) {
      return [...known.messages, userMessage(userEntry)];
    }
    return this.#readBack(userEntry.id, maxContextTokens);
  }

  /** Keeps the prompt history of the branch a turn ended on, reply included, for the next turn below it. */
  remember(
    history: BranchMessage[],
    userEntry: Entry,
    sealed: Run,
    maxContextTokens = this.#maxContextTokens,
    stored: Entry | null = null,
  ): void {
    // The seal hands over the reply it stored; only another one is read back.
    const reply =
      sealed.assistantEntryId === null
        ? null
        : stored?.id === sealed.assistantEntryId
          ? stored
          : this.#entries.get(sealed.assistantEntryId);
    const messages = [...history, ...asMessages(reply)];
    this.#known = {
      leafId: reply?.id ?? userEntry.id,
      budget: maxContextTokens,
      messages: newestWithin(messages, maxContextTokens),
    };
  }

  #readBack(leafId: string, maxContextTokens: number): BranchMessage[] {
    const newestFirst: BranchMessage[] = [];
    let used = 0;
    for (let from: string | null = leafId; from !== null; ) {
      const entries = this.#entries.lineage(from, READ_STEP);
      for (const entry of entries) {
        // An entry's messages are taken whole, so a tool call is never read without its result.
        const messages = asMessages(entry);
        for (let i = messages.length - 1; i >= 0; i--) {
          const message = messages[i];
          if (message === undefined) continue;
          newestFirst.push(message);
          used += messageTokens(message);
        }
        if (used > maxContextTokens) return newestFirst.reverse();
      }
      const oldest = entries[entries.length - 1];
      from = entries.length < READ_STEP || oldest === undefined ? null : oldest.parentId;
    }
    return newestFirst.reverse();
  }
}
