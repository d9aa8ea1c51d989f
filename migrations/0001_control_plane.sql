-- Control plane: tenants, credentials, agents, drafts, immutable versions, releases and thread pins.
-- Every key on tenant data leads with tenant_id. The two exceptions are credential look-ups that happen
-- before the tenant is known (api_keys.id from an `sk_<id>_…` key; agents.public_key from a `pk_…` key).
-- Timestamps are ISO-8601 UTC strings.

CREATE TABLE tenants (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  status      TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  created_at  TEXT NOT NULL
);

CREATE TABLE api_keys (
  tenant_id     TEXT NOT NULL REFERENCES tenants (id),
  id            TEXT NOT NULL,
  name          TEXT NOT NULL,
  scope         TEXT NOT NULL CHECK (scope IN ('admin', 'read')),
  digest        TEXT NOT NULL,            -- HMAC-SHA256(pepper, secret), hex
  prefix        TEXT NOT NULL,            -- shown to humans: "sk_<id>"
  last4         TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  revoked_at    TEXT,
  PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX api_keys_by_id ON api_keys (id);

CREATE TABLE agents (
  tenant_id        TEXT NOT NULL REFERENCES tenants (id),
  id               TEXT NOT NULL,
  slug             TEXT NOT NULL,
  name             TEXT NOT NULL,
  status           TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  visibility       TEXT NOT NULL CHECK (visibility IN ('public', 'private')),
  allowed_origins  TEXT NOT NULL DEFAULT '[]',   -- JSON array of origin patterns
  public_key       TEXT NOT NULL,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, slug)
);
CREATE UNIQUE INDEX agents_by_public_key ON agents (public_key);
-- Keyset pages of a tenant's agents, oldest first.
CREATE INDEX agents_by_created ON agents (tenant_id, created_at, id);

CREATE TABLE agent_drafts (
  tenant_id   TEXT NOT NULL,
  agent_id    TEXT NOT NULL,
  revision    INTEGER NOT NULL CHECK (revision > 0),
  definition  TEXT NOT NULL,                -- canonical JSON of the artifact definition
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (tenant_id, agent_id),
  FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id)
);

CREATE TABLE agent_versions (
  tenant_id       TEXT NOT NULL,
  agent_id        TEXT NOT NULL,
  version         INTEGER NOT NULL CHECK (version > 0),
  id              TEXT NOT NULL,
  draft_revision  INTEGER NOT NULL,
  schema_version  INTEGER NOT NULL,
  artifact        TEXT NOT NULL,            -- canonical JSON
  digest          TEXT NOT NULL,            -- "sha256:<hex>" over the canonical JSON
  created_at      TEXT NOT NULL,
  PRIMARY KEY (tenant_id, agent_id, version),
  UNIQUE (tenant_id, id),
  FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id)
);

-- Builds of the Worker that bind artifacts, and which artifact schema versions each understands.
CREATE TABLE runtime_revisions (
  id                         TEXT PRIMARY KEY,
  supported_schema_versions  TEXT NOT NULL,   -- JSON array of integers
  created_at                 TEXT NOT NULL
);

CREATE TABLE releases (
  tenant_id         TEXT NOT NULL,
  id                TEXT NOT NULL,
  agent_id          TEXT NOT NULL,
  environment       TEXT NOT NULL CHECK (environment IN ('development', 'staging', 'production')),
  runtime_revision  TEXT NOT NULL REFERENCES runtime_revisions (id),
  created_at        TEXT NOT NULL,
  activated_at      TEXT,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id)
);
-- Keyset pages of an agent's releases, oldest first.
CREATE INDEX releases_by_agent ON releases (tenant_id, agent_id, created_at, id);

CREATE TABLE release_allocations (
  tenant_id   TEXT NOT NULL,
  release_id  TEXT NOT NULL,
  position    INTEGER NOT NULL,
  agent_id    TEXT NOT NULL,
  version     INTEGER NOT NULL,
  weight      INTEGER NOT NULL CHECK (weight > 0 AND weight <= 10000),
  PRIMARY KEY (tenant_id, release_id, position),
  FOREIGN KEY (tenant_id, release_id) REFERENCES releases (tenant_id, id),
  FOREIGN KEY (tenant_id, agent_id, version) REFERENCES agent_versions (tenant_id, agent_id, version)
);

CREATE TABLE active_releases (
  tenant_id     TEXT NOT NULL,
  agent_id      TEXT NOT NULL,
  environment   TEXT NOT NULL,
  release_id    TEXT NOT NULL,
  activated_at  TEXT NOT NULL,
  PRIMARY KEY (tenant_id, agent_id, environment),
  FOREIGN KEY (tenant_id, release_id) REFERENCES releases (tenant_id, id)
);

-- A thread's pin is written once and never follows a later release.
CREATE TABLE thread_pins (
  tenant_id    TEXT NOT NULL,
  thread_id    TEXT NOT NULL,
  agent_id     TEXT NOT NULL,
  environment  TEXT NOT NULL,
  release_id   TEXT NOT NULL,
  version_id   TEXT NOT NULL,
  version      INTEGER NOT NULL,
  digest       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  PRIMARY KEY (tenant_id, thread_id)
);

-- Model-provider credentials: AES-GCM ciphertext with the tenant id as associated data; never returned.
CREATE TABLE tenant_secrets (
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  alias       TEXT NOT NULL,
  ciphertext  TEXT NOT NULL,   -- base64url
  iv          TEXT NOT NULL,   -- base64url, 96 bits
  key_id      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (tenant_id, alias)
);
