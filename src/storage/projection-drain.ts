// Drains the thread's outbox into D1 in one batch of version-guarded upserts, with backoff when D1 is unavailable.
import { z } from "zod";
import {
  type MessageRow,
  mirrorRetention,
  type RunRow,
  readWatermark,
  type SessionSnapshot,
  type ThreadScope,
  type ToolCallRow,
  upsertMessage,
  upsertRun,
  upsertSession,
  upsertToolCall,
  upsertUsage,
} from "./d1/projection-writer";
import { type Entry, EntryStore } from "./entry-store";
import { enqueueOutbox, projectedEntrySeq, setProjectedEntrySeq } from "./outbox";
import type { ThreadBinding } from "./pin-store";
import { type Run, RunStore } from "./run-store";
import { pendingRetention, type RetentionMark, retentionProjected } from "./thread-retention";
import { type ToolCall, ToolCallStore } from "./tool-call-store";
import { type UsageRecord, UsageStore } from "./usage-store";

export interface DrainInput {
  storage: DurableObjectStorage;
  db: D1Database;
  binding: ThreadBinding;
  now: () => number;
  /** Entries, and outbox rows, per D1 batch (default 100 each). */
  batchSize?: number;
}

export interface DrainOutcome {
  /** Changes projected by this call: entries above the watermark and outbox rows. */
  drained: number;
  /** Changes left: entries above the watermark and outbox rows, due or not. */
  remaining: number;
  /** True when D1 refused the batch; nothing was lost and the rows wait for `retryInMs`. */
  failed: boolean;
  /** When to drain again: after a failure the backoff; after a success with rows left, when the next one is due. */
  retryInMs?: number;
}

export const DEFAULT_DRAIN_BATCH = 100;
export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_CAP_MS = 5 * 60_000;
export const TITLE_MAX_CHARS = 80;
const DAY_MS = 86_400_000;

/** A D1 call that has not answered by then counts as failed (the batch is idempotent if it lands later). */
export const D1_TIMEOUT_MS = 30_000;
const VERSION_KEY = "projection_version";
const FAILURES_KEY = "projection_failures";

/** Exponential backoff with jitter: attempt n waits between half and all of min(cap, base·2^(n-1)). */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, Math.min(attempt, 30) - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * A session's title: its first user message on one line (line breaks and tabs become spaces, outer spaces go), cut
 * to 80 characters. The D1 retention job computes the same in SQL, so the two never disagree.
 */
export function titleFrom(text: string): string | null {
  const line = text.replace(/[\r\n\t]/g, " ").replace(/^ +| +$/g, "");
  if (line.length === 0) return null;
  const chars = Array.from(line);
  return chars.length <= TITLE_MAX_CHARS ? line : `${chars.slice(0, TITLE_MAX_CHARS - 1).join("")}…`;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));
const day = (ms: number): string => iso(ms).slice(0, 10);

const outboxRowSchema = z.object({
  seq: z.number().int(),
  kind: z.string(),
  ref_id: z.string(),
  version: z.number().int(),
  payload_json: z.string(),
  attempts: z.number().int(),
  next_attempt_at: z.number().nullable(),
});
type OutboxRow = z.infer<typeof outboxRowSchema>;

const usagePayloadSchema = z.object({
  runId: z.string(),
  turn: z.number().int().min(0),
  provider: z.string(),
  model: z.string(),
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  createdAt: z.number(),
});

const bodyFieldsSchema = z.object({
  text: z.string().optional(),
  status: z.enum(["complete", "interrupted", "failed"]).optional(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
  toolCalls: z.json().optional(),
});

const countSchema = z.object({ n: z.number().nullable() });

// One drain or reconciliation at a time per object: two overlapping drains would read the same rows, and a delete
// by seq after a concurrent delete could hit a reused seq.
const tails = new WeakMap<DurableObjectStorage, Promise<unknown>>();

function serialized<T>(storage: DurableObjectStorage, task: () => Promise<T>): Promise<T> {
  const previous = tails.get(storage) ?? Promise.resolve();
  const run = previous.then(task, task);
  tails.set(
    storage,
    run.catch(() => undefined),
  );
  return run;
}

/** Drains are serialized, so a D1 call that never settles must not hold up every later drain. */
async function withinTimeout<T>(work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`D1 did not answer within ${D1_TIMEOUT_MS} ms`)),
      D1_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

