// The export is streamed from the thread object page by page: any size, the same bytes as the whole document.
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { insertAttachment } from "../../src/storage/thread/attachment-store";
import { EntryStore } from "../../src/storage/thread/entry-store";
import { readPin } from "../../src/storage/thread/pin-store";
import { RunStore } from "../../src/storage/thread/run-store";
import { exportThreadStream, threadExportSchema } from "../../src/storage/thread/thread-export";
import { ToolCallStore } from "../../src/storage/thread/tool-call-store";
import { UsageStore } from "../../src/storage/thread/usage-store";
import { converse, launchFor, threadStub } from "../helpers/projection";
import { api } from "../helpers/tenants";
import { liveAgent } from "../helpers/threads";

const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

/** The export as it was built before it streamed: the whole document in memory, parsed, then serialised. */
function wholeDocument(
  storage: DurableObjectStorage,
  binding: Awaited<ReturnType<typeof bindingOf>>,
): string {
  const now = () => Date.now();
  const entries = new EntryStore(storage, { now });
  const runs = new RunStore(storage, { now });
  const calls = new ToolCallStore(storage, { now });
  const usage = new UsageStore(storage, { now });
  const allEntries = entries.all({ limit: 1000 }).map(({ agentVersion, createdAt, ...e }) => ({
    ...e,
    version: agentVersion ?? binding.version,
    createdAt: iso(createdAt),
  }));
  const allRuns: unknown[] = [];
  const toolCalls: unknown[] = [];
  for (const row of storage.sql.exec("SELECT id FROM runs ORDER BY created_at, seq").toArray()) {
    const run = runs.get(String(row.id));
    if (run === null) continue;
    allRuns.push({
      ...run,
      createdAt: iso(run.createdAt),
      startedAt: isoOrNull(run.startedAt),
      endedAt: isoOrNull(run.endedAt),
    });
    for (const call of calls.forRun(run.id)) {
      toolCalls.push({ ...call, createdAt: iso(call.createdAt), endedAt: isoOrNull(call.endedAt) });
    }
  }
  const turns = usage.records().map((u) => ({ ...u, createdAt: iso(u.createdAt) }));
  const byRun = new Map<
    string,
    { runId: string; turns: number; inputTokens: number; outputTokens: number }
  >();
  for (const t of turns) {
    const sum = byRun.get(t.runId) ?? { runId: t.runId, turns: 0, inputTokens: 0, outputTokens: 0 };
    sum.turns += 1;
    sum.inputTokens += t.inputTokens;
    sum.outputTokens += t.outputTokens;
    byRun.set(t.runId, sum);
  }
  const totals = { turns: 0, inputTokens: 0, outputTokens: 0 };
  for (const sum of byRun.values()) {
    totals.turns += sum.turns;
    totals.inputTokens += sum.inputTokens;
    totals.outputTokens += sum.outputTokens;
  }
  const strip = <T extends Record<string, unknown>>(items: T[], keys: string[]) =>
    items.map((item) => Object.fromEntries(Object.entries(item).filter(([k]) => !keys.includes(k))));
  return JSON.stringify(
    threadExportSchema.parse({
      format: "agent-threads.thread-export.v1",
      threadId: binding.threadId,
      tenantId: binding.tenantId,
      environment: binding.environment,
      agent: {
        id: binding.agentId,
        name: binding.artifact.name,
        versionId: binding.versionId,
        version: binding.version,
        digest: binding.digest,
      },
      boundAt: iso(binding.boundAt),
      activeLeafId: entries.latestLeaf()?.id ?? null,
      entries: allEntries,
      runs: strip(allRuns as Record<string, unknown>[], ["idempotencyKey", "revision", "firstDeltaMs"]),
      toolCalls: strip(toolCalls as Record<string, unknown>[], ["revision"]),
      usage: { turns, byRun: [...byRun.values()], totals },
      feedback: storage.sql
        .exec(
          "SELECT entry_id, rating, comment, subject, created_at, updated_at FROM feedback ORDER BY entry_id",
        )
        .toArray()
        .map((r) => ({
          entryId: r.entry_id,
          rating: r.rating,
          comment: r.comment,
          subject: r.subject,
          createdAt: iso(Number(r.created_at)),
          updatedAt: iso(Number(r.updated_at)),
        })),
      attachments: storage.sql
        .exec(
          "SELECT id, sha256, media_type, size, name, created_at FROM attachments ORDER BY created_at, id",
        )
        .toArray()
        .map((r) => ({
          id: r.id,
          sha256: r.sha256,
          mediaType: r.media_type,
          size: r.size,
          name: r.name,
          createdAt: iso(Number(r.created_at)),
          download: `/v1/sessions/${binding.threadId}/attachments/${r.id}`,
        })),
    }),
  );
}

