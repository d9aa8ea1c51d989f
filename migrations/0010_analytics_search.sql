-- Per-version analytics and search (SPEC §11). Both are kept in step with the projection by triggers on the
-- projected tables, so every writer (the drain, erasure, retention) keeps them right without knowing they exist.
--
-- Analytics: a daily rollup per (tenant, day, agent, version) and a log-bucket histogram of time to first delta. The
-- triggers fire only when a version-guarded upsert really changes a row, and an update moves the old row's
-- contribution to the new one, so a retried or reordered projection never counts twice. Nothing deletes from the
-- rollup: erasure and retention remove content, the counts stay (they hold no subject and no text).
-- Search: an FTS5 index of message text as per-tenant terms (each word carries its tenant's key), so a MATCH only
-- ever reads the caller's tenant's postings. Rows follow agent_messages by rowid: erased and expired text leaves the index with
-- its row.

-- Preview threads (a draft playground's, SPEC §10) are left out of analytics. Set at launch; 0 for every other thread.
ALTER TABLE threads ADD COLUMN preview INTEGER NOT NULL DEFAULT 0 CHECK (preview IN (0, 1));

-- From the run's acceptance to its first streamed delta (NULL: none streamed), and that time's histogram bucket.
ALTER TABLE agent_runs ADD COLUMN first_delta_ms INTEGER;
ALTER TABLE agent_runs ADD COLUMN first_delta_bucket INTEGER;

-- One row per (tenant, day, agent, version) with activity. `version_id` is agent_versions.id ('' when unknown).
-- Threads count on the day they were created, under the version they started on; turns, failures and first deltas
-- on their run's day and version; tokens on their usage record's day and their run's version; feedback on the rated
-- reply's run.
CREATE TABLE agent_analytics_daily (
  tenant_id      TEXT NOT NULL,
  day            TEXT NOT NULL,                     -- UTC date
  agent_id       TEXT NOT NULL,
  version_id     TEXT NOT NULL,
  threads        INTEGER NOT NULL DEFAULT 0,
  turns          INTEGER NOT NULL DEFAULT 0,
  failed_turns   INTEGER NOT NULL DEFAULT 0,
  input_tokens   INTEGER NOT NULL DEFAULT 0,
  output_tokens  INTEGER NOT NULL DEFAULT 0,
  feedback_up    INTEGER NOT NULL DEFAULT 0,
  feedback_down  INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, day, agent_id, version_id)
);

-- Runs per first-delta bucket: bucket 0 is under 1 ms, bucket k ≥ 1 is [2^((k-1)/4), 2^(k/4)) ms (capped at 96).
CREATE TABLE agent_analytics_first_delta (
  tenant_id   TEXT NOT NULL,
  day         TEXT NOT NULL,
  agent_id    TEXT NOT NULL,
  version_id  TEXT NOT NULL,
  bucket      INTEGER NOT NULL,
  runs        INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant_id, day, agent_id, version_id, bucket)
);

CREATE TRIGGER agent_analytics_session_insert AFTER INSERT ON agent_sessions
WHEN NOT EXISTS (SELECT 1 FROM threads t WHERE t.tenant_id = NEW.tenant_id AND t.id = NEW.id AND t.preview = 1)
BEGIN
  INSERT INTO agent_analytics_daily (tenant_id, day, agent_id, version_id, threads)
    SELECT NEW.tenant_id, substr(NEW.created_at, 1, 10), NEW.agent_id, NEW.version_id, 1 WHERE 1
    ON CONFLICT (tenant_id, day, agent_id, version_id) DO UPDATE SET threads = threads + 1;
END;

