// Drains the thread's outbox into D1 in one batch of version-guarded upserts, with backoff when D1 is unavailable.
//
// One turn's data goes one way: this file reads it from the thread's SQLite, projection-rows.ts maps each record to
// its D1 row, d1/projection-writer.ts binds the statements, and this file sends them as one batch and settles the
// outbox by what that batch carried.
import { z } from "zod";
import { zeroRetentionIdleMinutes } from "../../control/artifact";
import {
  mirrorRetention,
  type ThreadScope,
  upsertApproval,
  upsertFeedback,
  upsertMessage,
  upsertRun,
  upsertSession,
  upsertToolCall,
  upsertUsage,
} from "../d1/projection-writer";
import type { ProjectionTargets } from "../d1/shards";
import { EntryStore } from "../thread/entry-store";
import { FeedbackStore } from "../thread/feedback-store";
import { findRunProjection } from "../thread/run-projection";
import { deleteMeta, metaInteger, readMetaInteger, readMetaKeys, writeMeta } from "../thread/thread-meta";
import {
  pendingRetention,
  RETENTION_MARK_KEYS,
  type RetentionMark,
  retentionProjected,
} from "../thread/thread-retention";
import { ToolCallStore } from "../thread/tool-call-store";
import { advanceWatermark, backlog, readSessionFacts } from "./drain-state";
import { PROJECTED_ENTRY_SEQ_KEY, REVISION_TABLES } from "./outbox";
import { logProjection, type ProjectionInput, serialized, withinTimeout } from "./projection-lane";
import {
  approvalPayloadSchema,
  approvalRow,
  feedbackRow,
  messageRow,
  retentionPass,
  runRow,
  sessionSnapshot,
  toolCallRow,
  usageRow,
} from "./projection-rows";

/** How soon a drain held back by a move's rollup copy tries again. */
const MOVE_WAIT_MS = 2_000;

