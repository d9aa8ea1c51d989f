-- Migration number: 0012
-- Privacy (SPEC §12): legal holds on a thread or on a subject, and a retention age set on the agent itself.
--
-- A hold keeps its target as given: a subject hold names the subject id, and it stays only while the hold does
-- (erasing a held subject is refused, so the id never outlives the legal need; docs/privacy.md).
CREATE TABLE legal_holds (
  tenant_id       TEXT NOT NULL,
  scope           TEXT NOT NULL CHECK (scope IN ('thread', 'subject')),
  target          TEXT NOT NULL,                  -- the thread id, or the subject id
  reason          TEXT NOT NULL,                  -- up to 500 characters, from the tenant
  created_at      TEXT NOT NULL,
  created_by_key  TEXT,                           -- the API key (or console session key) that placed it
  PRIMARY KEY (tenant_id, scope, target)
);
-- GET /v1/holds (oldest first) pages by (created_at, scope, target).
CREATE INDEX legal_holds_by_created ON legal_holds (tenant_id, created_at, scope, target);

-- PATCH /v1/agents/:id {retention: {maxAgeDays}}: applies to every thread of the agent, the shorter of this and the
-- pinned version's max age winning. The retention job reads it by joining agents (docs/storage.md).
ALTER TABLE agents ADD COLUMN retention_max_age_days INTEGER;

-- The retention job's sessions of an agent with its own max age that were never scheduled by a version policy:
-- only those created before the cutoff can hold a message older than it.
CREATE INDEX agent_sessions_by_agent_created ON agent_sessions (tenant_id, agent_id, retention_due_at, created_at);
