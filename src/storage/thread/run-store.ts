// The thread's runs table: a run's lifecycle from queued to its end, found again by id or idempotency key.
import { z } from "zod";
import { fail, ok, type Result } from "../../errors";
import { ERROR_REASONS } from "../../shared/error-reasons";
import { ERROR_CODES, type ErrorCode, type ErrorReason } from "../../shared/errors";
import { RUN_STATUSES, type RunStatus } from "../../shared/protocol";
import { canBecome, isTerminalRunStatus } from "../../shared/run-states";
import { enqueueOutbox } from "../projection/outbox";
import { createRedactor, type Redactor } from "../redact";
import { RUN_COLUMNS, toRun } from "./run-row";
import { invalidRunRecord, type RunStoreOptions, recordIdSchema } from "./run-types";

export { isTerminalRunStatus };

// A type alias, not an interface, so a run stays assignable to JsonValue for the outbox payload.
export type RunError = {
  code: ErrorCode;
  /** Why, beside the code (a provider failure's `auth`, `context_length`, …); absent when none applies. */
  reason?: ErrorReason;
  message: string;
};

export interface Run {
  id: string;
  status: RunStatus;
  idempotencyKey: string | null;
  userEntryId: string | null;
  assistantEntryId: string | null;
  parentEntryId: string | null;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
  abortReason: string | null;
  error: RunError | null;
  versionId: string | null;
  /** From the run's acceptance to its first streamed delta; null until one streamed (or when none did). */
  firstDeltaMs: number | null;
  /** Grows with every change (the D1 projection's version). */
  revision: number;
}

export interface NewRun {
  id?: string;
  idempotencyKey?: string;
  parentEntryId?: string;
  userEntryId?: string;
  versionId?: string;
  /**
   * The run starts as it is created (no other run is live, its quota slot is held): it is stored `running` at once,
   * one row write instead of a queued row and its transition.
   */
  start?: boolean;
}

/** What a new turn is screened with (`RunStore.screenFacts`). */
export interface ScreenFacts {
  earlier: Run | null;
  active: Run[];
  recent: number;
}

export interface RunPatch {
  userEntryId?: string;
  assistantEntryId?: string;
  abortReason?: string;
  error?: RunError;
  /** Set when the run ends, from the live run's clock; kept if already set. */
  firstDeltaMs?: number;
}

const newRunSchema = z.object({
  id: recordIdSchema.optional(),
  idempotencyKey: z.string().min(1).max(256).optional(),
  parentEntryId: recordIdSchema.optional(),
  userEntryId: recordIdSchema.optional(),
  versionId: recordIdSchema.optional(),
  start: z.boolean().optional(),
});

const runPatchSchema = z.object({
  userEntryId: recordIdSchema.optional(),
  assistantEntryId: recordIdSchema.optional(),
  // Long texts are cut, not refused: ending a run must never fail because a provider's message was verbose.
  abortReason: z
    .string()
    .min(1)
    .transform((t) => t.slice(0, 1000))
    .optional(),
  error: z
    .object({
      code: z.enum(ERROR_CODES),
      reason: z.enum(ERROR_REASONS).optional(),
      message: z.string().transform((t) => t.slice(0, 4000)),
    })
    .optional(),
  firstDeltaMs: z.number().int().min(0).optional(),
});

/** Where a page of runs in creation order ended. */
export interface RunPosition {
  createdAt: number;
  /** The run's creation order (`runs.seq`). */
  seq: number;
}

/** The statuses a run may move to `to` from, as the JSON array the transition's update binds. */
const SOURCES = new Map<RunStatus, string>(
  RUN_STATUSES.map((to) => [to, JSON.stringify(RUN_STATUSES.filter((from) => canBecome(from, to)))]),
);
const sourcesOf = (to: RunStatus): string => SOURCES.get(to) ?? "[]";