function readMetaNumber(storage: DurableObjectStorage, key: string): number {
  const row = storage.sql.exec("SELECT value FROM meta WHERE key = ?", key).toArray()[0];
  const value = Number(row?.value ?? 0);
  return Number.isSafeInteger(value) ? value : 0;
}

function writeMeta(storage: DurableObjectStorage, key: string, value: string | null): void {
  if (value === null) {
    storage.sql.exec("DELETE FROM meta WHERE key = ?", key);
    return;
  }
  storage.sql.exec(
    "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    key,
    value,
  );
}

function scalar(
  storage: DurableObjectStorage,
  query: string,
  ...bindings: (string | number)[]
): number | null {
  return countSchema.parse(storage.sql.exec(query, ...bindings).one()).n;
}

function messageRow(entry: Entry): MessageRow {
  const fields = bodyFieldsSchema.safeParse(entry.body);
  const f = fields.success ? fields.data : {};
  return {
    id: entry.id,
    seq: entry.seq,
    parentId: entry.parentId,
    runId: entry.runId,
    kind: entry.kind,
    role: entry.role,
    content: entry.kind === "message" && f.text !== undefined ? f.text : JSON.stringify(entry.body),
    status: f.status ?? null,
    toolCallId: f.toolCallId ?? null,
    toolName: f.toolName ?? null,
    toolCalls: f.toolCalls === undefined ? null : JSON.stringify(f.toolCalls),
    // Entries never change after append; a retention re-rooting is mirrored by its own statement.
    version: 1,
    createdAt: iso(entry.createdAt),
  };
}

function runRow(run: Run, agentId: string): RunRow {
  return {
    id: run.id,
    agentId,
    versionId: run.versionId,
    status: run.status,
    day: day(run.createdAt),
    userEntryId: run.userEntryId,
    assistantEntryId: run.assistantEntryId,
    abortReason: run.abortReason,
    errorCode: run.error?.code ?? null,
    errorMessage: run.error?.message ?? null,
    version: run.revision,
    createdAt: iso(run.createdAt),
    startedAt: isoOrNull(run.startedAt),
    endedAt: isoOrNull(run.endedAt),
  };
}

function toolCallRow(call: ToolCall): ToolCallRow {
  return {
    id: call.id,
    runId: call.runId,
    name: call.name,
    input: JSON.stringify(call.input),
    output: call.output === null ? null : JSON.stringify(call.output),
    status: call.status,
    version: call.revision,
    createdAt: iso(call.createdAt),
    endedAt: isoOrNull(call.endedAt),
  };
}

const sessionFactsSchema = z.object({
  message_count: z.number(),
  last_message_at: z.number().nullable(),
  last_entry_at: z.number().nullable(),
  last_run_at: z.number().nullable(),
  first_user_text: z.unknown(),
  last_run_id: z.string().nullable(),
  last_run_status: z.string().nullable(),
});

/** The session row as the thread sees it now, read in one statement. `projectedSeq` is computed by the caller. */
function sessionSnapshot(
  storage: DurableObjectStorage,
  binding: ThreadBinding,
  entries: EntryStore,
  version: number,
  projectedSeq: number,
): SessionSnapshot {
  const facts = sessionFactsSchema.parse(
    storage.sql
      .exec(
        `SELECT
           (SELECT COUNT(*) FROM entries WHERE kind = 'message') AS message_count,
           (SELECT MAX(created_at) FROM entries WHERE kind = 'message') AS last_message_at,
           (SELECT MAX(created_at) FROM entries) AS last_entry_at,
           (SELECT MAX(COALESCE(ended_at, started_at, created_at)) FROM runs) AS last_run_at,
           (SELECT json_extract(body_json, '$.text') FROM entries WHERE kind = 'message' AND role = 'user'
            ORDER BY seq LIMIT 1) AS first_user_text,
           last.id AS last_run_id,
           last.status AS last_run_status
         FROM (SELECT 1) LEFT JOIN (SELECT id, status FROM runs ORDER BY created_at DESC, rowid DESC LIMIT 1) last`,
      )
      .one(),
  );
  const retention = binding.artifact.limits?.retention;
  const hasRetention = retention?.maxAgeDays !== undefined || retention?.maxMessagesPerThread !== undefined;
  return {
    agentId: binding.agentId,
    agentName: binding.artifact.name,
    environment: binding.environment,
    agentVersion: binding.version,
    versionId: binding.versionId,
    artifactDigest: binding.digest,
    state: JSON.stringify({
      leafId: entries.latestLeaf()?.id ?? null,
      lastRun:
        facts.last_run_id === null ? null : { id: facts.last_run_id, status: String(facts.last_run_status) },
    }),
    title: typeof facts.first_user_text === "string" ? titleFrom(facts.first_user_text) : null,
    messageCount: facts.message_count,
    lastMessageAt: isoOrNull(facts.last_message_at),
    projectedSeq,
    retentionMaxAgeDays: retention?.maxAgeDays ?? null,
    retentionMaxMessages: retention?.maxMessagesPerThread ?? null,
    retentionDueAt: hasRetention ? iso(binding.boundAt + DAY_MS) : null,
    version,
    updatedAt: iso(Math.max(binding.boundAt, facts.last_entry_at ?? 0, facts.last_run_at ?? 0)),
  };
}

