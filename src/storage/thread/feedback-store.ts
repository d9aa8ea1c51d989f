// The user's feedback on assistant entries in the thread's SQLite (docs/protocol.md): one row per entry, latest wins.
//
// A change writes its row, its outbox row (the D1 projection) and its `message.feedback` event in one transaction.
import { z } from "zod";
import type { FeedbackRating } from "../../shared/protocol";
import { enqueueOutbox } from "../projection/outbox";
import type { JsonValue } from "../redact";
import { recordThreadEvent } from "./thread-events";

export interface Feedback {
  entryId: string;
  /** null: cleared. */
  rating: FeedbackRating | null;
  comment: string | null;
  subject: string;
  createdAt: number;
  updatedAt: number;
  revision: number;
}

const feedbackRow = z.object({
  entry_id: z.string(),
  rating: z.enum(["up", "down"]).nullable(),
  comment: z.string().nullable(),
  subject: z.string(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
  revision: z.number().int(),
});

const COLUMNS = "entry_id, rating, comment, subject, created_at, updated_at, revision";

function fromRow(row: unknown): Feedback {
  const r = feedbackRow.parse(row);
  return {
    entryId: r.entry_id,
    rating: r.rating,
    comment: r.comment,
    subject: r.subject,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    revision: r.revision,
  };
}

export interface FeedbackChange {
  entryId: string;
  rating: FeedbackRating | null;
  comment: string | null;
  subject: string;
  /** What the `message.feedback` event names besides the feedback itself (thread, agent, version, run). */
  event: Record<string, JsonValue>;
}

export class FeedbackStore {
  readonly #storage: DurableObjectStorage;
  readonly #now: () => number;

  constructor(storage: DurableObjectStorage, options: { now: () => number }) {
    this.#storage = storage;
    this.#now = options.now;
  }

  get(entryId: string): Feedback | null {
    const row = this.#storage.sql
      .exec(`SELECT ${COLUMNS} FROM feedback WHERE entry_id = ?`, entryId)
      .toArray()[0];
    return row === undefined ? null : fromRow(row);
  }

  /** The feedback of each of `entryIds` that has any (cleared ones included). */
  forEntries(entryIds: readonly string[]): Map<string, Feedback> {
    const out = new Map<string, Feedback>();
    if (entryIds.length === 0) return out;
    const rows = this.#storage.sql
      .exec(
        `SELECT ${COLUMNS} FROM feedback WHERE entry_id IN (SELECT value FROM json_each(?))`,
        JSON.stringify(entryIds),
      )
      .toArray();
    for (const row of rows) {
      const feedback = fromRow(row);
      out.set(feedback.entryId, feedback);
    }
    return out;
  }

  /** Up to `limit` rows after `afterEntryId` in entry-id order (the export's pages); cleared ones included. */
  page(afterEntryId: string, limit: number): Feedback[] {
    return this.#storage.sql
      .exec(
        `SELECT ${COLUMNS} FROM feedback WHERE entry_id > ? ORDER BY entry_id LIMIT ?`,
        afterEntryId,
        limit,
      )
      .toArray()
      .map(fromRow);
  }

  /**
   * Sets the entry's feedback. An unchanged rating and comment write nothing (`changed: false`); a change bumps the
   * revision and queues its projection and its `message.feedback` event in the same transaction.
   */
  set(change: FeedbackChange): { feedback: Feedback; changed: boolean } {
    return this.#storage.transactionSync(() => {
      const now = this.#now();
      const current = this.get(change.entryId);
      if (current !== null && current.rating === change.rating && current.comment === change.comment) {
        return { feedback: current, changed: false };
      }
      if (current === null && change.rating === null) {
        // Clearing what was never set changes nothing.
        return {
          feedback: { ...change, createdAt: now, updatedAt: now, revision: 0 },
          changed: false,
        };
      }
      const row = this.#storage.sql
        .exec(
          `INSERT INTO feedback (entry_id, rating, comment, subject, created_at, updated_at, revision)
           VALUES (?, ?, ?, ?, ?, ?, 1)
           ON CONFLICT (entry_id) DO UPDATE SET rating = excluded.rating, comment = excluded.comment,
             subject = excluded.subject, updated_at = excluded.updated_at, revision = feedback.revision + 1
           RETURNING ${COLUMNS}`,
          change.entryId,
          change.rating,
          change.comment,
          change.subject,
          now,
          now,
        )
        .one();
      const feedback = fromRow(row);
      enqueueOutbox(
        this.#storage,
        { kind: "feedback", refId: feedback.entryId, version: feedback.revision, payload: {} },
        now,
      );
      recordThreadEvent(
        this.#storage,
        {
          type: "message.feedback",
          data: {
            ...change.event,
            entryId: feedback.entryId,
            rating: feedback.rating,
            comment: feedback.comment,
          },
        },
        now,
      );
      return { feedback, changed: true };
    });
  }
}
