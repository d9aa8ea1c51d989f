-- Handoff and feedback (SPEC §8) in the queryable copy. A session's mode ('agent' | 'handoff'), so a tenant's console
-- lists the threads a person should answer; and the user's current rating of assistant messages, one row per
-- message (latest wins; a cleared rating keeps its row with rating NULL), projected with version-guarded upserts.
ALTER TABLE agent_sessions ADD COLUMN mode TEXT NOT NULL DEFAULT 'agent' CHECK (mode IN ('agent', 'handoff'));
-- GET /v1/sessions?mode=handoff (newest first). Few threads are in handoff at once, so the index holds only them.
CREATE INDEX agent_sessions_in_handoff ON agent_sessions (tenant_id, updated_at, id) WHERE mode = 'handoff';

-- A human_agent message's author (the person's display name, when the tenant gave one).
ALTER TABLE agent_messages ADD COLUMN author_name TEXT;

CREATE TABLE agent_message_feedback (
  tenant_id   TEXT NOT NULL,
  session_id  TEXT NOT NULL,
  message_id  TEXT NOT NULL,                        -- agent_messages.id of an assistant message
  rating      TEXT CHECK (rating IN ('up', 'down')), -- NULL: cleared
  comment     TEXT,                                 -- at most 2,000 characters
  user_id     TEXT NOT NULL,                        -- the subject who rated
  version     INTEGER NOT NULL,                     -- the thread's revision of this feedback
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (tenant_id, session_id, message_id)
);
