// The run_chunks table: a live run's streamed deltas packed several per row, so a reconnecting client can resume.
import { z } from "zod";
import { fail, ok, type Result } from "../../errors";
import { createRedactor, type Redactor } from "../redact";
import { findRun, isTerminalRunStatus } from "./run-store";
import { invalidRunRecord, type RunStoreOptions } from "./run-types";

/** Deltas a chunk row holds at most (a bound on row size); writers pack about ten. */
export const MAX_DELTAS_PER_CHUNK = 1000;

export interface Delta {
  seq: number;
  text: string;
}

const seqSchema = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
const chunkRowSchema = z.object({ first_seq: z.number().int(), text_json: z.string() });
const chunkTextsSchema = z.array(z.string());

/** Chunks are deleted by `RunStore.transition` when their run ends, in the transaction that seals it. */
export class RunChunkStore {
  readonly #storage: DurableObjectStorage;
  readonly #redactor: Redactor;

  constructor(storage: DurableObjectStorage, options: RunStoreOptions) {
    this.#storage = storage;
    this.#redactor = createRedactor(options.secrets ?? []);
  }

  /**
   * Writes the chunk row that starts at `firstSeq` with `texts`, deltas `firstSeq, firstSeq+1, …`: a new row must
   * continue from the last stored delta, and the last row may be written again with more deltas (never fewer) (a live run grows its
   * open row a delta at a time, so every delta is durable before it is sent). Delta seqs start at 1 and are contiguous
   * per run, so a resuming client can be given exactly what it missed. Only a live (queued/running) run takes chunks.
   * One statement: the checks ride in its WHERE clause, so a delta costs one row write and no reads on the way.
   */
  write(runId: string, firstSeq: number, texts: readonly string[]): Result<{ lastSeq: number }> {
    const parsedSeq = seqSchema.safeParse(firstSeq);
    if (!parsedSeq.success) return invalidRunRecord(parsedSeq.error);
    if (texts.length === 0 || texts.length > MAX_DELTAS_PER_CHUNK) {
      return fail("bad_request", `A chunk holds 1 to ${MAX_DELTAS_PER_CHUNK} deltas.`);
    }
    const first = parsedSeq.data;
    const lastSeq = first + texts.length - 1;
    const redacted = texts.map((t) => this.#redactor.text(t));
    const written = this.#storage.sql.exec(
      `INSERT INTO run_chunks (run_id, first_seq, last_seq, text_json)
       SELECT ?1, ?2, ?3, ?4
       WHERE EXISTS (SELECT 1 FROM runs WHERE id = ?1 AND status IN ('queued', 'running'))
         AND COALESCE((SELECT last_seq FROM run_chunks WHERE run_id = ?1 AND first_seq < ?2
                       ORDER BY first_seq DESC LIMIT 1), 0) = ?2 - 1
         AND NOT EXISTS (SELECT 1 FROM run_chunks WHERE run_id = ?1 AND first_seq > ?2)
         AND NOT EXISTS (SELECT 1 FROM run_chunks WHERE run_id = ?1 AND first_seq = ?2 AND last_seq > ?3)
       ON CONFLICT (run_id, first_seq) DO UPDATE SET last_seq = excluded.last_seq, text_json = excluded.text_json`,
      runId,
      first,
      lastSeq,
      JSON.stringify(redacted),
    );
    if (written.rowsWritten > 0) return ok({ lastSeq });
    // Refused: say why (only now is anything read).
    const run = findRun(this.#storage, runId);
    if (!run) return fail("not_found", "Run not found.");
    if (isTerminalRunStatus(run.status))
      return fail("conflict", "The run has ended.", { status: run.status });
    return fail("conflict", "Delta sequence must continue from the last stored delta.", {
      lastSeq: this.lastSeq(runId),
    });
  }

  lastSeq(runId: string): number {
    const row = this.#storage.sql
      .exec("SELECT COALESCE(MAX(last_seq), 0) AS last FROM run_chunks WHERE run_id = ?", runId)
      .one();
    return z.number().int().parse(row.last);
  }

  /** Every stored delta with seq greater than `afterSeq`, in order (empty once the run has ended). */
  after(runId: string, afterSeq: number): Delta[] {
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
}