export interface DrainInput extends ProjectionInput {
  /**
   * The tenant's shard(s) for this drain (src/storage/d1/shards.ts); without it the batch goes to `db` alone.
   * Resolved inside the drain, so a control plane that cannot answer is retried like a failed batch.
   */
  targets?: () => Promise<ProjectionTargets>;
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

const DEFAULT_DRAIN_BATCH = 100;
const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_CAP_MS = 5 * 60_000;
const VERSION_KEY = "projection_version";
/** Session versions reserved per `meta` write: a drain takes the next one from memory, not from a row it rewrites. */
const VERSION_BLOCK = 1_000;

/** Per object: the next session version to use and the highest one reserved in `meta`. */
const versions = new WeakMap<DurableObjectStorage, { next: number; reserved: number }>();

/**
 * The session row's version for this drain: one more than the last drain's. Versions are reserved in `meta` a block
 * at a time (the stored value is the highest reserved; older builds stored the last one used), so an object started
 * again continues above every version it may have sent, and a drain rewrites no `meta` row for it.
 */
function nextSessionVersion(storage: DurableObjectStorage, meta: ReadonlyMap<string, string>): number {
  let state = versions.get(storage);
  if (state === undefined) {
    const stored = metaInteger(meta, VERSION_KEY) ?? readMetaInteger(storage, VERSION_KEY) ?? 0;
    state = { next: stored + 1, reserved: stored };
    versions.set(storage, state);
  }
  const version = state.next;
  state.next += 1;
  if (version > state.reserved) {
    state.reserved = version + VERSION_BLOCK - 1;
    writeMeta(storage, VERSION_KEY, String(state.reserved));
  }
  return version;
}
const FAILURES_KEY = "projection_failures";

/** Exponential backoff with jitter: attempt n waits between half and all of min(cap, base·2^(n-1)). */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, Math.min(attempt, 30) - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

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

const recordKey = (row: Pick<OutboxRow, "kind" | "ref_id">) => `${row.kind}\u0000${row.ref_id}`;

/**
 * The statements projecting the due rows: the newest version of each record, read from the thread as it is now.
 * `sent` gets the revision each record was sent at (null: gone), for the settle step to compare with.
 */
function recordStatements(
  input: DrainInput,
  db: D1Database,
  scope: ThreadScope,
  rows: readonly OutboxRow[],
  entries: EntryStore,
  toolCalls: ToolCallStore,
  sent: Map<string, number | null>,
): D1PreparedStatement[] {
  const { binding } = input;
  const newest = new Map<string, OutboxRow>();
  for (const row of rows) {
    const key = recordKey(row);
    const seen = newest.get(key);
    if (seen === undefined || row.version >= seen.version) newest.set(key, row);
  }
  const statements: D1PreparedStatement[] = [];
  const zero = zeroRetentionIdleMinutes(binding.artifact) !== null;
  for (const row of [...newest.values()].sort((a, b) => a.seq - b.seq)) {
    switch (row.kind) {
      case "entry": {
        // Gone means deleted by retention since it was queued: D1 must not learn it.
        const entry = entries.get(row.ref_id);
        if (entry !== null)
          statements.push(upsertMessage(db, scope, messageRow(entry, binding.version, zero)));
        break;
      }
      case "run": {
        const found = findRunProjection(input.storage, row.ref_id);
        sent.set(recordKey(row), found?.run.revision ?? null);
        if (found === null) break;
        statements.push(upsertRun(db, scope, runRow(found.run, binding.agentId, found.inputDigest)));
        // Usage has no outbox rows of its own: it travels with its run (written once, so version 1).
        for (const u of found.usage) {
          statements.push(upsertUsage(db, scope, usageRow(u, binding.agentId, 1)));
        }
        break;
      }
      case "tool_call": {
        const call = toolCalls.get(row.ref_id);
        sent.set(recordKey(row), call?.revision ?? null);
        if (call !== null) statements.push(upsertToolCall(db, scope, toolCallRow(call, zero)));
        break;
      }
      case "feedback": {
        const feedback = new FeedbackStore(input.storage, { now: input.now }).get(row.ref_id);
        sent.set(recordKey(row), feedback?.revision ?? null);
        if (feedback !== null) statements.push(upsertFeedback(db, scope, feedbackRow(feedback, zero)));
        break;
      }
      case "approval": {
        // The row holds the approval's newest view (approval-outbox.ts), queued at the revision it carries.
        const parsed = approvalPayloadSchema.safeParse(JSON.parse(row.payload_json));
        const foreign =
          parsed.success &&
          (parsed.data.threadId !== binding.threadId ||
            (parsed.data.tenantId !== undefined && parsed.data.tenantId !== binding.tenantId));
        if (!parsed.success || parsed.data.id !== row.ref_id || foreign) {
          logProjection("error", "unreadable approval outbox row dropped", {
            seq: row.seq,
            refId: row.ref_id,
          });
          break;
        }
        sent.set(recordKey(row), row.version);
        statements.push(
          upsertApproval(db, scope, approvalRow(parsed.data, row.version, binding.environment)),
        );
        break;
      }
      case "usage": {
        const parsed = usagePayloadSchema.safeParse(JSON.parse(row.payload_json));
        if (!parsed.success) {
          logProjection("error", "unreadable usage outbox row dropped", { seq: row.seq, refId: row.ref_id });
          break;
        }
        // Queued by older builds; usage now travels with its run.
        statements.push(upsertUsage(db, scope, usageRow(parsed.data, binding.agentId, row.version)));
        break;
      }
      default:
        logProjection("error", "unknown outbox kind dropped", { seq: row.seq, kind: row.kind });
    }
  }
  return statements;
}

/** What the thread still holds of what a retention mark covers, for D1 to delete the rest. */
function mirrorStatements(
  input: DrainInput,
  db: D1Database,
  scope: ThreadScope,
  mark: RetentionMark,
): D1PreparedStatement[] {
  const sql = input.storage.sql;
  const ids = (cursor: SqlStorageCursor<Record<string, SqlStorageValue>>) =>
    cursor.toArray().map((r) => String(r.id));
  const held = {
    survivorIds: ids(sql.exec("SELECT id FROM entries WHERE seq <= ?", mark.throughSeq)),
    rootIds: ids(sql.exec("SELECT id FROM entries WHERE parent_id IS NULL")),
    survivingToolCallIds:
      mark.toolCallsBefore === null
        ? []
        : ids(sql.exec("SELECT id FROM tool_calls WHERE created_at < ?", mark.toolCallsBefore)),
  };
  return mirrorRetention(db, scope, retentionPass(mark, held));
}

/**
 * After a committed batch: a record's row goes once the record is still at the revision the batch carried (or gone);
 * one that changed while D1 was answering keeps its row, renamed to the newer revision, for the next drain. Rows of
 * older builds (`entry`, `usage`) carry their own version and go when it is still the one sent. Guarded by content
 * as well as seq: a seq freed by an earlier delete may already name a newer row.
 */
function settleRow(
  storage: DurableObjectStorage,
  row: OutboxRow,
  sent: ReadonlyMap<string, number | null>,
): void {
  const key = recordKey(row);
  if (!sent.has(key)) {
    storage.sql.exec(
      "DELETE FROM outbox WHERE seq = ? AND kind = ? AND ref_id = ? AND version = ?",
      row.seq,
      row.kind,
      row.ref_id,
      row.version,
    );
    return;
  }
  const table = REVISION_TABLES[row.kind];
  if (table === undefined) {
    storage.sql.exec(
      "DELETE FROM outbox WHERE seq = ? AND kind = ? AND ref_id = ?",
      row.seq,
      row.kind,
      row.ref_id,
    );
    return;
  }
  // The record's current revision is compared in the delete itself (one statement, no read before it).
  const current = `(SELECT revision FROM ${table.name} WHERE ${table.key} = ?3)`;
  const deleted = storage.sql
    .exec(
      `DELETE FROM outbox WHERE seq = ?1 AND kind = ?2 AND ref_id = ?3
       AND (${current} IS NULL OR ${current} IS ?4) RETURNING seq`,
      row.seq,
      row.kind,
      row.ref_id,
      sent.get(key) ?? null,
    )
    .toArray();
  if (deleted.length > 0) return;
  storage.sql.exec(
    `UPDATE outbox SET version = COALESCE(${current}, version) WHERE seq = ?1 AND kind = ?2 AND ref_id = ?3`,
    row.seq,
    row.kind,
    row.ref_id,
  );
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
  // Every `meta` key the drain needs, in one read.
  const meta = readMetaKeys(storage, [
    PROJECTED_ENTRY_SEQ_KEY,
    FAILURES_KEY,
    ...RETENTION_MARK_KEYS,
    ...(versions.has(storage) ? [] : [VERSION_KEY]),
  ]);
  const mark = pendingRetention(storage, meta);
  const entries = new EntryStore(storage, { now: input.now });
  const fromSeq = Math.max(0, metaInteger(meta, PROJECTED_ENTRY_SEQ_KEY) ?? 0);
  // Entries are never queued: the ones above the watermark are the ones D1 lacks, oldest first.
  const pendingEntries = entries.all({ afterSeq: fromSeq, limit });
  // Once this batch commits, every entry up to the last one it carries is in D1.
  const throughSeq = pendingEntries.at(-1)?.seq ?? fromSeq;
  if (rows.length === 0 && pendingEntries.length === 0 && mark === null) {
    return { drained: 0, failed: false, ...backlog(storage, fromSeq, now) };
  }

  const scope: ThreadScope = { tenantId: binding.tenantId, threadId: binding.threadId };
  const toolCalls = new ToolCallStore(storage, { now: input.now });
  const version = nextSessionVersion(storage, meta);
  const batchSeqs = rows.map((r) => r.seq);
  const sent = new Map<string, number | null>();
  const facts = readSessionFacts(storage, fromSeq, throughSeq, pendingEntries);
  const leaf = facts.leaf_id === null ? null : { id: facts.leaf_id, agentVersion: facts.leaf_agent_version };
  const session = sessionSnapshot(binding, facts, leaf, version, throughSeq);
  const statementsFor = (db: D1Database): D1PreparedStatement[] => [
    ...pendingEntries.map((entry) =>
      upsertMessage(
        db,
        scope,
        messageRow(entry, binding.version, zeroRetentionIdleMinutes(binding.artifact) !== null),
      ),
    ),
    ...recordStatements(input, db, scope, rows, entries, toolCalls, sent),
    ...(mark === null ? [] : mirrorStatements(input, db, scope, mark)),
    upsertSession(db, scope, session),
  ];

  try {
    const route: ProjectionTargets =
      input.targets === undefined
        ? { targets: [{ shard: "DB", db: input.db, lead: [] }], committed: () => undefined }
        : await withinTimeout(input.targets());
    if (route.targets.length === 0) {
      // A move is copying the tenant's rollups: nothing is sent, nothing counts as a failure, and it comes back soon.
      return { drained: 0, failed: false, ...backlog(storage, fromSeq, now), retryInMs: MOVE_WAIT_MS };
    }
    // One batch per database: the tenant's shard, and during a move the target after it (docs/scaling.md).
    for (const target of route.targets) {
      await withinTimeout(target.db.batch([...target.lead, ...statementsFor(target.db)]));
    }
    route.committed();
  } catch (error) {
    const failures = (metaInteger(meta, FAILURES_KEY) ?? 0) + 1;
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

  const settled = storage.transactionSync(() => {
    for (const row of rows) settleRow(storage, row, sent);
    // What is left is read with the watermark's move, after the rows it settled.
    const left = advanceWatermark(storage, fromSeq, throughSeq, input.now());
    if (meta.has(FAILURES_KEY)) deleteMeta(storage, FAILURES_KEY);
    if (mark !== null) retentionProjected(storage, mark);
    return left;
  });
  return {
    drained: rows.length + pendingEntries.length,
    failed: false,
    remaining: settled.remaining,
    ...(settled.retryInMs !== undefined ? { retryInMs: settled.retryInMs } : {}),
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