const backlogSchema = z.object({ rows: z.number(), entries: z.number(), due: z.number().nullable() });

/**
 * What is left after a drain, in one statement: outbox rows and entries above the watermark, and in how many
 * milliseconds to drain again (0 when something is due now; absent when nothing is left).
 */
function backlog(
  storage: DurableObjectStorage,
  entryWatermark: number,
  now: number,
): { remaining: number; retryInMs?: number } {
  const left = backlogSchema.parse(
    storage.sql
      .exec(
        `SELECT (SELECT COUNT(*) FROM outbox) AS rows,
                (SELECT COUNT(*) FROM entries WHERE seq > ?) AS entries,
                (SELECT MIN(COALESCE(next_attempt_at, 0)) FROM outbox) AS due`,
        entryWatermark,
      )
      .one(),
  );
  const remaining = left.rows + left.entries;
  if (remaining === 0) return { remaining };
  return { remaining, retryInMs: left.entries > 0 ? 0 : Math.max(0, (left.due ?? 0) - now) };
}

function logProjection(level: "warn" | "error", message: string, fields: Record<string, unknown>): void {
  console.log(JSON.stringify({ level, message, ...fields }));
}

function usageStatement(
  input: DrainInput,
  scope: ThreadScope,
  u: UsageRecord,
  version: number,
): D1PreparedStatement {
  return upsertUsage(input.db, scope, {
    runId: u.runId,
    turn: u.turn,
    agentId: input.binding.agentId,
    day: day(u.createdAt),
    provider: u.provider,
    model: u.model,
    inputTokens: u.inputTokens,
    outputTokens: u.outputTokens,
    version,
    createdAt: iso(u.createdAt),
  });
}

/** The statements projecting the due rows: the newest version of each record, read from the thread as it is now. */
function recordStatements(
  input: DrainInput,
  scope: ThreadScope,
  rows: readonly OutboxRow[],
  entries: EntryStore,
  runs: RunStore,
  toolCalls: ToolCallStore,
  usage: UsageStore,
): D1PreparedStatement[] {
  const newest = new Map<string, OutboxRow>();
  for (const row of rows) {
    const key = `${row.kind}\u0000${row.ref_id}`;
    const seen = newest.get(key);
    if (seen === undefined || row.version >= seen.version) newest.set(key, row);
  }
  const statements: D1PreparedStatement[] = [];
  for (const row of [...newest.values()].sort((a, b) => a.seq - b.seq)) {
    switch (row.kind) {
      case "entry": {
        // Gone means deleted by retention since it was queued: D1 must not learn it.
        const entry = entries.get(row.ref_id);
        if (entry !== null) statements.push(upsertMessage(input.db, scope, messageRow(entry)));
        break;
      }
      case "run": {
        const run = runs.get(row.ref_id);
        if (run === null) break;
        statements.push(upsertRun(input.db, scope, runRow(run, input.binding.agentId)));
        // Usage has no outbox rows of its own: it travels with its run (written once, so version 1).
        for (const u of usage.records(run.id)) statements.push(usageStatement(input, scope, u, 1));
        break;
      }
      case "tool_call": {
        const call = toolCalls.get(row.ref_id);
        if (call !== null) statements.push(upsertToolCall(input.db, scope, toolCallRow(call)));
        break;
      }
      case "usage": {
        const parsed = usagePayloadSchema.safeParse(JSON.parse(row.payload_json));
        if (!parsed.success) {
          logProjection("error", "unreadable usage outbox row dropped", { seq: row.seq, refId: row.ref_id });
          break;
        }
        // Queued by older builds; usage now travels with its run.
        statements.push(usageStatement(input, scope, parsed.data, row.version));
        break;
      }
      default:
        logProjection("error", "unknown outbox kind dropped", { seq: row.seq, kind: row.kind });
    }
  }
  return statements;
}

