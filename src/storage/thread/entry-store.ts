// The thread's conversation tree in Durable Object SQLite, with Prism's append contract (conflicts, idempotency, forks).
import { z } from "zod";
import { fail, ok, type Result } from "../../errors";
import { type AttachmentRef, attachmentRef } from "../../shared/protocol";
import { createRedactor, type Redactor } from "../redact";
import { appendKeyWritten } from "./append-keys";
import { ANCESTOR_WALK, ancestorSeqAt, ancestryBelow, entryPosition, insertEntrySql } from "./entry-ancestry";
import {
  ENTRY_COLUMNS,
  ENTRY_KINDS,
  ENTRY_ROLES,
  type Entry,
  type EntryKind,
  type EntryRole,
  entriesFrom,
  entryFromRow,
  firstEntry,
  integerOrNull,
} from "./entry-rows";
import { ACTIVE_LEAF_KEY, deleteMeta, replaceMeta, updateMeta, writeMeta } from "./thread-meta";

export { ENTRY_KINDS, ENTRY_ROLES, type Entry, type EntryKind, type EntryRole };

export interface AppendInput {
  /** Generated when omitted. */
  id?: string;
  /** The entry this one follows; `null` starts a new root. */
  parentId: string | null;
  kind: EntryKind;
  role?: EntryRole;
  runId?: string;
  body: unknown;
  /** Deduplicates retries at one position: (key, expectedParentId) appends at most once, across restarts. */
  idempotencyKey?: string;
  /** Must name an entry of this thread (else conflict, nothing written); when given it must equal `parentId`. */
  expectedParentId?: string;
  /** Only a `version_change` entry sets it: the version in effect from it down. Others inherit their parent's. */
  agentVersion?: number;
  /** A user message's attachments: metadata only, the bytes stay in object storage. */
  attachments?: AttachmentRef[];
  /**
   * The new entry becomes the selected leaf (the thread continues below it: a user message, a reply, a run's
   * action). Without it, an append right below the selected leaf moves the selection down and any other leaves it.
   */
  select?: boolean;
  /**
   * With `select`: the caller found, in this same synchronous stretch (`selection`), that no stored entry is marked
   * selected, so the newest entry is the selection and the new one becomes it with nothing written.
   */
  unmarked?: boolean;
}

export interface AppendOutcome {
  entry: Entry;
  /** True when an earlier append with the same key at the same position was returned instead of writing. */
  deduplicated: boolean;
}

export interface EntryPage {
  items: Entry[];
  nextCursor?: string;
}

export interface EntryStoreOptions {
  now: () => number;
  /** Secret values to redact from every body before it is stored. */
  secrets?: readonly string[];
  newId?: () => string;
}

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 1000;

const appendInputSchema = z.object({
  id: z.string().min(1).max(128).optional(),
  parentId: z.string().min(1).max(128).nullable(),
  kind: z.enum(ENTRY_KINDS),
  role: z.enum(ENTRY_ROLES).optional(),
  runId: z.string().min(1).max(128).optional(),
  body: z.unknown(),
  idempotencyKey: z.string().min(1).max(256).optional(),
  expectedParentId: z.string().min(1).max(128).optional(),
  agentVersion: z.number().int().positive().optional(),
  attachments: z.array(attachmentRef).min(1).optional(),
  select: z.boolean().optional(),
  unmarked: z.boolean().optional(),
});

/** Decodes a branch cursor (the seq of the last entry already returned); null when it is not one of ours. */
function decodeCursor(cursor: string): number | null {
  if (!/^[1-9][0-9]{0,14}$/.test(cursor)) return null;
  return Number(cursor);
}

export class EntryStore {
  readonly #storage: DurableObjectStorage;
  readonly #now: () => number;
  readonly #redactor: Redactor;
  readonly #newId: () => string;

  constructor(storage: DurableObjectStorage, options: EntryStoreOptions) {
    this.#storage = storage;
    this.#now = options.now;
    this.#redactor = createRedactor(options.secrets ?? []);
    this.#newId = options.newId ?? (() => crypto.randomUUID());
  }

