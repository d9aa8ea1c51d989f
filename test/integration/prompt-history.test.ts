// Building a prompt from a long thread reads the newest end of the branch only, and keeps only that in memory.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type BranchMessage, buildPrompt } from "../../src/models/prompt";
import { type Entry, EntryStore } from "../../src/storage/thread/entry-store";
import type { Run } from "../../src/storage/thread/run-store";
import { migrateThreadSchema } from "../../src/storage/thread/thread-schema";
import { PromptHistory } from "../../src/thread/run/prompt-history";
import { rowsReadBy } from "../helpers/rows-read";

const BUDGET = 256;
const INSTRUCTIONS = "Answer briefly.";

/** Every message of the branch ending at `leafId`, oldest first, read page by page the long way. */
function wholeBranch(store: EntryStore, leafId: string): BranchMessage[] {
  const out: BranchMessage[] = [];
  let cursor: string | undefined;
  do {
    const page = store.branch(leafId, { limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
    if (!page.ok) throw new Error(page.message);
    for (const entry of page.value.items) {
      const text = String((entry.body as { text: string }).text);
      if (entry.role === "user") out.push({ role: "user", text });
      else if (entry.role === "assistant") out.push({ role: "assistant", text });
    }
    cursor = page.value.nextCursor;
  } while (cursor !== undefined);
  return out;
}

describe("prompt history on a long branch", () => {
  it("reads only the newest end of a 3,000-message branch and builds the same prompt as the whole branch", {
    timeout: 60_000,
  }, async () => {
    const stub = env.THREAD.get(env.THREAD.idFromName(`prompt-history-${crypto.randomUUID()}`));
    const result = await runInDurableObject(stub, (_i, state) => {
      migrateThreadSchema(state.storage);
      const store = new EntryStore(state.storage, { now: () => 1 });
      const written: Entry[] = [];
      state.storage.transactionSync(() => {
        for (let i = 0; i < 3000; i++) {
          const role = i % 2 === 0 ? "user" : "assistant";
          const appended = store.append({
            parentId: written.at(-1)?.id ?? null,
            kind: "message",
            role,
            body: { text: `${role} message number ${i} `.padEnd(40, ".") },
          });
          if (!appended.ok) throw new Error(appended.message);
          written.push(appended.value.entry);
        }
      });
      const question = store.append({
        parentId: written.at(-1)?.id ?? null,
        kind: "message",
        role: "user",
        body: { text: "and the latest question?" },
      });
      if (!question.ok) throw new Error(question.message);
      const userEntry = question.value.entry;

      const history = new PromptHistory(store, BUDGET);
      const read = rowsReadBy(state.storage, () => history.historyFor(userEntry));
      const full = wholeBranch(store, userEntry.id);

      // The turn's reply, remembered for the next turn: what stays in memory is cut to the budget too.
      const reply = store.append({
        parentId: userEntry.id,
        kind: "message",
        role: "assistant",
        body: { text: "the answer" },
      });
      if (!reply.ok) throw new Error(reply.message);
      history.remember(read.value, userEntry, { assistantEntryId: reply.value.entry.id } as Run);
      const next = store.append({
        parentId: reply.value.entry.id,
        kind: "message",
        role: "user",
        body: { text: "one more" },
      });
      if (!next.ok) throw new Error(next.message);
      const remembered = rowsReadBy(state.storage, () => history.historyFor(next.value.entry));
      return {
        rows: read.rows,
        messages: read.value.length,
        prompt: buildPrompt({ instructions: INSTRUCTIONS, branch: read.value, maxContextTokens: BUDGET }),
        fullPrompt: buildPrompt({ instructions: INSTRUCTIONS, branch: full, maxContextTokens: BUDGET }),
        fullLength: full.length,
        rememberedMessages: remembered.value.length,
        rememberedRows: remembered.rows,
        nextPrompt: buildPrompt({
          instructions: INSTRUCTIONS,
          branch: remembered.value,
          maxContextTokens: BUDGET,
        }),
        nextFullPrompt: buildPrompt({
          instructions: INSTRUCTIONS,
          branch: wholeBranch(store, next.value.entry.id),
          maxContextTokens: BUDGET,
        }),
      };
    });
    expect(result.fullLength).toBe(3001);
    // Each message costs 10 tokens: a 256-token budget needs about 26 of them, and the read stops there.
    expect(result.messages).toBeLessThan(40);
    expect(result.rows).toBeLessThan(1500);
    expect(result.prompt).toEqual(result.fullPrompt);
    expect(result.rememberedMessages).toBeLessThan(40);
    expect(result.rememberedRows).toBeLessThan(10);
    expect(result.nextPrompt).toEqual(result.nextFullPrompt);
  });
});