function mirrorStatements(input: DrainInput, scope: ThreadScope, mark: RetentionMark): D1PreparedStatement[] {
  const survivors = input.storage.sql
    .exec("SELECT id FROM entries WHERE seq <= ?", mark.throughSeq)
    .toArray()
    .map((r) => String(r.id));
  const roots = input.storage.sql
    .exec("SELECT id FROM entries WHERE parent_id IS NULL")
    .toArray()
    .map((r) => String(r.id));
  const survivingCalls =
    mark.toolCallsBefore === null
      ? []
      : input.storage.sql
          .exec("SELECT id FROM tool_calls WHERE created_at < ?", mark.toolCallsBefore)
          .toArray()
          .map((r) => String(r.id));
  return mirrorRetention(input.db, scope, {
    throughSeq: mark.throughSeq,
    survivorIds: survivors,
    rootIds: roots,
    toolCallsBefore: mark.toolCallsBefore === null ? null : iso(mark.toolCallsBefore),
    survivingToolCallIds: survivingCalls,
  });
}

async function drainOnce(input: DrainInput): Promise<DrainOutcome> {
  const { storage, binding } = input;
  const now = input.now();
  const limit = Math.max(1, Math.trunc(input.batchSize ?? DEFAULT_DRAIN_BATCH));
  const rows = storage.sql
    .exec(
      `SELECT seq, kind, ref_id, version, payload_json, attempts, next_attempt_at FROM outbox
       WHERE next_attempt_at IS NULL OR next_attempt_at <= ? ORDER BY seq LIMIT ?`,
      now,
      limit,
    )
    .toArray()
    .map((r) => outboxRowSchema.parse(r));
  const mark = pendingRetention(storage);
  const entries = new EntryStore(storage, { now: input.now });
  const fromSeq = projectedEntrySeq(storage);
  // Entries are never queued: the ones above the watermark are the ones D1 lacks, oldest first.
  const pendingEntries = entries.all({ afterSeq: fromSeq, limit });
  // Once this batch commits, every entry up to the last one it carries is in D1.
  const throughSeq = pendingEntries.at(-1)?.seq ?? fromSeq;
  if (rows.length === 0 && pendingEntries.length === 0 && mark === null) {
    return { drained: 0, failed: false, ...backlog(storage, fromSeq, now) };
  }

  const scope: ThreadScope = { tenantId: binding.tenantId, threadId: binding.threadId };
  const runs = new RunStore(storage, { now: input.now });
  const toolCalls = new ToolCallStore(storage, { now: input.now });
  const usage = new UsageStore(storage, { now: input.now });
  const version = readMetaNumber(storage, VERSION_KEY) + 1;
  writeMeta(storage, VERSION_KEY, String(version));
  const batchSeqs = rows.map((r) => r.seq);
  const statements = [
    ...pendingEntries.map((entry) => upsertMessage(input.db, scope, messageRow(entry))),
    ...recordStatements(input, scope, rows, entries, runs, toolCalls, usage),
    ...(mark === null ? [] : mirrorStatements(input, scope, mark)),
    upsertSession(input.db, scope, sessionSnapshot(storage, binding, entries, version, throughSeq)),
  ];

  try {
    await withinTimeout(input.db.batch(statements));
  } catch (error) {
    const failures = readMetaNumber(storage, FAILURES_KEY) + 1;
    const attempt = Math.max(failures, ...rows.map((r) => r.attempts + 1));
    const delay = backoffMs(attempt);
    storage.transactionSync(() => {
      writeMeta(storage, FAILURES_KEY, String(failures));
      storage.sql.exec(
        `UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?
         WHERE seq IN (SELECT value FROM json_each(?))`,
        now + delay,
        JSON.stringify(batchSeqs),
      );
    });
    logProjection("warn", "projection batch failed; will retry", {
      tenantId: binding.tenantId,
      threadId: binding.threadId,
      rows: rows.length,
      attempt,
      retryInMs: delay,
      error: String(error),
    });
    return {
      drained: 0,
      remaining: backlog(storage, fromSeq, now).remaining,
      failed: true,
      retryInMs: delay,
    };
  }

  const watermark = storage.transactionSync(() => {
    for (const row of rows) {
      // Guarded by content as well as seq: a seq freed by an earlier delete may already name a newer row.
      storage.sql.exec(
        "DELETE FROM outbox WHERE seq = ? AND kind = ? AND ref_id = ? AND version = ?",
        row.seq,
        row.kind,
        row.ref_id,
        row.version,
      );
    }
    // Retention may have lowered the watermark while D1 was answering (it deleted the newest entries, freeing
    // their seqs); then it stays lowered and the next drain sends what survives above it again.
    const current = projectedEntrySeq(storage);
    if (throughSeq > fromSeq && current === fromSeq) setProjectedEntrySeq(storage, throughSeq);
    writeMeta(storage, FAILURES_KEY, null);
    if (mark !== null) retentionProjected(storage, mark);
    return current === fromSeq ? Math.max(throughSeq, fromSeq) : current;
  });
  return {
    drained: rows.length + pendingEntries.length,
    failed: false,
    ...backlog(storage, watermark, input.now()),
  };
}

