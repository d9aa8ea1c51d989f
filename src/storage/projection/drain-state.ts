// The drain's reads of the thread's own state besides the records it sends: what is left after it, and the facts
// the D1 session row is computed from, each in one statement (docs/decisions.md, "Statements per turn").
import { z } from "zod";
import type { Entry } from "../thread/entry-store";
import { ACTIVE_LEAF_KEY } from "../thread/thread-meta";
import { entryDeletions } from "../thread/thread-retention";
import { PROJECTED_ENTRY_SEQ_KEY, projectedEntrySeq } from "./outbox";
import { type SessionFacts, sessionFactsSchema } from "./projection-rows";

const backlogSchema = z.object({ rows: z.number(), entries: z.number(), due: z.number().nullable() });
type BacklogCounts = z.infer<typeof backlogSchema>;

/** The backlog's three figures as subqueries, the entries counted above `?{watermark}`. */
const backlogColumns = (watermark: string) => `(SELECT COUNT(*) FROM outbox) AS rows,
  (SELECT COUNT(*) FROM entries WHERE seq > ${watermark}) AS entries,
  (SELECT MIN(COALESCE(next_attempt_at, 0)) FROM outbox) AS due`;

function leftOf(left: BacklogCounts, now: number): { remaining: number; retryInMs?: number } {
  const remaining = left.rows + left.entries;
  if (remaining === 0) return { remaining };
  return { remaining, retryInMs: left.entries > 0 ? 0 : Math.max(0, (left.due ?? 0) - now) };
}

/**
 * What is left after a drain, in one statement: outbox rows and entries above the watermark, and in how many
 * milliseconds to drain again (0 when something is due now; absent when nothing is left).
 */
export function backlog(
  storage: DurableObjectStorage,
  entryWatermark: number,
  now: number,
): { remaining: number; retryInMs?: number } {
  const left = storage.sql.exec(`SELECT ${backlogColumns("?")}`, entryWatermark).one();
  return leftOf(backlogSchema.parse(left), now);
}

/**
 * After a drain carried D1 from entry `from` to `through`, inside its settling transaction: moves the watermark there
 * unless retention lowered it meanwhile (it deleted the newest entries, freeing their seqs; then it stays lowered and
 * the next drain sends what survives above it again), and reads what is left (as `backlog`) in the same statement.
 */
export function advanceWatermark(
  storage: DurableObjectStorage,
  from: number,
  through: number,
  now: number,
): { watermark: number; remaining: number; retryInMs?: number } {
  if (through > from) {
    const moved = storage.sql
      .exec(
        `INSERT INTO meta (key, value) SELECT ?1, ?3 WHERE ?2 = 0 OR EXISTS (SELECT 1 FROM meta WHERE key = ?1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE CAST(meta.value AS INTEGER) = ?2
         RETURNING ${backlogColumns("?4")}`,
        PROJECTED_ENTRY_SEQ_KEY,
        from,
        String(through),
        through,
      )
      .toArray()[0];
    if (moved !== undefined) return { watermark: through, ...leftOf(backlogSchema.parse(moved), now) };
  }
  const watermark = projectedEntrySeq(storage);
  return { watermark, ...backlog(storage, watermark, now) };
}

/** The session row's figures over entries, as counted through an entry watermark (see `readSessionFacts`). */
interface EntryFigures {
  through: number;
  deletions: number;
  messageCount: number;
  lastMessageAt: number | null;
  lastEntryAt: number | null;
}

/** Per object: the figures the last drain sent, counted through the watermark it moved to. */
const counted = new WeakMap<DurableObjectStorage, EntryFigures>();

const later = (a: number | null, b: number | null): number | null =>
  a === null ? b : b === null ? a : Math.max(a, b);

/**
 * The session facts the D1 session row is computed from, read in one statement, for a drain carrying entries from
 * `from` to `through` (`drained`: the entries in between): with the leaf as `EntryStore.latestLeaf` finds it (the
 * selected leaf when it is set and still stored, else the newest entry). The entry figures (message count, last
 * message, last entry) describe the entries through `through`; they are counted by a scan only when the last
 * drain's figures do not end at `from` or entries were deleted since (retention), and are otherwise the last ones
 * advanced by `drained` (docs/decisions.md "Statements per turn": no per-drain message count scan).
 */
export function readSessionFacts(
  storage: DurableObjectStorage,
  from: number,
  through: number,
  drained: readonly Entry[],
): SessionFacts {
  const deletions = entryDeletions(storage);
  const known = counted.get(storage);
  const fresh = known !== undefined && known.through === from && known.deletions === deletions;
  const facts = sessionFactsSchema.parse(
    storage.sql
      .exec(
        `SELECT
           leaf.id AS leaf_id,
           leaf.agent_version AS leaf_agent_version,
           ${
             fresh
               ? "0 AS message_count, NULL AS last_message_at, NULL AS last_entry_at,"
               : `(SELECT COUNT(*) FROM entries WHERE kind = 'message' AND seq <= ?2) AS message_count,
                  (SELECT MAX(created_at) FROM entries WHERE kind = 'message' AND seq <= ?2) AS last_message_at,
                  (SELECT MAX(created_at) FROM entries WHERE seq <= ?2) AS last_entry_at,`
           }
           (SELECT MAX(COALESCE(ended_at, started_at, created_at)) FROM runs) AS last_run_at,
           (SELECT json_extract(body_json, '$.text') FROM entries WHERE kind = 'message' AND role = 'user'
            ORDER BY seq LIMIT 1) AS first_user_text,
           last.id AS last_run_id,
           last.status AS last_run_status,
           (SELECT value FROM meta WHERE key = 'handoff') AS handoff_json
         FROM (SELECT 1) LEFT JOIN (SELECT id, status FROM runs ORDER BY created_at DESC, seq DESC LIMIT 1) last
         LEFT JOIN (
           SELECT id, agent_version FROM (
             SELECT id, agent_version, 0 AS rank FROM entries WHERE id = (SELECT value FROM meta WHERE key = ?1)
             UNION ALL
             SELECT * FROM (SELECT id, agent_version, 1 AS rank FROM entries ORDER BY seq DESC LIMIT 1)
           ) ORDER BY rank LIMIT 1
         ) leaf`,
        ACTIVE_LEAF_KEY,
        ...(fresh ? [] : [through]),
      )
      .one(),
  );
  let figures: EntryFigures = {
    through,
    deletions,
    messageCount: facts.message_count,
    lastMessageAt: facts.last_message_at,
    lastEntryAt: facts.last_entry_at,
  };
  if (fresh) {
    figures = { ...known, through };
    for (const entry of drained) {
      figures.lastEntryAt = later(figures.lastEntryAt, entry.createdAt);
      if (entry.kind !== "message") continue;
      figures.messageCount += 1;
      figures.lastMessageAt = later(figures.lastMessageAt, entry.createdAt);
    }
  }
  // Kept under the watermark it ends at: only a drain that moved the watermark there continues from it.
  counted.set(storage, figures);
  return {
    ...facts,
    message_count: figures.messageCount,
    last_message_at: figures.lastMessageAt,
    last_entry_at: figures.lastEntryAt,
  };
}
