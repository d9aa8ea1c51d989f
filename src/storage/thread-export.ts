// One thread as plain JSON, read from the object's own storage (the source of truth), for `GET …/export`.
import { z } from "zod";
import { environmentSchema } from "../shared/api";
import { ERROR_CODES } from "../shared/errors";
import { RUN_STATUSES } from "../shared/protocol";
import { ENTRY_KINDS, ENTRY_ROLES, EntryStore } from "./entry-store";
import type { ThreadBinding } from "./pin-store";
import { RunStore } from "./run-store";
import { TOOL_CALL_STATUSES, ToolCallStore } from "./tool-call-store";
import { UsageStore } from "./usage-store";

const THREAD_EXPORT_FORMAT = "agent-threads.thread-export.v1";

const isoTime = z.iso.datetime();
const tokens = z.number().int().min(0);

const usageTotalsSchema = z.strictObject({ turns: tokens, inputTokens: tokens, outputTokens: tokens });

export const threadExportSchema = z.strictObject({
  format: z.literal(THREAD_EXPORT_FORMAT),
  threadId: z.string(),
  tenantId: z.string(),
  environment: environmentSchema,
  agent: z.strictObject({
    id: z.string(),
    name: z.string(),
    versionId: z.string(),
    version: z.number().int().positive(),
    digest: z.string(),
  }),
  boundAt: isoTime,
  activeLeafId: z.string().nullable(),
  entries: z.array(
    z.strictObject({
      seq: z.number().int(),
      id: z.string(),
      parentId: z.string().nullable(),
      kind: z.enum(ENTRY_KINDS),
      role: z.enum(ENTRY_ROLES).nullable(),
      runId: z.string().nullable(),
      body: z.json(),
      createdAt: isoTime,
    }),
  ),
  runs: z.array(
    z.strictObject({
      id: z.string(),
      status: z.enum(RUN_STATUSES),
      userEntryId: z.string().nullable(),
      assistantEntryId: z.string().nullable(),
      parentEntryId: z.string().nullable(),
      versionId: z.string().nullable(),
      createdAt: isoTime,
      startedAt: isoTime.nullable(),
      endedAt: isoTime.nullable(),
      abortReason: z.string().nullable(),
      error: z.strictObject({ code: z.enum(ERROR_CODES), message: z.string() }).nullable(),
    }),
  ),
  toolCalls: z.array(
    z.strictObject({
      id: z.string(),
      runId: z.string(),
      name: z.string(),
      input: z.json(),
      output: z.json().nullable(),
      status: z.enum(TOOL_CALL_STATUSES),
      createdAt: isoTime,
      endedAt: isoTime.nullable(),
    }),
  ),
  usage: z.strictObject({
    turns: z.array(
      z.strictObject({
        runId: z.string(),
        turn: z.number().int().min(0),
        provider: z.string(),
        model: z.string(),
        inputTokens: tokens,
        outputTokens: tokens,
        createdAt: isoTime,
      }),
    ),
    byRun: z.array(z.strictObject({ runId: z.string(), ...usageTotalsSchema.shape })),
    totals: usageTotalsSchema,
  }),
});

export type ThreadExport = z.infer<typeof threadExportSchema>;

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

/** The whole tree (every branch), runs, tool calls, usage per turn, per run and in total, and the pin. */
export function exportThread(storage: DurableObjectStorage, binding: ThreadBinding): ThreadExport {
  const now = () => Date.now();
  const entries = new EntryStore(storage, { now });
  const runs = new RunStore(storage, { now });
  const calls = new ToolCallStore(storage, { now });
  const usage = new UsageStore(storage, { now });

  const allEntries: ThreadExport["entries"] = [];
  for (let after = 0; ; ) {
    const page = entries.all({ afterSeq: after, limit: 1000 });
    for (const e of page) {
      allEntries.push({
        seq: e.seq,
        id: e.id,
        parentId: e.parentId,
        kind: e.kind,
        role: e.role,
        runId: e.runId,
        body: e.body,
        createdAt: iso(e.createdAt),
      });
    }
    const last = page[page.length - 1];
    if (last === undefined) break;
    after = last.seq;
  }

  const allRuns: ThreadExport["runs"] = [];
  const toolCalls: ThreadExport["toolCalls"] = [];
  for (const row of storage.sql.exec("SELECT id FROM runs ORDER BY created_at, rowid").toArray()) {
    const run = runs.get(String(row.id));
    if (run === null) continue;
    allRuns.push({
      id: run.id,
      status: run.status,
      userEntryId: run.userEntryId,
      assistantEntryId: run.assistantEntryId,
      parentEntryId: run.parentEntryId,
      versionId: run.versionId,
      createdAt: iso(run.createdAt),
      startedAt: isoOrNull(run.startedAt),
      endedAt: isoOrNull(run.endedAt),
      abortReason: run.abortReason,
      error: run.error,
    });
    for (const call of calls.forRun(run.id)) {
      toolCalls.push({
        id: call.id,
        runId: call.runId,
        name: call.name,
        input: call.input,
        output: call.output,
        status: call.status,
        createdAt: iso(call.createdAt),
        endedAt: isoOrNull(call.endedAt),
      });
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

  return threadExportSchema.parse({
    format: THREAD_EXPORT_FORMAT,
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
    runs: allRuns,
    toolCalls,
    usage: { turns, byRun: [...byRun.values()], totals },
  });
}