CREATE TRIGGER agent_analytics_run_insert AFTER INSERT ON agent_runs
WHEN NOT EXISTS (SELECT 1 FROM threads t WHERE t.tenant_id = NEW.tenant_id AND t.id = NEW.session_id AND t.preview = 1)
BEGIN
  INSERT INTO agent_analytics_daily (tenant_id, day, agent_id, version_id, turns, failed_turns)
    SELECT NEW.tenant_id, NEW.day, NEW.agent_id, COALESCE(NEW.version_id, ''), 1, NEW.status = 'failed' WHERE 1
    ON CONFLICT (tenant_id, day, agent_id, version_id) DO UPDATE SET
      turns = turns + 1, failed_turns = failed_turns + excluded.failed_turns;
  INSERT INTO agent_analytics_first_delta (tenant_id, day, agent_id, version_id, bucket, runs)
    SELECT NEW.tenant_id, NEW.day, NEW.agent_id, COALESCE(NEW.version_id, ''), NEW.first_delta_bucket, 1
    WHERE NEW.first_delta_bucket IS NOT NULL
    ON CONFLICT (tenant_id, day, agent_id, version_id, bucket) DO UPDATE SET runs = runs + 1;
END;

-- A run's status, first delta or key changed: its old contribution leaves, its new one arrives.
CREATE TRIGGER agent_analytics_run_update AFTER UPDATE ON agent_runs
WHEN (OLD.status IS NOT NEW.status OR OLD.first_delta_bucket IS NOT NEW.first_delta_bucket
    OR OLD.day IS NOT NEW.day OR OLD.agent_id IS NOT NEW.agent_id OR OLD.version_id IS NOT NEW.version_id)
  AND NOT EXISTS (SELECT 1 FROM threads t WHERE t.tenant_id = NEW.tenant_id AND t.id = NEW.session_id AND t.preview = 1)
BEGIN
  INSERT INTO agent_analytics_daily (tenant_id, day, agent_id, version_id, turns, failed_turns)
    SELECT OLD.tenant_id, OLD.day, OLD.agent_id, COALESCE(OLD.version_id, ''), -1, -(OLD.status = 'failed') WHERE 1
    ON CONFLICT (tenant_id, day, agent_id, version_id) DO UPDATE SET
      turns = turns - 1, failed_turns = failed_turns + excluded.failed_turns;
  INSERT INTO agent_analytics_daily (tenant_id, day, agent_id, version_id, turns, failed_turns)
    SELECT NEW.tenant_id, NEW.day, NEW.agent_id, COALESCE(NEW.version_id, ''), 1, NEW.status = 'failed' WHERE 1
    ON CONFLICT (tenant_id, day, agent_id, version_id) DO UPDATE SET
      turns = turns + 1, failed_turns = failed_turns + excluded.failed_turns;
  INSERT INTO agent_analytics_first_delta (tenant_id, day, agent_id, version_id, bucket, runs)
    SELECT OLD.tenant_id, OLD.day, OLD.agent_id, COALESCE(OLD.version_id, ''), OLD.first_delta_bucket, -1
    WHERE OLD.first_delta_bucket IS NOT NULL
    ON CONFLICT (tenant_id, day, agent_id, version_id, bucket) DO UPDATE SET runs = runs - 1;
  INSERT INTO agent_analytics_first_delta (tenant_id, day, agent_id, version_id, bucket, runs)
    SELECT NEW.tenant_id, NEW.day, NEW.agent_id, COALESCE(NEW.version_id, ''), NEW.first_delta_bucket, 1
    WHERE NEW.first_delta_bucket IS NOT NULL
    ON CONFLICT (tenant_id, day, agent_id, version_id, bucket) DO UPDATE SET runs = runs + 1;
END;

