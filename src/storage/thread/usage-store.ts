// The usage table: token counts per provider turn of a run; run totals are sums over its turns, never stored twice.
import { z } from "zod";
import { fail, ok, type Result } from "../../errors";
import { findRun } from "./run-store";
import { invalidRunRecord, type RunStoreOptions } from "./run-types";

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

export interface UsageTotals {
  turns: number;
  inputTokens: number;
  outputTokens: number;
}

const tokens = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
// Provider turns count from 0 (the model loop's step index).
const turnNumber = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

const usageTurnSchema = z.object({
  provider: z.string().min(1).max(128),
  model: z.string().min(1).max(256),
  inputTokens: tokens,
  outputTokens: tokens,
});

const usageRowSchema = z.object({
  run_id: z.string(),
  turn: z.number().int(),
  provider: z.string(),
  model: z.string(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  created_at: z.number(),
});

const totalsRowSchema = z.object({
  turns: z.number().int(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
});

const runTotalsRowSchema = totalsRowSchema.extend({ run_id: z.string(), first_at: z.number().int() });

/** Usage holds no secrets (names and counts only), so the store takes no redaction list. */
/**
 * What this object recorded per run while it runs, so the seal needs no aggregate read (docs/decisions.md
 * "Statements per turn"): complete only when every turn from 0 on was recorded here (a run resumed after a restart
 * recorded its first turns elsewhere, and is read).
 */
const recorded = new WeakMap<
  DurableObjectStorage,
  Map<string, { firstTurn: number; lastTurn: number; totals: UsageTotals }>
>();

function remember(storage: DurableObjectStorage, runId: string, turn: number, usage: UsageTurn): void {
  let runs = recorded.get(storage);
  if (runs === undefined) {
    runs = new Map();
    recorded.set(storage, runs);
  }
  const kept = runs.get(runId) ?? {
    firstTurn: turn,
    lastTurn: turn,
    totals: { turns: 0, inputTokens: 0, outputTokens: 0 },
  };
  kept.firstTurn = Math.min(kept.firstTurn, turn);
  kept.lastTurn = Math.max(kept.lastTurn, turn);
  kept.totals = {
    turns: kept.totals.turns + 1,
    inputTokens: kept.totals.inputTokens + usage.inputTokens,
    outputTokens: kept.totals.outputTokens + usage.outputTokens,
  };
  runs.set(runId, kept);
}

export class UsageStore {
  readonly #storage: DurableObjectStorage;
  readonly #now: () => number;

  constructor(storage: DurableObjectStorage, options: RunStoreOptions) {
    this.#storage = storage;
    this.#now = options.now;
  }

  /** Records one provider turn's token usage (turns count from 0); each (run, turn) is recorded once. */
  record(runId: string, turn: number, usage: UsageTurn): Result<UsageTurn & { runId: string; turn: number }> {
    const parsedTurn = turnNumber.safeParse(turn);
    if (!parsedTurn.success) return invalidRunRecord(parsedTurn.error);
    const parsed = usageTurnSchema.safeParse(usage);
    if (!parsed.success) return invalidRunRecord(parsed.error);
    const u = parsed.data;
    return this.#storage.transactionSync((): Result<UsageTurn & { runId: string; turn: number }> => {
      const now = this.#now();
      // One statement: written only for a known run and a turn not yet recorded; the refusal is told apart after.
      const written = this.#storage.sql
        .exec(
          `INSERT INTO usage (run_id, turn, provider, model, input_tokens, output_tokens, created_at)
           SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM runs WHERE id = ?1)
           ON CONFLICT DO NOTHING RETURNING turn`,
          runId,
          parsedTurn.data,
          u.provider,
          u.model,
          u.inputTokens,
          u.outputTokens,
          now,
        )
        .toArray();
      if (written.length === 0) {
        if (!findRun(this.#storage, runId)) return fail("not_found", "Run not found.");
        return fail("conflict", "Usage for this turn is already recorded.");
      }
      remember(this.#storage, runId, parsedTurn.data, u);
      // No outbox row of its own: usage is recorded while its run is live, and the run's end queues the run, whose
      // projection carries its usage.
      return ok({ runId, turn: parsedTurn.data, ...u });
    });
  }

  /** Every recorded provider turn of one run in turn order, or of the whole thread in time order. */
  records(runId?: string): UsageRecord[] {
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

  /**
   * The thread's provider turns in time order (as `records()` lists them), `limit` at a time after the last record of
   * the previous page.
   */
  page(after: UsageRecord | null, limit: number): UsageRecord[] {
    const rows = this.#storage.sql
      .exec(
        `SELECT run_id, turn, provider, model, input_tokens, output_tokens, created_at FROM usage
         WHERE (created_at, run_id, turn) > (?, ?, ?) ORDER BY created_at, run_id, turn LIMIT ?`,
        after?.createdAt ?? Number.MIN_SAFE_INTEGER,
        after?.runId ?? "",
        after?.turn ?? -1,
        limit,
      )
      .toArray();
    return rows.map((row) => {
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

  /**
   * Totals per run, in the order the runs first appear among the thread's turns in time order, `limit` runs at a
   * time after `after` (the last page's last entry).
   */
  totalsByRunPage(
    after: { firstAt: number; runId: string } | null,
    limit: number,
  ): (UsageTotals & { runId: string; firstAt: number })[] {
    const rows = this.#storage.sql
      .exec(
        `SELECT run_id, MIN(created_at) AS first_at, COUNT(*) AS turns, SUM(input_tokens) AS input_tokens,
                SUM(output_tokens) AS output_tokens
         FROM usage GROUP BY run_id HAVING (first_at, run_id) > (?, ?) ORDER BY first_at, run_id LIMIT ?`,
        after?.firstAt ?? Number.MIN_SAFE_INTEGER,
        after?.runId ?? "",
        limit,
      )
      .toArray();
    return rows.map((row) => {
      const r = runTotalsRowSchema.parse(row);
      return {
        runId: r.run_id,
        firstAt: r.first_at,
        turns: r.turns,
        inputTokens: r.input_tokens,
        outputTokens: r.output_tokens,
      };
    });
  }

  /**
   * A run's totals as it is sealed, then forgotten in memory: from what this object recorded when it recorded every
   * turn from the first (no read), else read as `totalsForRun`.
   */
  sealedTotals(runId: string): UsageTotals {
    const runs = recorded.get(this.#storage);
    const kept = runs?.get(runId);
    runs?.delete(runId);
    if (kept !== undefined && kept.firstTurn === 0 && kept.totals.turns === kept.lastTurn + 1)
      return kept.totals;
    return this.totalsForRun(runId);
  }

  /** Token totals over every recorded turn of a run. */
  totalsForRun(runId: string): UsageTotals {
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
}

/**
 * Tokens of every provider turn recorded at or after `at` (epoch ms): what a thread that died holding its count
 * back still owes its tenant's quota (src/auth/run-quota.ts). Read once per object start at most, so unindexed.
 */
export function tokensRecordedSince(storage: DurableObjectStorage, at: number): number {
  const row = storage.sql
    .exec(
      "SELECT COALESCE(SUM(input_tokens + output_tokens), 0) AS tokens FROM usage WHERE created_at >= ?",
      at,
    )
    .one();
  const tokens = Number(row.tokens);
  return Number.isSafeInteger(tokens) && tokens > 0 ? tokens : 0;
}
