-- The registry of launched threads: who owns each thread, for resume, revocation, erasure and listing.
-- Written by the launch endpoint; the thread object's pin lives in thread_pins and in its own SQLite.
CREATE TABLE threads (
  tenant_id     TEXT NOT NULL,
  id            TEXT NOT NULL,
  agent_id      TEXT NOT NULL,
  environment   TEXT NOT NULL CHECK (environment IN ('development', 'staging', 'production')),
  subject       TEXT NOT NULL,
  subject_kind  TEXT NOT NULL CHECK (subject_kind IN ('visitor', 'user')),
  created_at    TEXT NOT NULL,
  deleted_at    TEXT,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX threads_by_subject ON threads (tenant_id, agent_id, subject, created_at);