/** One run by id; the other run tables check with it that the run they write for exists. */
export function findRun(storage: DurableObjectStorage, runId: string): Run | null {
  const row = storage.sql.exec(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`, runId).toArray()[0];
  return row ? toRun(row) : null;
}

/** Per object: grows before every write to `runs` that changes a status, a key or a placement (`changes`). */
const generations = new WeakMap<DurableObjectStorage, number>();

function bumpChanges(storage: DurableObjectStorage): void {
  generations.set(storage, (generations.get(storage) ?? 0) + 1);
}

export class RunStore {
  readonly #storage: DurableObjectStorage;
  readonly #now: () => number;
  readonly #redactor: Redactor;
  readonly #newId: () => string;

  constructor(storage: DurableObjectStorage, options: RunStoreOptions) {
    this.#storage = storage;
    this.#now = options.now;
    this.#redactor = createRedactor(options.secrets ?? []);
    this.#newId = options.newId ?? (() => crypto.randomUUID());
  }

  /**
   * Creates a queued run (a running one with `start`); a known idempotency key returns the run it created before
   * (`created: false`).
   */
  create(input: NewRun = {}): Result<{ run: Run; created: boolean }> {
    const parsed = newRunSchema.safeParse(input);
    if (!parsed.success) return invalidRunRecord(parsed.error);
    const n = parsed.data;
    return this.#storage.transactionSync((): Result<{ run: Run; created: boolean }> => {
      const runId = n.id ?? this.#newId();
      const now = this.#now();
      bumpChanges(this.#storage);
      // The key is checked in the insert itself (one statement): nothing is inserted when a run already holds it.
      const inserted = this.#storage.sql
        .exec(
          `INSERT INTO runs (id, seq, status, idempotency_key, user_entry_id, parent_entry_id, created_at, started_at,
             version_id, revision)
           SELECT ?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs), ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1
           WHERE ?3 IS NULL OR NOT EXISTS (SELECT 1 FROM runs WHERE idempotency_key = ?3)
           ON CONFLICT DO NOTHING RETURNING ${RUN_COLUMNS}`,
          runId,
          n.start === true ? "running" : "queued",
          n.idempotencyKey ?? null,
          n.userEntryId ?? null,
          n.parentEntryId ?? null,
          now,
          n.start === true ? now : null,
          n.versionId ?? null,
        )
        .toArray()[0];
      if (inserted === undefined) {
        const existing = n.idempotencyKey === undefined ? null : this.byIdempotencyKey(n.idempotencyKey);
        if (existing) return ok({ run: existing, created: false });
        return fail("conflict", "A run with this id already exists.", { runId });
      }
      const run = toRun(inserted);
      this.#enqueueRun(run, now, { fresh: true });
      return ok({ run, created: true });
    });
  }

  /**
   * A number that moves whenever a run is created, moves or is placed (bumped before the write, so a rolled-back
   * one moves it too): equal numbers mean `screenFacts` would read the same runs.
   */
  changes(): number {
    return generations.get(this.#storage) ?? 0;
  }

  get(runId: string): Run | null {
    return findRun(this.#storage, runId);
  }

  /**
   * Runs in creation order (ties in insertion order), `limit` at a time after `after`, the position `page` returned
   * with the last run of the previous page: how an export reads every run without holding them all.
   */
  page(after: RunPosition | null, limit: number): { runs: Run[]; last: RunPosition | null } {
    const rows = this.#storage.sql
      .exec(
        `SELECT ${RUN_COLUMNS}, seq AS position FROM runs
         WHERE created_at > ?1 OR (created_at = ?1 AND seq > ?2) ORDER BY created_at, seq LIMIT ?3`,
        after?.createdAt ?? Number.MIN_SAFE_INTEGER,
        after?.seq ?? 0,
        limit,
      )
      .toArray();
    const runs = rows.map(toRun);
    const lastRow = rows[rows.length - 1];
    const lastRun = runs[runs.length - 1];
    return {
      runs,
      last: lastRow && lastRun ? { createdAt: lastRun.createdAt, seq: Number(lastRow.position) } : null,
    };
  }

  /** The run an idempotency key created; a scan of the thread's runs (the key has no index: schema 16). */
  byIdempotencyKey(key: string): Run | null {
    const row = this.#storage.sql
      .exec(`SELECT ${RUN_COLUMNS} FROM runs WHERE idempotency_key = ? LIMIT 1`, key)
      .toArray()[0];
    return row ? toRun(row) : null;
  }

  /**
   * What a new turn is screened with, in one statement: the run `key` created (null: none, or no key given), the runs
   * not yet finished (as `active`), and how many of the newest `atMost` runs were created after `since` (as
   * `countCreatedAfter`).
   */
  screenFacts(
    key: string | null,
    since: number,
    atMost: number,
  ): { earlier: Run | null; active: Run[]; recent: number } {
    const nulls = RUN_COLUMNS.split(",")
      .map(() => "NULL")
      .join(", ");
    const rows = this.#storage.sql
      .exec(
        `SELECT * FROM (SELECT ${RUN_COLUMNS}, 0 AS part, NULL AS recent FROM runs
           WHERE ?1 IS NOT NULL AND idempotency_key = ?1 LIMIT 1)
         UNION ALL
         SELECT ${RUN_COLUMNS}, 1, NULL FROM runs WHERE status IN ('queued', 'running', 'requires_action')
         UNION ALL
         SELECT ${nulls}, 2,
           (SELECT COUNT(*) FROM (SELECT created_at FROM runs ORDER BY seq DESC LIMIT ?2) WHERE created_at > ?3)
         ORDER BY part, created_at, id`,
        key,
        atMost,
        since,
      )
      .toArray();
    let earlier: Run | null = null;
    const active: Run[] = [];
    let recent = 0;
    for (const row of rows) {
      if (row.part === 0) earlier = toRun(row);
      else if (row.part === 1) active.push(toRun(row));
      else recent = Number(row.recent);
    }
    return { earlier, active, recent };
  }

  /** Runs not yet finished (queued, running or waiting for a person), oldest first. */
  active(): Run[] {
    return this.#storage.sql
      .exec(
        `SELECT ${RUN_COLUMNS} FROM runs WHERE status IN ('queued', 'running', 'requires_action') ORDER BY created_at, id`,
      )
      .toArray()
      .map(toRun);
  }

  /** The run waiting for a person, if any (a thread has at most one: nothing else runs while it waits). */
  waiting(): Run | null {
    const row = this.#storage.sql
      .exec(`SELECT ${RUN_COLUMNS} FROM runs WHERE status = 'requires_action' LIMIT 1`)
      .toArray()[0];
    return row ? toRun(row) : null;
  }

  /**
   * How many runs were created after `since`, looking only at the newest `atMost` (a rate limit needs to know
   * whether a bound is reached, not the whole history).
   */
  countCreatedAfter(since: number, atMost: number): number {
    const row = this.#storage.sql
      .exec(
        // Every send, edit and regenerate starts one run; runs are inserted in time order, so seq is recency.
        "SELECT COUNT(*) AS n FROM (SELECT created_at FROM runs ORDER BY seq DESC LIMIT ?) WHERE created_at > ?",
        atMost,
        since,
      )
      .one();
    return Number(row.n);
  }

  /**
   * Moves a run to `to` if the lifecycle allows it (queued→running→succeeded|failed|aborted, queued→failed|aborted).
   * Ending a run deletes its delta chunks in the same transaction: the final entry now holds the text. Call it
   * inside the caller's `transactionSync` together with the final entry's append to commit both at once.
   */
  transition(runId: string, to: RunStatus, patch: RunPatch = {}): Result<Run> {
    const parsed = runPatchSchema.safeParse(patch);
    if (!parsed.success) return invalidRunRecord(parsed.error);
    const p = parsed.data;
    return this.#storage.transactionSync((): Result<Run> => {
      const now = this.#now();
      const ending = isTerminalRunStatus(to);
      bumpChanges(this.#storage);
      // The lifecycle's check is in the update's WHERE clause (one statement); the run is read only when it refused.
      const row = this.#storage.sql.exec(
        `UPDATE runs SET
           status = ?,
           started_at = CASE WHEN ? = 'running' THEN COALESCE(started_at, ?) ELSE started_at END,
           ended_at = CASE WHEN ? THEN ? ELSE ended_at END,
           user_entry_id = COALESCE(?, user_entry_id),
           assistant_entry_id = COALESCE(?, assistant_entry_id),
           abort_reason = COALESCE(?, abort_reason),
           error_code = COALESCE(?, error_code),
           error_message = COALESCE(?, error_message),
           error_reason = COALESCE(?, error_reason),
           first_delta_ms = COALESCE(first_delta_ms, ?),
           revision = revision + 1
         WHERE id = ? AND status IN (SELECT value FROM json_each(?)) RETURNING ${RUN_COLUMNS}`,
        to,
        to,
        now,
        ending ? 1 : 0,
        now,
        p.userEntryId ?? null,
        p.assistantEntryId ?? null,
        p.abortReason === undefined ? null : this.#redactor.text(p.abortReason),
        p.error?.code ?? null,
        p.error === undefined ? null : this.#redactor.text(p.error.message),
        p.error?.reason ?? null,
        p.firstDeltaMs ?? null,
        runId,
        sourcesOf(to),
      );
      const changed = row.toArray()[0];
      if (changed === undefined) {
        const run = this.get(runId);
        if (!run) return fail("not_found", "Run not found.");
        return fail("conflict", `A ${run.status} run cannot become ${to}.`, { status: run.status });
      }
      const updated = toRun(changed);
      // The one write outside the runs table: chunks exist only for a live run, and the run's end is what ends them.
      if (ending) this.#storage.sql.exec("DELETE FROM run_chunks WHERE run_id = ?", runId);
      this.#enqueueRun(updated, now);
      return ok(updated);
    });
  }

  /**
   * Records where a queued run's user message went once it is placed (a turn queued behind another run enters the
   * tree only when it starts). Only a queued run without a user entry takes one.
   */
  placeUserEntry(
    runId: string,
    place: { userEntryId: string; parentEntryId: string | null; versionId?: string },
  ): Result<Run> {
    return this.#storage.transactionSync((): Result<Run> => {
      const run = this.get(runId);
      if (!run) return fail("not_found", "Run not found.");
      if (run.status !== "queued" || run.userEntryId !== null) {
        return fail("conflict", "Only a queued run waiting for its message can be placed.", {
          status: run.status,
        });
      }
      const now = this.#now();
      bumpChanges(this.#storage);
      const row = this.#storage.sql.exec(
        `UPDATE runs SET user_entry_id = ?, parent_entry_id = ?, version_id = COALESCE(?, version_id),
         revision = revision + 1 WHERE id = ? RETURNING ${RUN_COLUMNS}`,
        place.userEntryId,
        place.parentEntryId,
        place.versionId ?? null,
        runId,
      );
      const updated = toRun(row.one());
      this.#enqueueRun(updated, now);
      return ok(updated);
    });
  }

  #enqueueRun(run: Run, now: number, options: { fresh?: boolean } = {}): void {
    enqueueOutbox(
      this.#storage,
      {
        kind: "run",
        refId: run.id,
        version: run.revision,
        // D1's copy knows no waiting status: a run waiting for a person is still under way there, and its
        // approvals are in agent_approvals (docs/decisions.md, "Approvals").
        payload: { ...run, status: run.status === "requires_action" ? "running" : run.status },
      },
      now,
      options,
    );
  }
}