async function bindingOf(storage: DurableObjectStorage) {
  const pin = await readPin(storage);
  if (!pin.ok || pin.binding === null) throw new Error("thread not bound");
  return pin.binding;
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<{ text: string; chunks: number[] }> {
  const decoder = new TextDecoder();
  const chunks: number[] = [];
  let text = "";
  for await (const chunk of stream) {
    chunks.push(chunk.byteLength);
    text += decoder.decode(chunk, { stream: true });
  }
  return { text: text + decoder.decode(), chunks };
}

describe("GET /v1/sessions/:threadId/export, streamed", () => {
  it("exports a thread larger than one RPC message (32 MiB) instead of failing with 502", {
    timeout: 120_000,
  }, async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const session = await launchFor(agent, "user-1");
    await converse(session, ["first"]);
    const stub = await threadStub(agent, session.threadId);
    await runInDurableObject(stub, (_i, state) => {
      const store = new EntryStore(state.storage, { now: () => Date.now() });
      let parent = store.latestLeaf()?.id ?? null;
      const text = "x".repeat(60_000);
      state.storage.transactionSync(() => {
        for (let i = 0; i < 600; i++) {
          const appended = store.append({ parentId: parent, kind: "custom", body: { text } });
          if (!appended.ok) throw new Error(appended.message);
          parent = appended.value.entry.id;
        }
      });
    });

    const res = await api(`/v1/sessions/${session.threadId}/export`, { key: agent.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/json");
    const { text, chunks } = await readAll(res.body ?? new ReadableStream());
    expect(text.length).toBeGreaterThan(32 * 1024 * 1024);
    expect(chunks.length).toBeGreaterThan(1);
    const exported = threadExportSchema.parse(JSON.parse(text));
    expect(exported.entries).toHaveLength(602);
    expect(exported.threadId).toBe(session.threadId);
  });

  it("writes the same bytes as the whole document, a page per chunk", { timeout: 60_000 }, async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const session = await launchFor(agent, "user-1");
    await converse(session, ["first", "second"]);
    const stub = await threadStub(agent, session.threadId);
    const result = await runInDurableObject(stub, async (_i, state) => {
      // Enough of every section for several pages, with equal timestamps so ties must be ordered as before.
      const clock = { at: Date.UTC(2026, 0, 1) };
      const now = () => Math.floor(clock.at++ / 3);
      const entries = new EntryStore(state.storage, { now });
      const runs = new RunStore(state.storage, { now });
      const calls = new ToolCallStore(state.storage, { now });
      const usage = new UsageStore(state.storage, { now });
      state.storage.transactionSync(() => {
        let parent = entries.latestLeaf()?.id ?? null;
        for (let i = 0; i < 450; i++) {
          const appended = entries.append({
            parentId: parent,
            kind: "custom",
            body: { n: i, nested: [i, "ü"] },
          });
          if (!appended.ok) throw new Error(appended.message);
          parent = i % 7 === 0 ? parent : appended.value.entry.id;
        }
        for (let a = 0; a < 420; a++) {
          // Ids in the attachment alphabet, a digit spelled as a letter.
          const id = `att_${Array.from(String(a).padStart(26, "0"), (d) => "abcdefghij"[Number(d)]).join("")}`;
          const sha256 = (a % 5).toString(16).repeat(64);
          insertAttachment(
            state.storage,
            { id, sha256, mediaType: "text/plain", size: a, name: `f${a}.txt` },
            now(),
          );
        }
        for (let r = 0; r < 230; r++) {
          const created = runs.create({});
          if (!created.ok) throw new Error(created.message);
          const runId = created.value.run.id;
          if (r % 3 === 0) calls.record({ runId, name: "lookup", input: { r } });
          for (let turn = 0; turn < r % 4; turn++) {
            usage.record(runId, turn, {
              provider: "local",
              model: "echo",
              inputTokens: r,
              outputTokens: turn,
            });
          }
        }
      });
      const binding = await bindingOf(state.storage);
      const streamed = await readAll(exportThreadStream(state.storage, binding));
      return { ...streamed, whole: wholeDocument(state.storage, binding) };
    });
    expect(result.text).toBe(result.whole);
    expect(result.chunks.length).toBeGreaterThan(8);
    // No chunk holds more than one page of a section (200 rows of at most a few hundred bytes here).
    expect(Math.max(...result.chunks)).toBeLessThan(64 * 1024);
  });
});