-- Tokens go under their run's version (the run is projected before its usage, in the same batch).
CREATE TRIGGER agent_analytics_usage_insert AFTER INSERT ON agent_usage
WHEN NOT EXISTS (SELECT 1 FROM threads t WHERE t.tenant_id = NEW.tenant_id AND t.id = NEW.session_id AND t.preview = 1)
BEGIN
  INSERT INTO agent_analytics_daily (tenant_id, day, agent_id, version_id, input_tokens, output_tokens)
    SELECT NEW.tenant_id, NEW.day, NEW.agent_id, COALESCE((SELECT r.version_id FROM agent_runs r
        WHERE r.tenant_id = NEW.tenant_id AND r.session_id = NEW.session_id AND r.id = NEW.run_id), ''),
      NEW.input_tokens, NEW.output_tokens WHERE 1
    ON CONFLICT (tenant_id, day, agent_id, version_id) DO UPDATE SET
      input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens;
END;

CREATE TRIGGER agent_analytics_usage_update AFTER UPDATE ON agent_usage
WHEN (OLD.input_tokens IS NOT NEW.input_tokens OR OLD.output_tokens IS NOT NEW.output_tokens
    OR OLD.day IS NOT NEW.day OR OLD.agent_id IS NOT NEW.agent_id)
  AND NOT EXISTS (SELECT 1 FROM threads t WHERE t.tenant_id = NEW.tenant_id AND t.id = NEW.session_id AND t.preview = 1)
BEGIN
  INSERT INTO agent_analytics_daily (tenant_id, day, agent_id, version_id, input_tokens, output_tokens)
    SELECT OLD.tenant_id, OLD.day, OLD.agent_id, COALESCE((SELECT r.version_id FROM agent_runs r
        WHERE r.tenant_id = OLD.tenant_id AND r.session_id = OLD.session_id AND r.id = OLD.run_id), ''),
      -OLD.input_tokens, -OLD.output_tokens WHERE 1
    ON CONFLICT (tenant_id, day, agent_id, version_id) DO UPDATE SET
      input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens;
  INSERT INTO agent_analytics_daily (tenant_id, day, agent_id, version_id, input_tokens, output_tokens)
    SELECT NEW.tenant_id, NEW.day, NEW.agent_id, COALESCE((SELECT r.version_id FROM agent_runs r
        WHERE r.tenant_id = NEW.tenant_id AND r.session_id = NEW.session_id AND r.id = NEW.run_id), ''),
      NEW.input_tokens, NEW.output_tokens WHERE 1
    ON CONFLICT (tenant_id, day, agent_id, version_id) DO UPDATE SET
      input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens;
END;

-- Feedback counts on the rated reply's run (its day and version); a rating that changes moves between the two.
CREATE TRIGGER agent_analytics_feedback_insert AFTER INSERT ON agent_message_feedback
WHEN NEW.rating IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM threads t WHERE t.tenant_id = NEW.tenant_id AND t.id = NEW.session_id AND t.preview = 1)
BEGIN
  INSERT INTO agent_analytics_daily (tenant_id, day, agent_id, version_id, feedback_up, feedback_down)
    SELECT NEW.tenant_id, COALESCE(r.day, substr(NEW.created_at, 1, 10)), t.agent_id, COALESCE(r.version_id, ''),
      NEW.rating = 'up', NEW.rating = 'down'
    FROM threads t
      LEFT JOIN agent_messages m ON m.tenant_id = NEW.tenant_id AND m.session_id = NEW.session_id AND m.id = NEW.message_id
      LEFT JOIN agent_runs r ON r.tenant_id = NEW.tenant_id AND r.session_id = NEW.session_id AND r.id = m.run_id
    WHERE t.tenant_id = NEW.tenant_id AND t.id = NEW.session_id
    ON CONFLICT (tenant_id, day, agent_id, version_id) DO UPDATE SET
      feedback_up = feedback_up + excluded.feedback_up, feedback_down = feedback_down + excluded.feedback_down;
END;

CREATE TRIGGER agent_analytics_feedback_update AFTER UPDATE ON agent_message_feedback
WHEN OLD.rating IS NOT NEW.rating
  AND NOT EXISTS (SELECT 1 FROM threads t WHERE t.tenant_id = NEW.tenant_id AND t.id = NEW.session_id AND t.preview = 1)
