// Zero retention (docs/privacy.md) in the thread object: after the thread's last activity plus `idleMinutes`, every entry's
// text and every tool payload is blanked in place. Entry ids, the tree, runs, usage and counts stay; a purged message
// keeps `{text: "", purged: true}` (and its status) so history shows it as purged. The thread's context variables go
// too (here, and in D1's registry row by the thread object once this commits), and so do its attachments (the rows
// here, the objects no other live thread uses by the tenant's ledger once this commits).
import { dropAllAttachments } from "./attachment-release";
import { blankThreadContext } from "./context-store";

const MINUTE_MS = 60_000;

/** Epoch ms of the thread's last activity: its newest entry, run start or end, feedback, or upload. */
export function lastActivityAt(storage: DurableObjectStorage): number | null {
  const row = storage.sql
    .exec(
      `SELECT MAX(
         COALESCE((SELECT MAX(created_at) FROM entries), 0),
         COALESCE((SELECT MAX(COALESCE(ended_at, started_at, created_at)) FROM runs), 0),
         COALESCE((SELECT MAX(updated_at) FROM feedback), 0),
         COALESCE((SELECT MAX(created_at) FROM attachments), 0)) AS at`,
    )
    .one();
  const at = Number(row.at);
  return at > 0 ? at : null;
}

/** Whether a run is queued or running (a live conversation is never purged under it). */
function busy(storage: DurableObjectStorage): boolean {
  const live = storage.sql.exec("SELECT COUNT(*) AS n FROM runs WHERE status IN ('queued', 'running')").one();
  const queued = storage.sql.exec("SELECT COUNT(*) AS n FROM queued_turns").one();
  return Number(live.n) > 0 || Number(queued.n) > 0;
}

export type PurgeOutcome = { purged: number } | { retryInMs: number };

/**
 * Purges the thread's text if it has been idle for `idleMinutes` at `now`; otherwise says when to look again.
 * Idempotent: entries already purged are left as they are.
 */
export function purgeIdleText(storage: DurableObjectStorage, idleMinutes: number, now: number): PurgeOutcome {
  const idleMs = idleMinutes * MINUTE_MS;
  if (busy(storage)) return { retryInMs: idleMs };
  const last = lastActivityAt(storage);
  if (last !== null && now - last < idleMs) return { retryInMs: idleMs - (now - last) };
  return { purged: purgeText(storage) };
}

/** Blanks all text in the thread's storage, in one transaction; returns how many entries changed. */
export function purgeText(storage: DurableObjectStorage): number {
  const sql = storage.sql;
  return storage.transactionSync(() => {
    const messages = sql
      .exec(
        `UPDATE entries SET body_json = json_object('text', '', 'purged', json('true'))
         WHERE kind = 'message' AND json_extract(body_json, '$.purged') IS NULL
           AND json_extract(body_json, '$.status') IS NULL RETURNING seq`,
      )
      .toArray().length;
    const withStatus = sql
      .exec(
        `UPDATE entries SET body_json = json_object('text', '', 'purged', json('true'),
           'status', json_extract(body_json, '$.status'))
         WHERE kind = 'message' AND json_extract(body_json, '$.purged') IS NULL
           AND json_extract(body_json, '$.status') IS NOT NULL RETURNING seq`,
      )
      .toArray().length;
    // Free-form kinds carry text too; events (handoff, version changes) and model changes are structured facts.
    const others = sql
      .exec(
        `UPDATE entries SET body_json = json_object('purged', json('true'))
         WHERE kind IN ('label', 'summary', 'custom') AND json_extract(body_json, '$.purged') IS NULL
         RETURNING seq`,
      )
      .toArray().length;
    // A settled approval or client tool request keeps what it was (tool, who, when, the decision) without its input
    // or reason; a pending one keeps its input: its run still needs it to go on (docs/privacy.md).
    const actions = sql
      .exec(
        `UPDATE entries SET body_json = json_set(
           CASE kind
             WHEN 'approval_request' THEN json_set(body_json, '$.approval.input', json('{}'))
             WHEN 'tool_request' THEN json_set(body_json, '$.toolRequest.input', json('{}'))
             ELSE json_set(body_json, '$.decision.reason', NULL)
           END, '$.purged', json('true'))
         WHERE kind IN ('approval_request', 'approval_decision', 'tool_request')
           AND json_extract(body_json, '$.purged') IS NULL
           AND run_id NOT IN (SELECT run_id FROM run_actions WHERE status = 'pending')
         RETURNING seq`,
      )
      .toArray().length;
    sql.exec(
      `UPDATE run_actions SET input_json = '{}', output_json = NULL, reason = NULL
       WHERE status <> 'pending' AND run_id NOT IN (SELECT run_id FROM run_actions WHERE status = 'pending')`,
    );
    sql.exec(
      "UPDATE tool_calls SET input_json = '{}', output_json = NULL WHERE input_json <> '{}' OR output_json IS NOT NULL",
    );
    sql.exec("UPDATE feedback SET comment = NULL WHERE comment IS NOT NULL");
    sql.exec("DELETE FROM run_chunks");
    sql.exec(
      "UPDATE thread_events SET data_json = json_remove(data_json, '$.comment', '$.reason', '$.input')",
    );
    blankThreadContext(storage);
    // The files go too: rows here, objects by the tenant's ledger right after (docs/privacy.md#attachments).
    dropAllAttachments(storage);
    return messages + withStatus + others + actions;
  });
}

/** Whether the thread has ever purged (for tests and diagnostics). */
export function purgedEntryCount(storage: DurableObjectStorage): number {
  return Number(
    storage.sql.exec("SELECT COUNT(*) AS n FROM entries WHERE json_extract(body_json, '$.purged') = 1").one()
      .n,
  );
}