/**
 * Projects the due outbox rows (oldest first, up to `batchSize`) into D1 as one batch, then deletes them. A D1
 * failure is never thrown: the rows stay, their attempts grow, and they wait with exponential backoff and jitter
 * (1 s base, 5 min cap). The session row carries `projected_seq`, the watermark `reconcileProjection` checks.
 */
export function drainOutbox(input: DrainInput): Promise<DrainOutcome> {
  return serialized(input.storage, () => drainOnce(input));
}

async function reconcileOnce(input: DrainInput): Promise<{ missing: number; failed?: boolean }> {
  const { storage, binding } = input;
  const maxSeq = scalar(storage, "SELECT MAX(seq) AS n FROM entries");
  if (maxSeq === null) return { missing: 0 };
  let watermark: number | null;
  try {
    watermark = await withinTimeout(
      readWatermark(input.db, { tenantId: binding.tenantId, threadId: binding.threadId }),
    );
  } catch (error) {
    logProjection("warn", "reconciliation could not read D1", {
      threadId: binding.threadId,
      error: String(error),
    });
    return { missing: 0, failed: true };
  }
  if (watermark !== null && watermark >= maxSeq) return { missing: 0 };

  const runs = new RunStore(storage, { now: input.now });
  const toolCalls = new ToolCallStore(storage, { now: input.now });
  const now = input.now();
  const queued = (kind: string) =>
    new Set(
      storage.sql
        .exec("SELECT ref_id FROM outbox WHERE kind = ?", kind)
        .toArray()
        .map((r) => String(r.ref_id)),
    );
  return storage.transactionSync(() => {
    // The entries D1 lacks are the ones above its watermark: lowering ours to it sends them again.
    const ours = projectedEntrySeq(storage);
    const lowered = Math.min(ours, watermark ?? 0);
    const missing =
      scalar(storage, "SELECT COUNT(*) AS n FROM entries WHERE seq > ? AND seq <= ?", lowered, ours) ?? 0;
    if (lowered < ours) setProjectedEntrySeq(storage, lowered);
    // D1 never saw this thread (or lost it): the runs (with their usage) and tool calls go again too.
    if (watermark === null) {
      const pendingRuns = queued("run");
      const pendingCalls = queued("tool_call");
      for (const r of storage.sql.exec("SELECT id FROM runs ORDER BY created_at, id").toArray()) {
        const run = runs.get(String(r.id));
        if (run === null) continue;
        if (!pendingRuns.has(run.id)) {
          enqueueOutbox(
            storage,
            { kind: "run", refId: run.id, version: run.revision, payload: { ...run } },
            now,
          );
        }
        for (const call of toolCalls.forRun(run.id)) {
          if (pendingCalls.has(call.id)) continue;
          enqueueOutbox(
            storage,
            { kind: "tool_call", refId: call.id, version: call.revision, payload: { ...call } },
            now,
          );
        }
      }
    }
    return { missing };
  });
}

/**
 * Compares the thread's newest entry with D1's watermark and queues the entries D1 lacks (everything, runs and
 * usage included, when D1 has no session row). One indexed D1 read when in sync. Never throws for a D1 failure.
 */
export function reconcileProjection(input: DrainInput): Promise<{ missing: number; failed?: boolean }> {
  return serialized(input.storage, () => reconcileOnce(input));
}