BEGIN
  INSERT INTO agent_analytics_daily (tenant_id, day, agent_id, version_id, feedback_up, feedback_down)
    SELECT NEW.tenant_id, COALESCE(r.day, substr(NEW.created_at, 1, 10)), t.agent_id, COALESCE(r.version_id, ''),
      COALESCE(NEW.rating = 'up', 0) - COALESCE(OLD.rating = 'up', 0),
      COALESCE(NEW.rating = 'down', 0) - COALESCE(OLD.rating = 'down', 0)
    FROM threads t
      LEFT JOIN agent_messages m ON m.tenant_id = NEW.tenant_id AND m.session_id = NEW.session_id AND m.id = NEW.message_id
      LEFT JOIN agent_runs r ON r.tenant_id = NEW.tenant_id AND r.session_id = NEW.session_id AND r.id = m.run_id
    WHERE t.tenant_id = NEW.tenant_id AND t.id = NEW.session_id
    ON CONFLICT (tenant_id, day, agent_id, version_id) DO UPDATE SET
      feedback_up = feedback_up + excluded.feedback_up, feedback_down = feedback_down + excluded.feedback_down;
END;

-- Message text for search, as per-tenant terms: the projection writes each searchable message's words into
-- `search_terms` as '<tenant key><word>' (tenant key: 't' || hex(tenant_id) || 'x', letters and digits only, so the
-- tokenizer keeps key and word one token; src/storage/d1/session-search.ts computes it). A query's words carry the
-- caller's key too, so FTS5 reads only that tenant's doclist for each word: another tenant's rows are never in it,
-- and a tenant's size does not weigh on a query (a common per-tenant token AND the word read the tenant's whole
-- posting list on every query). NULL for rows that are not searchable (tool results, events, empty text).
ALTER TABLE agent_messages ADD COLUMN search_terms TEXT;

-- Queries also check `tenant_id`. The other columns are not indexed. rowid is minus agent_messages' rowid, so FTS5's
-- natural (ascending) order is newest first: walking a doclist forwards stops at the page's last match, where
-- descending order would load it whole.
CREATE VIRTUAL TABLE agent_messages_fts USING fts5(
  body, tenant_id UNINDEXED, session_id UNINDEXED, entry_id UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2'
);
-- Erased text leaves no term behind: with secure-delete a deleted row's terms are removed from the index pages at
-- once, instead of being marked deleted until some later merge rewrites them (FTS5, SQLite 3.42+).
INSERT INTO agent_messages_fts (agent_messages_fts, rank) VALUES ('secure-delete', 1);

-- Only conversation text is searchable: user, assistant and human agent messages, never tool results or events.
CREATE TRIGGER agent_messages_fts_insert AFTER INSERT ON agent_messages
WHEN NEW.kind = 'message' AND NEW.role IN ('user', 'assistant', 'human_agent') AND NEW.search_terms <> ''
BEGIN
  INSERT INTO agent_messages_fts (rowid, body, tenant_id, session_id, entry_id)
    VALUES (-NEW.rowid, NEW.search_terms, NEW.tenant_id, NEW.session_id, NEW.id);
END;

CREATE TRIGGER agent_messages_fts_delete AFTER DELETE ON agent_messages
BEGIN
  DELETE FROM agent_messages_fts WHERE rowid = -OLD.rowid;
END;

CREATE TRIGGER agent_messages_fts_update AFTER UPDATE OF search_terms, kind, role ON agent_messages
BEGIN
  DELETE FROM agent_messages_fts WHERE rowid = -OLD.rowid;
  INSERT INTO agent_messages_fts (rowid, body, tenant_id, session_id, entry_id)
    SELECT -NEW.rowid, NEW.search_terms, NEW.tenant_id, NEW.session_id, NEW.id
    WHERE NEW.kind = 'message' AND NEW.role IN ('user', 'assistant', 'human_agent') AND NEW.search_terms <> '';
END;
