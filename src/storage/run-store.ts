// The thread's run ledger: run lifecycle, resumable delta chunks, tool calls and token usage.
import { z } from "zod";
import { fail, ok, type Result } from "../errors";
import { ERROR_CODES, type ErrorCode } from "../shared/errors";
import { parseJsonColumn } from "./json-column";
import { enqueueOutbox } from "./outbox";
import { createRedactor, type JsonValue, type Redactor } from "./redact";

export const RUN_STATUSES = ["queued", "running", "succeeded", "failed", "aborted"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The only moves a run can make; anything else is a conflict. */
const NEXT_STATUS: Record<RunStatus, readonly RunStatus[]> = {
  queued: ["running", "aborted"],
  running: ["succeeded", "failed", "aborted"],
  succeeded: [],
  failed: [],
  aborted: [],
};

export const isTerminalRunStatus = (status: RunStatus): boolean => NEXT_STATUS[status].length === 0;

export const TOOL_CALL_STATUSES = ["started", "finished", "error", "blocked"] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/** Deltas a chunk row holds at most (a bound on row size); writers pack about ten. */
export const MAX_DELTAS_PER_CHUNK = 1000;

// A type alias, not an interface, so a run stays assignable to JsonValue for the outbox payload.
export type RunError = {
  code: ErrorCode;
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
  /** Grows with every change (the D1 projection's version). */
  revision: number;
}

export interface NewRun {
  id?: string;
  idempotencyKey?: string;
  parentEntryId?: string;
  userEntryId?: string;
  versionId?: string;
}

export interface RunPatch {
  userEntryId?: string;
  assistantEntryId?: string;
  abortReason?: string;
  error?: RunError;
}

export interface Delta {
  seq: number;
  text: string;
}

export interface ToolCall {
  id: string;
  runId: string;
  name: string;
  input: JsonValue;
  output: JsonValue | null;
  status: ToolCallStatus;
  createdAt: number;
  endedAt: number | null;
  revision: number;
}

export interface UsageTurn {
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export interface UsageRecord extends UsageTurn {
  runId: string;
  turn: number;
  createdAt: number;
}

const usageRowSchema = z.object({
  run_id: z.string(),
  turn: z.number().int(),
  provider: z.string(),
  model: z.string(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  created_at: z.number(),
});

export interface UsageTotals {
  turns: number;
  inputTokens: number;
  outputTokens: number;
}

export interface RunStoreOptions {
  now: () => number;
  /** Secret values to redact from tool input/output, deltas and error text before storage. */
  secrets?: readonly string[];
  newId?: () => string;
}

const id = z.string().min(1).max(128);
const seq = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const tokens = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
// Provider turns count from 0 (the model loop's step index).
const turnNumber = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const newRunSchema = z.object({
  id: id.optional(),
  idempotencyKey: z.string().min(1).max(256).optional(),
  parentEntryId: id.optional(),
  userEntryId: id.optional(),
  versionId: id.optional(),
});

const runPatchSchema = z.object({
  userEntryId: id.optional(),
  assistantEntryId: id.optional(),
  // Long texts are cut, not refused: ending a run must never fail because a provider's message was verbose.
  abortReason: z
    .string()
    .min(1)
    .transform((t) => t.slice(0, 1000))
    .optional(),
  error: z
    .object({ code: z.enum(ERROR_CODES), message: z.string().transform((t) => t.slice(0, 4000)) })
    .optional(),
});

const usageTurnSchema = z.object({
  provider: z.string().min(1).max(128),
  model: z.string().min(1).max(256),
  inputTokens: tokens,
  outputTokens: tokens,
});

const runRowSchema = z.object({
  id: z.string(),
  status: z.enum(RUN_STATUSES),
  idempotency_key: z.string().nullable(),
  user_entry_id: z.string().nullable(),
  assistant_entry_id: z.string().nullable(),
  parent_entry_id: z.string().nullable(),
  created_at: z.number().int(),
  started_at: z.number().int().nullable(),
  ended_at: z.number().int().nullable(),
  abort_reason: z.string().nullable(),
  error_code: z.enum(ERROR_CODES).nullable(),
  error_message: z.string().nullable(),
  version_id: z.string().nullable(),
  revision: z.number().int(),
});

const chunkRowSchema = z.object({ first_seq: z.number().int(), text_json: z.string() });
const chunkTextsSchema = z.array(z.string());

const toolCallRowSchema = z.object({
  id: z.string(),
  run_id: z.string(),
  name: z.string(),
  input_json: z.string(),
  output_json: z.string().nullable(),
  status: z.enum(TOOL_CALL_STATUSES),
  created_at: z.number().int(),
  ended_at: z.number().int().nullable(),
  revision: z.number().int(),
});

const totalsRowSchema = z.object({
  turns: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
});

const RUN_COLUMNS =
  "id, status, idempotency_key, user_entry_id, assistant_entry_id, parent_entry_id, created_at, started_at, ended_at, abort_reason, error_code, error_message, version_id, revision";
const TOOL_CALL_COLUMNS = "id, run_id, name, input_json, output_json, status, created_at, ended_at, revision";

function toRun(row: unknown): Run {
  const r = runRowSchema.parse(row);
  return {
    id: r.id,
    status: r.status,
    idempotencyKey: r.idempotency_key,
    userEntryId: r.user_entry_id,
    assistantEntryId: r.assistant_entry_id,
    parentEntryId: r.parent_entry_id,
    createdAt: r.created_at,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    abortReason: r.abort_reason,
    error: r.error_code === null ? null : { code: r.error_code, message: r.error_message ?? "" },
    versionId: r.version_id,
    revision: r.revision,
  };
}

function toToolCall(row: unknown): ToolCall {
  const r = toolCallRowSchema.parse(row);
  return {
    id: r.id,
    runId: r.run_id,
    name: r.name,
    input: parseJsonColumn(r.input_json),
    output: r.output_json === null ? null : parseJsonColumn(r.output_json),
    status: r.status,
    createdAt: r.created_at,
    endedAt: r.ended_at,
    revision: r.revision,
  };
}

function invalid(error: z.ZodError): Result<never> {
  return fail("bad_request", "Invalid run record.", { fields: error.issues.map((i) => i.path.join(".")) });
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

  /** Creates a queued run; a known idempotency key returns the run it created before (`created: false`). */
  create(input: NewRun = {}): Result<{ run: Run; created: boolean }> {
    const parsed = newRunSchema.safeParse(input);
    if (!parsed.success) return invalid(parsed.error);
    const n = parsed.data;
    return this.#storage.transactionSync((): Result<{ run: Run; created: boolean }> => {
      if (n.idempotencyKey !== undefined) {
        const existing = this.byIdempotencyKey(n.idempotencyKey);
        if (existing) return ok({ run: existing, created: false });
      }
      const runId = n.id ?? this.#newId();
      const now = this.#now();
      // The idempotency key was checked above, so a conflict here can only be the id.
      const inserted = this.#storage.sql
        .exec(
          `INSERT INTO runs (id, status, idempotency_key, user_entry_id, parent_entry_id, created_at, version_id, revision)
           VALUES (?, 'queued', ?, ?, ?, ?, ?, 1)
           ON CONFLICT DO NOTHING RETURNING ${RUN_COLUMNS}`,
          runId,
          n.idempotencyKey ?? null,
          n.userEntryId ?? null,
          n.parentEntryId ?? null,
          now,
          n.versionId ?? null,
        )
        .toArray()[0];
      if (inserted === undefined) return fail("conflict", "A run with this id already exists.", { runId });
      const run = toRun(inserted);
      this.#enqueueRun(run, now, { fresh: true });
      return ok({ run, created: true });
    });
  }

  get(runId: string): Run | null {
    const row = this.#storage.sql.exec(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`, runId).toArray()[0];
    return row ? toRun(row) : null;
  }

  byIdempotencyKey(key: string): Run | null {
    const row = this.#storage.sql
      .exec(`SELECT ${RUN_COLUMNS} FROM runs WHERE idempotency_key = ?`, key)
      .toArray()[0];
    return row ? toRun(row) : null;
  }

  /** Runs not yet finished (queued or running), oldest first. */
  active(): Run[] {
    return this.#storage.sql
      .exec(`SELECT ${RUN_COLUMNS} FROM runs WHERE status IN ('queued', 'running') ORDER BY created_at, id`)
      .toArray()
      .map(toRun);
  }

  /**
   * Moves a run to `to` if the lifecycle allows it (queued→running→succeeded|failed|aborted, queued→aborted).
   * Ending a run deletes its delta chunks in the same transaction: the final entry now holds the text. Call it
   * inside the caller's `transactionSync` together with the final entry's append to commit both at once.
   */
  transition(runId: string, to: RunStatus, patch: RunPatch = {}): Result<Run> {
    const parsed = runPatchSchema.safeParse(patch);
    if (!parsed.success) return invalid(parsed.error);
    const p = parsed.data;
    return this.#storage.transactionSync((): Result<Run> => {
      const run = this.get(runId);
      if (!run) return fail("not_found", "Run not found.");
      if (!NEXT_STATUS[run.status].includes(to)) {
        return fail("conflict", `A ${run.status} run cannot become ${to}.`, { status: run.status });
      }
      const now = this.#now();
      const ending = isTerminalRunStatus(to);
      const row = this.#storage.sql.exec(
        `UPDATE runs SET
           status = ?,
           started_at = CASE WHEN ? = 'running' THEN ? ELSE started_at END,
           ended_at = CASE WHEN ? THEN ? ELSE ended_at END,
           user_entry_id = COALESCE(?, user_entry_id),
           assistant_entry_id = COALESCE(?, assistant_entry_id),
           abort_reason = COALESCE(?, abort_reason),
           error_code = COALESCE(?, error_code),
           error_message = COALESCE(?, error_message),
           revision = revision + 1
         WHERE id = ? RETURNING ${RUN_COLUMNS}`,
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
        runId,
      );
      const updated = toRun(row.one());
      if (ending) this.#storage.sql.exec("DELETE FROM run_chunks WHERE run_id = ?", runId);
      this.#enqueueRun(updated, now);
      return ok(updated);
    });
  }

  /**
   * Stores streamed deltas `firstSeq, firstSeq+1, …` as one packed row. Delta seqs start at 1 and are contiguous
   * per run, so a resuming client can be given exactly what it missed. Only a live (queued/running) run takes chunks.
   */
  appendChunk(runId: string, firstSeq: number, texts: readonly string[]): Result<{ lastSeq: number }> {
    const parsedSeq = seq.safeParse(firstSeq);
    if (!parsedSeq.success) return invalid(parsedSeq.error);
    if (texts.length === 0 || texts.length > MAX_DELTAS_PER_CHUNK) {
      return fail("bad_request", `A chunk holds 1 to ${MAX_DELTAS_PER_CHUNK} deltas.`);
    }
    const redacted = texts.map((t) => this.#redactor.text(t));
    return this.#storage.transactionSync((): Result<{ lastSeq: number }> => {
      const run = this.get(runId);
      if (!run) return fail("not_found", "Run not found.");
      if (isTerminalRunStatus(run.status))
        return fail("conflict", "The run has ended.", { status: run.status });
      const previous = this.lastChunkSeq(runId);
      if (parsedSeq.data !== previous + 1) {
        return fail("conflict", "Delta sequence must continue from the last stored delta.", {
          lastSeq: previous,
        });
      }
      const lastSeq = parsedSeq.data + redacted.length - 1;
      this.#storage.sql.exec(
        "INSERT INTO run_chunks (run_id, first_seq, last_seq, text_json) VALUES (?, ?, ?, ?)",
        runId,
        parsedSeq.data,
        lastSeq,
        JSON.stringify(redacted),
      );
      return ok({ lastSeq });
    });
  }

  lastChunkSeq(runId: string): number {
    const row = this.#storage.sql
      .exec("SELECT COALESCE(MAX(last_seq), 0) AS last FROM run_chunks WHERE run_id = ?", runId)
      .one();
    return z.number().int().parse(row.last);
  }

  /** Every stored delta with seq greater than `afterSeq`, in order (empty once the run has ended). */
  chunksAfter(runId: string, afterSeq: number): Delta[] {
    const rows = this.#storage.sql
      .exec(
        "SELECT first_seq, text_json FROM run_chunks WHERE run_id = ? AND last_seq > ? ORDER BY first_seq",
        runId,
        afterSeq,
      )
      .toArray();
    const deltas: Delta[] = [];
    for (const row of rows) {
      const r = chunkRowSchema.parse(row);
      chunkTextsSchema.parse(JSON.parse(r.text_json)).forEach((text, i) => {
        const deltaSeq = r.first_seq + i;
        if (deltaSeq > afterSeq) deltas.push({ seq: deltaSeq, text });
      });
    }
    return deltas;
  }

  /** Records a tool call as started. */
  recordToolCall(call: { id?: string; runId: string; name: string; input: unknown }): Result<ToolCall> {
    const parsedName = z.string().min(1).max(128).safeParse(call.name);
    if (!parsedName.success) return invalid(parsedName.error);
    const parsedId = id.optional().safeParse(call.id);
    if (!parsedId.success) return invalid(parsedId.error);
    const input = this.#redactor.value(call.input);
    return this.#storage.transactionSync((): Result<ToolCall> => {
      if (!this.get(call.runId)) return fail("not_found", "Run not found.");
      const callId = parsedId.data ?? this.#newId();
      if (this.toolCall(callId))
        return fail("conflict", "A tool call with this id already exists.", { callId });
      const now = this.#now();
      this.#storage.sql.exec(
        `INSERT INTO tool_calls (id, run_id, name, input_json, output_json, status, created_at, revision)
         VALUES (?, ?, ?, ?, NULL, 'started', ?, 1)`,
        callId,
        call.runId,
        parsedName.data,
        JSON.stringify(input),
        now,
      );
      return ok(this.#enqueueToolCall(callId, now));
    });
  }

  /** Ends a started tool call with its (redacted) output. */
  completeToolCall(
    callId: string,
    result: { status: Exclude<ToolCallStatus, "started">; output?: unknown },
  ): Result<ToolCall> {
    const status = z.enum(["finished", "error", "blocked"]).safeParse(result.status);
    if (!status.success) return invalid(status.error);
    const output = this.#redactor.value(result.output ?? null);
    return this.#storage.transactionSync((): Result<ToolCall> => {
      const existing = this.toolCall(callId);
      if (!existing) return fail("not_found", "Tool call not found.");
      if (existing.status !== "started") {
        return fail("conflict", "The tool call has already ended.", { status: existing.status });
      }
      const now = this.#now();
      this.#storage.sql.exec(
        "UPDATE tool_calls SET status = ?, output_json = ?, ended_at = ?, revision = revision + 1 WHERE id = ?",
        status.data,
        JSON.stringify(output),
        now,
        callId,
      );
      return ok(this.#enqueueToolCall(callId, now));
    });
  }

  toolCall(callId: string): ToolCall | null {
    const row = this.#storage.sql
      .exec(`SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE id = ?`, callId)
      .toArray()[0];
    return row ? toToolCall(row) : null;
  }

  toolCalls(runId: string): ToolCall[] {
    return this.#storage.sql
      .exec(`SELECT ${TOOL_CALL_COLUMNS} FROM tool_calls WHERE run_id = ? ORDER BY created_at, id`, runId)
      .toArray()
      .map(toToolCall);
  }

  /** Records one provider turn's token usage (turns count from 0); each (run, turn) is recorded once. */
  recordUsage(
    runId: string,
    turn: number,
    usage: UsageTurn,
  ): Result<UsageTurn & { runId: string; turn: number }> {
    const parsedTurn = turnNumber.safeParse(turn);
    if (!parsedTurn.success) return invalid(parsedTurn.error);
    const parsed = usageTurnSchema.safeParse(usage);
    if (!parsed.success) return invalid(parsed.error);
    const u = parsed.data;
    return this.#storage.transactionSync((): Result<UsageTurn & { runId: string; turn: number }> => {
      if (!this.get(runId)) return fail("not_found", "Run not found.");
      const recorded = this.#storage.sql
        .exec("SELECT 1 AS present FROM usage WHERE run_id = ? AND turn = ?", runId, parsedTurn.data)
        .toArray();
      if (recorded.length > 0) return fail("conflict", "Usage for this turn is already recorded.");
      const now = this.#now();
      this.#storage.sql.exec(
        `INSERT INTO usage (run_id, turn, provider, model, input_tokens, output_tokens, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
        runId,
        parsedTurn.data,
        u.provider,
        u.model,
        u.inputTokens,
        u.outputTokens,
        now,
      );
      // No outbox row of its own: usage is recorded while its run is live, and the run's end queues the run, whose
      // projection carries its usage.
      return ok({ runId, turn: parsedTurn.data, ...u });
    });
  }

  /** Every recorded provider turn of one run in turn order, or of the whole thread in time order. */
  usageRecords(runId?: string): UsageRecord[] {
    const columns = "run_id, turn, provider, model, input_tokens, output_tokens, created_at";
    const cursor =
      runId === undefined
        ? this.#storage.sql.exec(`SELECT ${columns} FROM usage ORDER BY created_at, run_id, turn`)
        : this.#storage.sql.exec(`SELECT ${columns} FROM usage WHERE run_id = ? ORDER BY turn`, runId);
    return cursor.toArray().map((row) => {
      const r = usageRowSchema.parse(row);
      return {
        runId: r.run_id,
        turn: r.turn,
        provider: r.provider,
        model: r.model,
        inputTokens: r.input_tokens,
        outputTokens: r.output_tokens,
        createdAt: r.created_at,
      };
    });
  }

  /** Token totals over every recorded turn of a run. */
  usageForRun(runId: string): UsageTotals {
    const row = this.#storage.sql
      .exec(
        `SELECT COUNT(*) AS turns, COALESCE(SUM(input_tokens), 0) AS input_tokens,
                COALESCE(SUM(output_tokens), 0) AS output_tokens
         FROM usage WHERE run_id = ?`,
        runId,
      )
      .one();
    const r = totalsRowSchema.parse(row);
    return { turns: r.turns, inputTokens: r.input_tokens, outputTokens: r.output_tokens };
  }

  #enqueueRun(run: Run, now: number, options: { fresh?: boolean } = {}): void {
    enqueueOutbox(
      this.#storage,
      { kind: "run", refId: run.id, version: run.revision, payload: { ...run } },
      now,
      options,
    );
  }

  #enqueueToolCall(callId: string, now: number): ToolCall {
    const call = this.toolCall(callId);
    if (!call) throw new Error("A tool call vanished inside its own transaction.");
    enqueueOutbox(
      this.#storage,
      { kind: "tool_call", refId: call.id, version: call.revision, payload: { ...call } },
      now,
    );
    return call;
  }
}
