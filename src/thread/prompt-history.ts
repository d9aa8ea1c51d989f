// The prompt history remembered from the last turn, so the next turn below it need not read the branch back.
import type { BranchMessage } from "../models/prompt";
import type { Entry, EntryStore } from "../storage/entry-store";
import type { Run } from "../storage/run-store";
import { messageBody } from "./frames";

/**
 * The prompt messages of the branch ending at `leafId`, kept from the last turn: the next turn below that leaf
 * appends its user message instead of reading the whole branch back. Entries never change, so only retention
 * (which deletes and re-roots them) invalidates it.
 */
export class PromptHistory {
  readonly #entries: EntryStore;
  #known: { leafId: string; messages: BranchMessage[] } | null = null;

  constructor(entries: EntryStore) {
    this.#entries = entries;
  }

  /** Drops what is remembered (retention changed the tree). */
  forget(): void {
    this.#known = null;
  }

  /** The prompt history ending at `userEntry`: the remembered one plus this message, or the branch read back. */
  historyFor(userEntry: Entry): BranchMessage[] {
    const known = this.#known;
    if (known !== null && userEntry.parentId === known.leafId) {
      return [...known.messages, { role: "user", text: messageBody(userEntry).text }];
    }
    return this.#branchMessages(userEntry.id);
  }

  /** Keeps the prompt history of the branch a turn ended on, reply included, for the next turn below it. */
  remember(history: BranchMessage[], userEntry: Entry, sealed: Run): void {
    const reply = sealed.assistantEntryId === null ? null : this.#entries.get(sealed.assistantEntryId);
    const replyText = reply === null ? "" : messageBody(reply).text;
    this.#known =
      reply === null
        ? { leafId: userEntry.id, messages: history }
        : {
            leafId: reply.id,
            messages: replyText.length > 0 ? [...history, { role: "assistant", text: replyText }] : history,
          };
  }

  #branchMessages(leafId: string): BranchMessage[] {
    const messages: BranchMessage[] = [];
    let cursor: string | undefined;
    do {
      const page = this.#entries.branch(leafId, { limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
      if (!page.ok) break;
      for (const entry of page.value.items) {
        if (entry.kind !== "message") continue;
        const body = messageBody(entry);
        if (entry.role === "user") messages.push({ role: "user", text: body.text });
        else if (entry.role === "assistant" && body.text.length > 0)
          messages.push({ role: "assistant", text: body.text });
      }
      cursor = page.value.nextCursor;
    } while (cursor !== undefined);
    return messages;
  }
}
