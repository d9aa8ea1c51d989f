// Thread schema 19: runs that wait for a person (docs/tools.md#approvals) — the status, the entry kinds, and the
// tables of their actions and stored steps. Its own file: the migration list would pass the size a file may have.
// Typed where it joins the list (`THREAD_MIGRATIONS`), so this file needs nothing from it.
export const APPROVALS_MIGRATION = {
  version: 19,
  up: [
    // A run may wait for a person (docs/tools.md#approvals): `requires_action` joins the statuses the table admits.
    `CREATE TABLE runs_v19 (
        id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued','running','requires_action','succeeded','failed','aborted')),
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
        first_delta_ms INTEGER,
        later_input_digests_json TEXT
      ) WITHOUT ROWID`,
    `INSERT INTO runs_v19 (id, seq, status, idempotency_key, user_entry_id, assistant_entry_id, parent_entry_id, created_at, started_at, ended_at, abort_reason, error_code, error_message, error_reason, version_id, revision, input_digest, prompt_builder, artifact_digest, context_version, first_delta_ms, later_input_digests_json) SELECT id, seq, status, idempotency_key, user_entry_id, assistant_entry_id, parent_entry_id, created_at, started_at, ended_at, abort_reason, error_code, error_message, error_reason, version_id, revision, input_digest, prompt_builder, artifact_digest, context_version, first_delta_ms, later_input_digests_json FROM runs`,
    `DROP TABLE runs`,
    `ALTER TABLE runs_v19 RENAME TO runs`,
    // The entries a waiting run writes: its approval requests and decisions and its client tool requests (widening a
    // CHECK means copying the tree once, as version 10 did).
    `CREATE TABLE entries_v19 (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        parent_id TEXT,
        kind TEXT NOT NULL CHECK (kind IN ('message','event','model_change','label','summary','custom','version_change',
          'approval_request','approval_decision','tool_request')),
        role TEXT,
        run_id TEXT,
        created_at INTEGER NOT NULL,
        body_json TEXT NOT NULL,
        depth INTEGER NOT NULL DEFAULT 0,
        jump_id TEXT,
        agent_version INTEGER
      )`,
    `INSERT INTO entries_v19 (seq, id, parent_id, kind, role, run_id, created_at, body_json, depth, jump_id,
         agent_version)
       SELECT seq, id, parent_id, kind, role, run_id, created_at, body_json, depth, jump_id, agent_version FROM entries`,
    `DROP TABLE entries`,
    `ALTER TABLE entries_v19 RENAME TO entries`,
    // One row per approval and per client tool request of a run (docs/tools.md#approvals): what was asked, what it
    // is bound to (the call's input digest and the artifact's), and how it was settled. `kind` 'approval' rows are
    // keyed by their approvalId, 'client' rows by an id of their own; both name the model's tool call.
    `CREATE TABLE run_actions (
        id TEXT PRIMARY KEY,
        run_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('approval','client')),
        tool_call_id TEXT NOT NULL,
        name TEXT NOT NULL,
        input_json TEXT NOT NULL,
        input_digest TEXT NOT NULL,
        artifact_digest TEXT NOT NULL,
        approver TEXT,
        on_timeout TEXT,
        title TEXT,
        description TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending','approved','denied','expired','cancelled','answered')),
        decided_by TEXT,
        reason TEXT,
        decided_at INTEGER,
        output_json TEXT,
        is_error INTEGER NOT NULL DEFAULT 0,
        revision INTEGER NOT NULL DEFAULT 1
      ) WITHOUT ROWID`,
    `CREATE INDEX run_actions_by_run ON run_actions (run_id, created_at)`,
    `CREATE INDEX run_actions_pending ON run_actions (status, expires_at)`,
    // A waiting run's model calls so far (the step it waits in last, its calls' answers filled in as they come):
    // what the run continues from, in any later instance of the object.
    `CREATE TABLE run_parks (
        run_id TEXT PRIMARY KEY,
        steps_json TEXT NOT NULL,
        subject TEXT,
        created_at INTEGER NOT NULL
      ) WITHOUT ROWID`,
  ],
};
