-- Migration number: 0015
-- The tenant console (SPEC §10): sessions signed in with an API key, and the draft playground's preview threads.

-- A console session: the browser holds `cs_<id>_<secret>` in an HttpOnly `__Host-console` cookie; this row holds only
-- a keyed digest of the secret. The API key that signed in is re-read on every request (its scope, its revocation,
-- its tenant's status), so a revoked key or a disabled tenant ends its sessions at once. Rows are looked up by `id`
-- before the tenant is known (the cookie names the session, like `sk_<id>_…` names a key).
CREATE TABLE console_sessions (
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  id          TEXT NOT NULL,                 -- the `<id>` of the cookie's `cs_<id>_<secret>`
  api_key_id  TEXT NOT NULL,                 -- the key that signed in
  digest      TEXT NOT NULL,                 -- HMAC-SHA256(API_KEY_PEPPER, "console-session:" + secret), hex
  created_at  TEXT NOT NULL,
  expires_at  TEXT NOT NULL,                 -- created_at + 12 h; never extended
  revoked_at  TEXT,                          -- signed out
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX console_sessions_by_id ON console_sessions (id);
-- The scheduled job deletes sessions a day after they expired.
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);

-- A preview thread (`POST /v1/agents/:id/draft/preview-session`): what it was bound to and when it goes. The thread
-- object holds the artifact itself in its pin, written when the preview is created; its registry row in `threads`
-- has `preview = 1` (0010), which keeps it out of analytics, usage and the default session list.
CREATE TABLE thread_previews (
  tenant_id       TEXT NOT NULL,
  thread_id       TEXT NOT NULL,
  agent_id        TEXT NOT NULL,
  draft_revision  INTEGER,                   -- the draft revision previewed; NULL for a published version
  version         INTEGER,                   -- the published version previewed; NULL for a draft
  digest          TEXT NOT NULL,             -- the artifact the thread is pinned to
  created_at      TEXT NOT NULL,
  expires_at      TEXT NOT NULL,             -- created_at + 24 h: the scheduled job erases the thread then
  PRIMARY KEY (tenant_id, thread_id),
  CHECK ((draft_revision IS NULL) <> (version IS NULL))
);
CREATE INDEX thread_previews_by_expiry ON thread_previews (expires_at);

-- Usage leaves preview threads out: `session_id NOT IN (SELECT id FROM threads WHERE tenant_id = ? AND preview = 1)`
-- reads only this (small: previews live a day) index.
CREATE INDEX threads_previews ON threads (tenant_id, id) WHERE preview = 1;

-- The session list leaves preview threads out unless asked for them (`preview=true`). Copied from the registry row by
-- the projection's upsert, which already reads that row.
ALTER TABLE agent_sessions ADD COLUMN preview INTEGER NOT NULL DEFAULT 0 CHECK (preview IN (0, 1));
CREATE INDEX agent_sessions_previews ON agent_sessions (tenant_id, updated_at, id) WHERE preview = 1;
