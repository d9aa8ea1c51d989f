-- Erasure by subject (SPEC §12). One row per erasure job: while pending it lists the threads it erases and how far
-- it got, so a repeated call resumes it; once completed it keeps the signed receipt. It never holds the subject:
-- `scope_hash` is an HMAC (under DO_NAME_KEY) of tenant, agent scope and subject, so a repeat finds its job and
-- nothing here reads back as the subject id.
CREATE TABLE erasures (
  tenant_id   TEXT NOT NULL,
  id          TEXT NOT NULL,                 -- era_…
  scope_hash  TEXT NOT NULL,
  scope_json  TEXT NOT NULL,                 -- {"kind":"subject"|"me","agentId"?}: no subject
  status      TEXT NOT NULL CHECK (status IN ('pending', 'completed')),
  thread_ids  TEXT NOT NULL,                 -- JSON array, fixed when the job starts
  done        INTEGER NOT NULL DEFAULT 0,    -- threads of thread_ids fully erased, in order
  created_at  TEXT NOT NULL,
  erased_at   TEXT,                          -- set on completion
  receipt     TEXT,                          -- the compact JWS, set on completion
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX erasures_by_scope ON erasures (tenant_id, scope_hash, created_at);
-- At most one pending job per scope: concurrent first calls share one job.
CREATE UNIQUE INDEX erasures_one_pending ON erasures (tenant_id, scope_hash) WHERE status = 'pending';
-- The subject's threads, for erasure by subject (the registry had no index on subject).
CREATE INDEX threads_by_tenant_subject ON threads (tenant_id, subject);

-- Visitors whose conversations were erased through `DELETE /v1/me/threads`: their visitor tokens are refused at
-- launch until the last one they could hold has expired. Keyed by an HMAC of the visitor id, never the id itself.
CREATE TABLE revoked_visitors (
  tenant_id    TEXT NOT NULL,
  visitor_hash TEXT NOT NULL,
  revoked_at   TEXT NOT NULL,
  expires_at   TEXT NOT NULL,
  PRIMARY KEY (tenant_id, visitor_hash)
);
