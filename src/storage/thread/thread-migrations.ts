// The thread object's SQLite schema as an append-only list of migrations (src/storage/thread/thread-schema.ts applies
// them on start with a stored version).
//
// Rules: never edit or reorder a released migration; add a new one with the next version number. Table names never
// start with `cf_` (the agents SDK owns `cf_agents_*` and `cf_agent_*` in the same database). When this file nears
// 450 lines, continue the list in a second file and concatenate the two in thread-schema.ts.

import { APPROVALS_MIGRATION } from "./approvals-migration";
import { ATTACHMENTS_MIGRATION } from "./attachments-migration";
import { readThreadContext } from "./context-store";
import { rebuildAncestry } from "./entry-ancestry";

export interface ThreadMigration {
  version: number;
  up: readonly string[];
  /** Runs after `up`, in the same transaction: a backfill that SQL alone cannot express. */
  backfill?: (storage: DurableObjectStorage) => void;
}

export const THREAD_MIGRATIONS: readonly ThreadMigration[] = [
  {
    version: 1,
    up: [
      // Key/value facts about this thread's storage: `schema_version`, the explicit `active_leaf`, counters.
      `CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      )`,
      // The conversation tree, append-only. `seq` is the insertion order (a child always has a larger seq than its
      // parent, so a root→leaf path is ascending seq); `id` is the public entry id; `body_json` is already redacted.
      `CREATE TABLE entries (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        parent_id TEXT,
        kind TEXT NOT NULL CHECK (kind IN ('message','event','model_change','label','summary','custom')),
        role TEXT,
        run_id TEXT,
        created_at INTEGER NOT NULL,
        body_json TEXT NOT NULL
      )`,
      // Children lookups and the parent walk of branch reads.
      `CREATE INDEX entries_parent_id ON entries(parent_id)`,
      // Append deduplication per (idempotency key, expected parent); '' stands for "no expected parent".
      `CREATE TABLE append_idempotency (
        key TEXT NOT NULL,
        expected_parent_id TEXT NOT NULL,
        entry_id TEXT NOT NULL,
        PRIMARY KEY (key, expected_parent_id)
      )`,
      // One row per model run. `revision` grows with every change so the D1 projection can ignore stale upserts.
      `CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        status TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed','aborted')),
        idempotency_key TEXT UNIQUE,
        user_entry_id TEXT,
        assistant_entry_id TEXT,
        parent_entry_id TEXT,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        ended_at INTEGER,
        abort_reason TEXT,
        error_code TEXT,
        error_message TEXT,
        version_id TEXT,
        revision INTEGER NOT NULL DEFAULT 1
      )`,
      // The run's event ledger; `seq` strictly increases per run.
      `CREATE TABLE run_events (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        data_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, seq)
      )`,
      // Streamed deltas packed several per row, kept only while the run is live so a reconnecting client can resume;
      // deleted in the transaction that ends the run.
      `CREATE TABLE run_chunks (
        run_id TEXT NOT NULL,
        first_seq INTEGER NOT NULL,
        last_seq INTEGER NOT NULL,
        text_json TEXT NOT NULL,
        PRIMARY KEY (run_id, first_seq)
      )`,
      // Tool invocations of a run, with redacted input and output.
      `CREATE TABLE tool_calls (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        name TEXT NOT NULL,
        input_json TEXT NOT NULL,
        output_json TEXT,
        status TEXT NOT NULL CHECK (status IN ('started','finished','error','blocked')),
        created_at INTEGER NOT NULL,
        ended_at INTEGER,
        revision INTEGER NOT NULL DEFAULT 1
      )`,
      // Token usage per provider turn; run totals are sums over a run's turns, never stored twice.
      `CREATE TABLE usage (
        run_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, turn)
      )`,
      // The thread's binding to one exact agent version, written once on the first turn (a single row).
      `CREATE TABLE pin (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        tenant_id TEXT NOT NULL,
        environment TEXT NOT NULL,
        agent_id TEXT NOT NULL,
        thread_id TEXT NOT NULL,
        version_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        digest TEXT NOT NULL,
        artifact_json TEXT NOT NULL,
        bound_at INTEGER NOT NULL
      )`,
      // Changes waiting to be projected into D1, written in the same transaction as the change itself.
      `CREATE TABLE outbox (
        seq INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        ref_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        payload_json TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER
      )`,
    ],
  },
  {
    version: 2,
    up: [
      // Listing a run's entries and a run's tool calls without scanning the thread.
      `CREATE INDEX entries_run_id ON entries(run_id) WHERE run_id IS NOT NULL`,
      `CREATE INDEX tool_calls_run_id ON tool_calls(run_id, created_at)`,
      // The drain picks due rows first.
      `CREATE INDEX outbox_due ON outbox(next_attempt_at, seq)`,
    ],
  },
  {
    version: 3,
    up: [
      // The outbox is drained after every turn and holds a handful of rows: an index on it only doubled the rows
      // written per change (measured by `npm run bench`, B4).
      `DROP INDEX IF EXISTS outbox_due`,
    ],
  },
  {
    version: 4,
    up: [
      // Entries are projected by watermark, not through the outbox: D1 lacks exactly the entries above
      // `projected_entry_seq`. Storage written by older builds starts below its first entry still queued (or at its
      // newest entry when none is), and its queued entry rows go: the watermark covers them.
      `INSERT INTO meta (key, value)
       SELECT 'projected_entry_seq', CAST(COALESCE(
         (SELECT MIN(e.seq) - 1 FROM outbox o JOIN entries e ON e.id = o.ref_id WHERE o.kind = 'entry'),
         (SELECT MAX(seq) FROM entries),
         0) AS TEXT)
       WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'projected_entry_seq')`,
      `DELETE FROM outbox WHERE kind = 'entry'`,
      // Only the daily retention pass looked entries up by run; the index cost a row written per reply.
      `DROP INDEX IF EXISTS entries_run_id`,
      // Usage is read by run (its key prefix) or whole: kept in its primary-key tree, a turn is one row, not two.
      `CREATE TABLE usage_by_key (
        run_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        provider TEXT NOT NULL,
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (run_id, turn)
      ) WITHOUT ROWID`,
      `INSERT INTO usage_by_key SELECT run_id, turn, provider, model, input_tokens, output_tokens, created_at FROM usage`,
      `DROP TABLE usage`,
      `ALTER TABLE usage_by_key RENAME TO usage`,
    ],
  },
  {
    version: 5,
    up: [
      // The run-events ledger was never written: a run's audit (what the model was given) lives on the run itself.
      `DROP TABLE IF EXISTS run_events`,
    ],
  },
  {
    version: 6,
    up: [
      // Each entry's place on its path (src/storage/thread/entry-ancestry.ts): its depth below its root and one jump
      // pointer to an ancestor, so a branch page is found in O(log n) reads instead of walking the whole branch.
      `ALTER TABLE entries ADD COLUMN depth INTEGER NOT NULL DEFAULT 0`,
      `ALTER TABLE entries ADD COLUMN jump_id TEXT`,
    ],
    backfill: (storage) => rebuildAncestry(storage, 0),
  },
  {
    version: 7,
    up: [
      // Turns waiting behind a live run (double-texting, docs/protocol.md): the request a queued run was made from, until the
      // run starts and its user message enters the tree, or it ends unstarted. Urgent turns (interrupt, rollback) go
      // first; `ord` keeps arrival order. A row exists exactly while its run is `queued`.
      `CREATE TABLE queued_turns (
        run_id TEXT PRIMARY KEY,
        urgent INTEGER NOT NULL,
        ord INTEGER NOT NULL,
        turn_json TEXT NOT NULL
      )`,
    ],
  },
  {
    version: 8,
    up: [
      // The user's current rating of an assistant entry (docs/protocol.md), latest wins; a cleared one keeps its row with a
      // NULL rating so the projection can clear D1's copy. `revision` grows with every change (the upsert guard).
      `CREATE TABLE feedback (
        entry_id TEXT PRIMARY KEY,
        rating TEXT CHECK (rating IN ('up','down')),
        comment TEXT,
        subject TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        revision INTEGER NOT NULL
      )`,
      // Events for the tenant's backend (docs/webhooks.md: \`message.feedback\`, \`handoff.requested\`), written in the
      // transaction of the change they report, kept for the webhook deliveries to drain.
      `CREATE TABLE thread_events (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        data_json TEXT NOT NULL
      )`,
    ],
  },
  {
    version: 9,
    up: [
      // Why a failed run failed, beside its code (docs/protocol.md, "Errors"): a provider's `auth`, `context_length`, ….
      `ALTER TABLE runs ADD COLUMN error_reason TEXT`,
    ],
  },
  {
    version: 10,
    up: [
      // Per-thread upgrades (docs/api.md): a `version_change` entry moves the turns below it to another version of the
      // agent. SQLite cannot widen a CHECK in place, so the tree is copied once into a table that allows the kind
      // and carries `agent_version`: the version in effect at each entry (the nearest `version_change` at or above
      // it, inherited from the parent on append; NULL = the pin's).
      `CREATE TABLE entries_v10 (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        parent_id TEXT,
        kind TEXT NOT NULL CHECK (kind IN ('message','event','model_change','label','summary','custom','version_change')),
        role TEXT,
        run_id TEXT,
        created_at INTEGER NOT NULL,
        body_json TEXT NOT NULL,
        depth INTEGER NOT NULL DEFAULT 0,
        jump_id TEXT,
        agent_version INTEGER
      )`,
      `INSERT INTO entries_v10 (seq, id, parent_id, kind, role, run_id, created_at, body_json, depth, jump_id)
       SELECT seq, id, parent_id, kind, role, run_id, created_at, body_json, depth, jump_id FROM entries`,
      `DROP TABLE entries`,
      `ALTER TABLE entries_v10 RENAME TO entries`,
      `CREATE INDEX entries_parent_id ON entries(parent_id)`,
      // The versions a thread was upgraded to, each with its artifact, re-verified against its digest on every load
      // exactly like the pin.
      `CREATE TABLE thread_versions (
        version INTEGER PRIMARY KEY,
        version_id TEXT NOT NULL,
        digest TEXT NOT NULL,
        artifact_json TEXT NOT NULL,
        added_at INTEGER NOT NULL
      )`,
    ],
  },
  {
    version: 11,
    up: [
      // A run's audit record (docs/api.md): the digest of its first model call's input, the prompt builder and the
      // artifact that made it, and the context version in force; all NULL for a run that never reached a model.
      `ALTER TABLE runs ADD COLUMN input_digest TEXT`,
      `ALTER TABLE runs ADD COLUMN prompt_builder TEXT`,
      `ALTER TABLE runs ADD COLUMN artifact_digest TEXT`,
      `ALTER TABLE runs ADD COLUMN context_version INTEGER`,
      // Every context the thread adopted, kept so a run's instructions can be rendered again after a later launch
      // replaced them; the one in force is still `meta.launch_context`.
      `CREATE TABLE context_versions (
        version INTEGER PRIMARY KEY,
        variables_json TEXT NOT NULL
      )`,
    ],
    // The statement `keepContextVersion` made when this migration shipped: the columns later migrations add do not
    // exist yet when it runs.
    backfill: (storage) => {
      const held = readThreadContext(storage);
      if (held.version === 0) return;
      storage.sql.exec(
        "INSERT INTO context_versions (version, variables_json) VALUES (?, ?) ON CONFLICT (version) DO NOTHING",
        held.version,
        JSON.stringify(held.variables),
      );
    },
  },
  {
    version: 12,
    up: [
      // From a run's acceptance to its first streamed delta, for per-version analytics (docs/api.md).
      `ALTER TABLE runs ADD COLUMN first_delta_ms INTEGER`,
    ],
  },
  {
    version: 13,
    up: [
      // Event ids are random and never looked up here (the tenant's events object deduplicates them): the UNIQUE
      // index on them cost a DO row per run and another per forwarded event deleted (measured by B4).
      `CREATE TABLE thread_events_by_seq (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL,
        type TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        data_json TEXT NOT NULL
      )`,
      `INSERT INTO thread_events_by_seq (seq, id, type, created_at, data_json)
       SELECT seq, id, type, created_at, data_json FROM thread_events`,
      `DROP TABLE thread_events`,
      `ALTER TABLE thread_events_by_seq RENAME TO thread_events`,
    ],
  },
  {
    // An empty step: versions are one counter (a stored version means "1..n applied"), and the step once reserved
    // here was not needed (a preview thread's mark lives in `meta`, beside its pin).
    version: 14,
    up: [],
  },
  {
    version: 15,
    up: [
      // The parent index served only "the newest entry without children", which is the newest entry (a child is
      // always newer than its parent), and reads that are rare (a children list, retention's re-rooting): it cost
      // a row written per entry, two per turn (measured by B4).
      `DROP INDEX IF EXISTS entries_parent_id`,
    ],
  },
  {
    version: 16,
    up: [
      // Runs kept in their primary-key tree: a rowid table keyed by a text id wrote three rows per new run (the
      // row, the id's index, the idempotency key's index). `seq` is the creation order the rowid gave (ties of
      // `created_at` in insertion order); the idempotency key is found by a scan of the thread's runs, which a send
      // already makes (`active()`), and stays unique because a run is created only after that lookup, in its
      // transaction (measured by B4).
      `CREATE TABLE runs_v16 (
        id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed','aborted')),
        idempotency_key TEXT,
        user_entry_id TEXT,
        assistant_entry_id TEXT,
        parent_entry_id TEXT,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        ended_at INTEGER,
        abort_reason TEXT,
        error_code TEXT,
        error_message TEXT,
        error_reason TEXT,
        version_id TEXT,
        revision INTEGER NOT NULL DEFAULT 1,
        input_digest TEXT,
        prompt_builder TEXT,
        artifact_digest TEXT,
        context_version INTEGER,
        first_delta_ms INTEGER
      ) WITHOUT ROWID`,
      `INSERT INTO runs_v16 (id, seq, status, idempotency_key, user_entry_id, assistant_entry_id, parent_entry_id,
         created_at, started_at, ended_at, abort_reason, error_code, error_message, error_reason, version_id, revision,
         input_digest, prompt_builder, artifact_digest, context_version, first_delta_ms)
       SELECT id, rowid, status, idempotency_key, user_entry_id, assistant_entry_id, parent_entry_id, created_at,
         started_at, ended_at, abort_reason, error_code, error_message, error_reason, version_id, revision,
         input_digest, prompt_builder, artifact_digest, context_version, first_delta_ms
       FROM runs`,
      `DROP TABLE runs`,
      `ALTER TABLE runs_v16 RENAME TO runs`,
    ],
  },
  {
    version: 17,
    up: [
      // The launch's tool policy kept with each context version (docs/tools.md#tool-policy), so a run's tools can be
      // listed again as it ran; NULL: no policy, every tool.
      `ALTER TABLE context_versions ADD COLUMN tool_policy_json TEXT`,
    ],
  },
  {
    version: 18,
    up: [
      // The audit of every model call of a run (docs/storage.md, "Audit record"): the input digests of the calls after
      // the first (a JSON array, step 1 first; null for a digest that failed), beside `input_digest` (step 0). NULL
      // for a run that made one call, and for every run from before this version (each of those has one step).
      `ALTER TABLE runs ADD COLUMN later_input_digests_json TEXT`,
    ],
  },
  APPROVALS_MIGRATION,
  ATTACHMENTS_MIGRATION,
];