  /**
   * Appends one entry, its idempotency row and its outbox row in one transaction. Checks, in order: a known
   * (idempotencyKey, expectedParentId) returns the original entry and writes nothing; a missing expected parent,
   * a missing parent or a duplicate id is a conflict with nothing written.
   */
  append(input: AppendInput): Result<AppendOutcome> {
    const parsed = appendInputSchema.safeParse(input);
    if (!parsed.success) {
      return fail("bad_request", "Invalid entry.", {
        fields: parsed.error.issues.map((i) => i.path.join(".")),
      });
    }
    const a = parsed.data;
    if (a.expectedParentId !== undefined && a.expectedParentId !== a.parentId) {
      return fail("bad_request", "expectedParentId must equal parentId.");
    }
    const body = this.#redactor.value(a.body);
    const bodyJson = JSON.stringify(body);
    const sql = this.#storage.sql;

    return this.#storage.transactionSync((): Result<AppendOutcome> => {
      const position = a.expectedParentId ?? "";
      if (a.idempotencyKey !== undefined) {
        const prior = sql
          .exec(
            "SELECT entry_id FROM append_idempotency WHERE key = ? AND expected_parent_id = ?",
            a.idempotencyKey,
            position,
          )
          .toArray()[0];
        const priorEntry = typeof prior?.entry_id === "string" ? this.get(prior.entry_id) : null;
        if (priorEntry) {
          if (a.select === true && this.latestLeaf()?.id !== priorEntry.id) {
            writeMeta(this.#storage, ACTIVE_LEAF_KEY, priorEntry.id);
          }
          return ok({ entry: priorEntry, deduplicated: true });
        }
      }
      const id = a.id ?? this.#newId();
      const createdAt = this.#now();
      const values = [
        id,
        a.parentId,
        a.kind,
        a.role ?? null,
        a.runId ?? null,
        createdAt,
        bodyJson,
        a.agentVersion ?? null,
        ...(a.attachments === undefined ? [] : [JSON.stringify(a.attachments)]),
      ];
      const inserted = sql
        .exec(insertEntrySql(a.parentId !== null, a.attachments !== undefined), ...values)
        .toArray()[0];
      if (inserted === undefined) {
        // An expected parent equals the parent (checked above), so one lookup answers both.
        if (a.parentId !== null && ancestryBelow(this.#storage, a.parentId) === null) {
          return a.expectedParentId !== undefined
            ? fail("conflict", "The expected parent entry is not in this thread.", {
                expectedParentId: a.expectedParentId,
              })
            : fail("conflict", "The parent entry is not in this thread.", { parentId: a.parentId });
        }
        return fail("conflict", "An entry with this id already exists.", { id });
      }
      const entry: Entry = {
        seq: z.number().int().parse(inserted.seq),
        id,
        parentId: a.parentId,
        kind: a.kind,
        role: a.role ?? null,
        runId: a.runId ?? null,
        createdAt,
        body,
        agentVersion: integerOrNull(inserted.agent_version),
        ...(a.attachments !== undefined ? { attachments: a.attachments } : {}),
      };
      if (a.idempotencyKey !== undefined) {
        appendKeyWritten(this.#storage);
        // An upsert: a key whose entry was erased (retention) is taken over by the new entry.
        sql.exec(
          `INSERT INTO append_idempotency (key, expected_parent_id, entry_id) VALUES (?, ?, ?)
           ON CONFLICT (key, expected_parent_id) DO UPDATE SET entry_id = excluded.entry_id`,
          a.idempotencyKey,
          position,
          id,
        );
      }
      if (a.select === true && a.unmarked === true) {
        // Nothing is marked: the newest entry, this one, is the selection.
      } else if (a.select === true) {
        // Unset, the selection is the newest entry, which this one now is; set, it moves here.
        updateMeta(this.#storage, ACTIVE_LEAF_KEY, id);
      } else if (a.parentId !== null) {
        // The selected branch follows its own conversation: appending right below the active leaf moves it down.
        replaceMeta(this.#storage, ACTIVE_LEAF_KEY, a.parentId, id);
      }
      return ok({ entry, deduplicated: false });
    });
  }

  get(id: string): Entry | null {
    return firstEntry(this.#storage.sql.exec(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE id = ?`, id));
  }

  /**
   * One branch, root → leaf, paged by keyset: the cursor is the seq of the last entry returned, and a page holds the
   * path's entries above it. A page reads O(log n) rows to find where it starts on the path (entry-ancestry.ts) plus
   * its own rows; the rest of the branch is never read.
   */
  branch(leafId: string, page: { cursor?: string; limit?: number } = {}): Result<EntryPage> {
    const limit = page.limit ?? DEFAULT_PAGE_LIMIT;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
      return fail("bad_request", `limit must be an integer from 1 to ${MAX_PAGE_LIMIT}.`);
    }
    let after: number | null = null;
    if (page.cursor !== undefined) {
      after = decodeCursor(page.cursor);
      if (after === null) return fail("bad_request", "Invalid cursor.");
    }
    const leaf = entryPosition(this.#storage, leafId);
    if (leaf === null) return fail("not_found", "Entry not found.");
    const first = after === null ? 0 : this.#firstDepthAbove(leafId, leaf, after);
    if (first > leaf.depth) return ok({ items: [] });
    const last = Math.min(first + limit - 1, leaf.depth);
    // From the leaf to the page's deepest entry by jumps, then up its parents to the page's first entry.
    const items = entriesFrom(
      this.#storage.sql.exec(
        `WITH RECURSIVE ${ANCESTOR_WALK},
         page(seq, parent_id) AS (
           SELECT e.seq, e.parent_id FROM walk JOIN entries e ON e.id = walk.id WHERE walk.depth = ?2
           UNION ALL
           SELECT e.seq, e.parent_id FROM page p JOIN entries e ON e.id = p.parent_id WHERE e.depth >= ?3
         )
         SELECT ${ENTRY_COLUMNS} FROM entries WHERE seq IN (SELECT seq FROM page) ORDER BY seq`,
        leafId,
        last,
        first,
      ),
    );
    const end = items[items.length - 1];
    return ok(last < leaf.depth && end ? { items, nextCursor: String(end.seq) } : { items });
  }

  /**
   * Up to `limit` entries of the path ending at `fromId`, newest first (`fromId` itself first): how a reader that
   * needs only the recent end of a branch reads it. Empty when `fromId` is not in this thread.
   */
  lineage(fromId: string, limit: number): Entry[] {
    return entriesFrom(
      this.#storage.sql.exec(
        `WITH RECURSIVE up(seq, parent_id, n) AS (
           SELECT seq, parent_id, 1 FROM entries WHERE id = ?1
           UNION ALL
           SELECT e.seq, e.parent_id, up.n + 1 FROM up JOIN entries e ON e.id = up.parent_id WHERE up.n < ?2
         )
         SELECT ${ENTRY_COLUMNS} FROM entries WHERE seq IN (SELECT seq FROM up) ORDER BY seq DESC`,
        fromId,
        Math.max(1, Math.trunc(limit)),
      ),
    );
  }

  /** The newest entry a run wrote (its approvals and client tool requests), or null when it wrote none yet. */
  lastOfRun(runId: string): Entry | null {
    return firstEntry(
      this.#storage.sql.exec(
        `SELECT ${ENTRY_COLUMNS} FROM entries WHERE run_id = ? ORDER BY seq DESC LIMIT 1`,
        runId,
      ),
    );
  }

  /**
   * The explicitly selected leaf if one is set, else the newest entry without children, which is the newest entry:
   * a child is always newer than its parent. Null for an empty thread.
   */
  latestLeaf(): Entry | null {
    return this.selection().leaf;
  }

  /** `latestLeaf`, and whether it is the marked one (else nothing stored is marked and it is the newest entry). */
  selection(): { leaf: Entry | null; marked: boolean } {
    // One statement (a turn asks several times): the selected leaf when it is set and still stored, else the newest.
    const rows = this.#storage.sql
      .exec(
        `SELECT ${ENTRY_COLUMNS}, rank FROM (
           SELECT ${ENTRY_COLUMNS}, 0 AS rank FROM entries
           WHERE id = (SELECT value FROM meta WHERE key = ?)
           UNION ALL
           SELECT * FROM (SELECT ${ENTRY_COLUMNS}, 1 AS rank FROM entries ORDER BY seq DESC LIMIT 1)
         ) ORDER BY rank LIMIT 1`,
        ACTIVE_LEAF_KEY,
      )
      .raw();
    for (const row of rows) return { leaf: entryFromRow(row.slice(0, 10)), marked: row[10] === 0 };
    return { leaf: null, marked: false };
  }

  /** Selects the branch the thread continues on (`null` returns to "newest leaf"). */
  setActiveLeaf(id: string | null): Result<Entry | null> {
    if (id === null) {
      deleteMeta(this.#storage, ACTIVE_LEAF_KEY);
      return ok(null);
    }
    const entry = this.get(id);
    if (!entry) return fail("not_found", "Entry not found.");
    writeMeta(this.#storage, ACTIVE_LEAF_KEY, id);
    return ok(entry);
  }

  /** The entries right below `id`, oldest first; a scan (no parent index: nothing on a turn's path lists children). */
  children(id: string): Entry[] {
    return entriesFrom(
      this.#storage.sql.exec(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE parent_id = ? ORDER BY seq`, id),
    );
  }

  count(): number {
    const row = this.#storage.sql.exec("SELECT COUNT(*) AS n FROM entries").one();
    return z.number().int().parse(row.n);
  }

  /** Every entry in insertion order, after a seq (exclusive). */
  all(page: { afterSeq?: number; limit?: number } = {}): Entry[] {
    const limit = Math.min(Math.max(Math.trunc(page.limit ?? MAX_PAGE_LIMIT), 1), MAX_PAGE_LIMIT);
    return entriesFrom(
      this.#storage.sql.exec(
        `SELECT ${ENTRY_COLUMNS} FROM entries WHERE seq > ? ORDER BY seq LIMIT ?`,
        page.afterSeq ?? 0,
        limit,
      ),
    );
  }

  /**
   * The depth on the path to `leaf` where entries with a seq above `after` begin (past the leaf when none does).
   * A cursor is normally the last entry of the previous page, on this path; any other seq is found by bisection,
   * since seq grows with depth along a path.
   */
  #firstDepthAbove(leafId: string, leaf: { seq: number; depth: number }, after: number): number {
    if (leaf.seq <= after) return leaf.depth + 1;
    const row = this.#storage.sql.exec("SELECT depth FROM entries WHERE seq = ?", after).raw().next();
    const depth = row.done ? null : row.value[0];
    if (
      typeof depth === "number" &&
      depth < leaf.depth &&
      ancestorSeqAt(this.#storage, leafId, depth) === after
    ) {
      return depth + 1;
    }
    let low = 0;
    let high = leaf.depth;
    while (low < high) {
      const middle = Math.floor((low + high) / 2);
      const seq = ancestorSeqAt(this.#storage, leafId, middle);
      if (seq !== null && seq > after) high = middle;
      else low = middle + 1;
    }
    return low;
  }
}
