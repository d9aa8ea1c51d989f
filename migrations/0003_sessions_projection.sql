-- Migration number: 0003 	 2026-11-29T23:31:23.795Z
-- The queryable copy of threads (SPEC §5): sessions, messages, runs, tool calls and token usage, projected from
-- each thread object's outbox with version-guarded upserts. Names follow the Vertz entity bridge where the concept
-- matches. Every key and index leads with tenant_id; docs/storage.md says which query uses which index.
-- No foreign keys: rows arrive in any order (retries, reordering) and erasure deletes them explicitly.

-- One row per thread that has projected at least once. `id` is the thread id, `user_id` its subject.
CREATE TABLE agent_sessions (
  tenant_id               TEXT NOT NULL,
  id                      TEXT NOT NULL,
  agent_id                TEXT NOT NULL,
  agent_name              TEXT NOT NULL,
  environment             TEXT NOT NULL CHECK (environment IN ('development', 'staging', 'production')),
  agent_version           INTEGER NOT NULL,
  version_id              TEXT NOT NULL,
  artifact_digest         TEXT NOT NULL,
  user_id                 TEXT NOT NULL,
  state                   TEXT NOT NULL,            -- JSON: {"leafId", "lastRun": {"id", "status"} | null}
  title                   TEXT,                     -- the first user message, cut to 80 characters
  message_count           INTEGER NOT NULL DEFAULT 0,
  last_message_at         TEXT,
  projected_seq           INTEGER NOT NULL DEFAULT 0, -- every entry with seq <= this is in agent_messages
  retention_max_age_days  INTEGER,                  -- the pinned version's limits.retention
  retention_max_messages  INTEGER,
  retention_due_at        TEXT,                     -- when the retention job next looks at this session
  version                 INTEGER NOT NULL,         -- grows with every projection of this row
  created_at              TEXT NOT NULL,
  updated_at              TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
-- GET /v1/sessions (newest first, optional updatedAfter).
CREATE INDEX agent_sessions_by_updated ON agent_sessions (tenant_id, updated_at, id);
-- GET /v1/sessions?agentId=…
CREATE INDEX agent_sessions_by_agent ON agent_sessions (tenant_id, agent_id, updated_at, id);
-- GET /v1/sessions?subject=…[&agentId=…] and GET /v1/me/threads (subject + agent; one subject has few threads, so
-- the agent is checked on the subject's rows).
CREATE INDEX agent_sessions_by_user ON agent_sessions (tenant_id, user_id, updated_at, id);
-- The retention job's due sessions of one tenant.
CREATE INDEX agent_sessions_retention_due ON agent_sessions (tenant_id, retention_due_at)
  WHERE retention_due_at IS NOT NULL;

-- One row per thread entry (the whole tree: every branch, every kind). `id` is the entry id.
CREATE TABLE agent_messages (
  tenant_id     TEXT NOT NULL,
  session_id    TEXT NOT NULL,
  id            TEXT NOT NULL,
  seq           INTEGER NOT NULL,
  parent_id     TEXT,
  run_id        TEXT,
  kind          TEXT NOT NULL,
  role          TEXT,
  content       TEXT NOT NULL,                      -- the message text; other kinds: the body as JSON
  status        TEXT,                               -- complete | interrupted | failed (assistant replies)
  tool_call_id  TEXT,
  tool_name     TEXT,
  tool_calls    TEXT,                               -- JSON
  user_id       TEXT NOT NULL,
  version       INTEGER NOT NULL,
  created_at    TEXT NOT NULL,
  PRIMARY KEY (tenant_id, session_id, id)
);
-- GET /v1/sessions/:threadId/messages (seq order), retention by count and by seq.
CREATE INDEX agent_messages_by_seq ON agent_messages (tenant_id, session_id, seq, id);

-- One row per model run.
CREATE TABLE agent_runs (
  tenant_id           TEXT NOT NULL,
  session_id          TEXT NOT NULL,
  id                  TEXT NOT NULL,
  agent_id            TEXT NOT NULL,
  version_id          TEXT,
  status              TEXT NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'aborted')),
  day                 TEXT NOT NULL,                -- UTC date of created_at, for usage by day
  user_entry_id       TEXT,
  assistant_entry_id  TEXT,
  abort_reason        TEXT,
  error_code          TEXT,
  error_message       TEXT,
  version             INTEGER NOT NULL,
  created_at          TEXT NOT NULL,
  started_at          TEXT,
  ended_at            TEXT,
  PRIMARY KEY (tenant_id, session_id, id)
);
-- GET /v1/usage: runs per day (optionally per agent).
CREATE INDEX agent_runs_by_day ON agent_runs (tenant_id, day, agent_id);

-- Tool invocations with their redacted input and output.
CREATE TABLE agent_tool_calls (
  tenant_id   TEXT NOT NULL,
  session_id  TEXT NOT NULL,
  id          TEXT NOT NULL,
  run_id      TEXT NOT NULL,
  name        TEXT NOT NULL,
  input       TEXT NOT NULL,                        -- JSON
  output      TEXT,                                 -- JSON
  status      TEXT NOT NULL,
  version     INTEGER NOT NULL,
  created_at  TEXT NOT NULL,
  ended_at    TEXT,
  PRIMARY KEY (tenant_id, session_id, id)
);

-- Token usage per provider turn (a run's totals are sums, never stored twice).
CREATE TABLE agent_usage (
  tenant_id      TEXT NOT NULL,
  session_id     TEXT NOT NULL,
  run_id         TEXT NOT NULL,
  turn           INTEGER NOT NULL,
  agent_id       TEXT NOT NULL,
  day            TEXT NOT NULL,                     -- UTC date of created_at
  provider       TEXT NOT NULL,
  model          TEXT NOT NULL,
  input_tokens   INTEGER NOT NULL,
  output_tokens  INTEGER NOT NULL,
  version        INTEGER NOT NULL,
  created_at     TEXT NOT NULL,
  PRIMARY KEY (tenant_id, session_id, run_id, turn)
);
-- GET /v1/usage: tokens per day (optionally per agent), answered from the index alone.
CREATE INDEX agent_usage_by_day ON agent_usage (tenant_id, day, agent_id, input_tokens, output_tokens);
