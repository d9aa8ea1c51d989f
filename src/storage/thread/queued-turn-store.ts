// The queued_turns table: turns waiting behind a live run, in the order they will run, kept across the object's death.
import { z } from "zod";
import { attachmentRef } from "../../shared/protocol";
import { parseJsonColumn } from "../json-column";

/**
 * The request a queued run was made from. Its user message enters the tree only when the run starts, because only
 * then is its parent known (the reply of the run before it). A send's `parentId`: absent = the thread's leaf when it
 * starts, null = a new root, else that entry.
 */
export const queuedTurnSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("send"),
    clientMessageId: z.string().min(1).max(128),
    text: z.string(),
    parentId: z.string().min(1).max(128).nullable().optional(),
    /** Resolved when the send was accepted: the message is stored with them when its run starts. */
    attachments: z.array(attachmentRef).min(1).optional(),
  }),
  z.strictObject({
    kind: z.literal("edit"),
    entryId: z.string().min(1).max(128),
    clientMessageId: z.string().min(1).max(128),
    text: z.string(),
  }),
  z.strictObject({ kind: z.literal("regenerate"), entryId: z.string().min(1).max(128) }),
]);

/** Who asked, for the run's tools and its log line (`meta` is the thread layer's request meta, parsed there). */
const queuedRowSchema = z.strictObject({
  turn: queuedTurnSchema,
  subject: z.string(),
  meta: z.unknown().optional(),
});

export type QueuedTurn = z.infer<typeof queuedTurnSchema>;

export interface QueuedTurnRecord {
  runId: string;
  urgent: boolean;
  turn: QueuedTurn;
  subject: string;
  meta?: unknown;
}

const rowSchema = z.object({ run_id: z.string(), urgent: z.number().int(), turn_json: z.string() });

/** Urgent turns (an interrupt or a rollback) first, then arrival order. */
const QUEUE_ORDER = "ORDER BY urgent DESC, ord";

function toRecord(row: unknown): QueuedTurnRecord {
  const r = rowSchema.parse(row);
  const stored = queuedRowSchema.parse(parseJsonColumn(r.turn_json));
  return {
    runId: r.run_id,
    urgent: r.urgent === 1,
    turn: stored.turn,
    subject: stored.subject,
    ...(stored.meta !== undefined ? { meta: stored.meta } : {}),
  };
}

/**
 * Objects whose queue `count()` found empty and that added nothing since: the queue is asked after every run's end,
 * and a thread that never queues a turn answers from memory (docs/decisions.md "Statements per turn"). Set only by
 * `count()`, which no transaction calls, so a rolled-back removal cannot leave it set over a row; cleared before
 * every insert, so a rolled-back insert leaves it cleared.
 */
const knownEmpty = new WeakSet<DurableObjectStorage>();

/** Rows are written and removed inside the caller's transaction, together with their run's own change. */
export class QueuedTurnStore {
  readonly #storage: DurableObjectStorage;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
  }

  add(record: QueuedTurnRecord): void {
    const body = {
      turn: queuedTurnSchema.parse(record.turn),
      subject: record.subject,
      ...(record.meta !== undefined ? { meta: record.meta } : {}),
    };
    knownEmpty.delete(this.#storage);
    this.#storage.sql.exec(
      `INSERT INTO queued_turns (run_id, urgent, ord, turn_json)
       VALUES (?, ?, (SELECT COALESCE(MAX(ord), 0) + 1 FROM queued_turns), ?)`,
      record.runId,
      record.urgent ? 1 : 0,
      JSON.stringify(body),
    );
  }

  /** The turn that runs next, if any. */
  first(): QueuedTurnRecord | null {
    const row = this.#storage.sql
      .exec(`SELECT run_id, urgent, turn_json FROM queued_turns ${QUEUE_ORDER} LIMIT 1`)
      .toArray()[0];
    return row === undefined ? null : toRecord(row);
  }

  /** Run ids in the order they will run. */
  order(): string[] {
    return this.#storage.sql
      .exec(`SELECT run_id FROM queued_turns ${QUEUE_ORDER}`)
      .toArray()
      .map((row) => String(row.run_id));
  }

  /** 1 for the next turn; null for a run not waiting. */
  position(runId: string): number | null {
    const index = this.order().indexOf(runId);
    return index === -1 ? null : index + 1;
  }

  count(): number {
    if (knownEmpty.has(this.#storage)) return 0;
    const n = Number(this.#storage.sql.exec("SELECT COUNT(*) AS n FROM queued_turns").one().n);
    if (n === 0) knownEmpty.add(this.#storage);
    return n;
  }

  remove(runId: string): void {
    this.#storage.sql.exec("DELETE FROM queued_turns WHERE run_id = ?", runId);
  }
}
