// The drain's reads of the thread's own state besides the records it sends: what is left after it, and the facts
// the D1 session row is computed from, each in one statement (docs/decisions.md, "Statements per turn").
import { z } from "zod";
import { ACTIVE_LEAF_KEY } from "../thread/thread-meta";
import { sessionFactsSchema } from "./projection-rows";

const backlogSchema = z.object({ rows: z.number(), entries: z.number(), due: z.number().nullable() });

/**
 * What is left after a drain, in one statement: outbox rows and entries above the watermark, and in how many
 * milliseconds to drain again (0 when something is due now; absent when nothing is left).
 */
export function backlog(
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

/**
 * The session facts the D1 session row is computed from, read in one statement: with the leaf as
 * `EntryStore.latestLeaf` finds it (the selected leaf when it is set and still stored, else the newest entry).
 */
export function readSessionFacts(storage: DurableObjectStorage) {
  return sessionFactsSchema.parse(
    storage.sql
      .exec(
        `SELECT
           leaf.id AS leaf_id,
           leaf.agent_version AS leaf_agent_version,
           (SELECT COUNT(*) FROM entries WHERE kind = 'message') AS message_count,
           (SELECT MAX(created_at) FROM entries WHERE kind = 'message') AS last_message_at,
           (SELECT MAX(created_at) FROM entries) AS last_entry_at,
           (SELECT MAX(COALESCE(ended_at, started_at, created_at)) FROM runs) AS last_run_at,
           (SELECT json_extract(body_json, '$.text') FROM entries WHERE kind = 'message' AND role = 'user'
            ORDER BY seq LIMIT 1) AS first_user_text,
           last.id AS last_run_id,
           last.status AS last_run_status,
           (SELECT value FROM meta WHERE key = 'handoff') AS handoff_json
         FROM (SELECT 1) LEFT JOIN (SELECT id, status FROM runs ORDER BY created_at DESC, seq DESC LIMIT 1) last
         LEFT JOIN (
           SELECT id, agent_version FROM (
             SELECT id, agent_version, 0 AS rank FROM entries WHERE id = (SELECT value FROM meta WHERE key = ?)
             UNION ALL
             SELECT * FROM (SELECT id, agent_version, 1 AS rank FROM entries ORDER BY seq DESC LIMIT 1)
           ) ORDER BY rank LIMIT 1
         ) leaf`,
        ACTIVE_LEAF_KEY,
      )
      .one(),
  );
}
