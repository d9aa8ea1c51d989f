-- Migration number: 0016
-- The queryable copy (agent_sessions, agent_messages and the tables and indexes built from them) is spread over
-- several D1 databases by tenant (docs/scaling.md, "D1 shards"). This database — the `DB` binding, which also holds
-- the control plane — is shard `DB`; each further shard is a D1 binding (`DB_SHARD_1`, …) with this same list of
-- migrations applied, so every projection statement, trigger and index means the same thing in every shard. In a
-- shard other than `DB` the `threads` table holds only a mirror of the registry rows of its tenants' threads (what
-- the projection's guard and the analytics triggers read); the registry itself stays here.

-- Where each tenant's projection lives. Written once when the tenant is created (or at its first projection, for a
-- tenant created some other way) and changed only by a move. `state`:
--   active  — reads and writes go to `shard`;
--   moving  — writes go to `shard` and `moving_to`, reads to `shard`; the move copies the existing rows;
--   frozen  — projection writes wait (the thread objects keep them in their outbox) while the rollups are copied;
--   draining — reads and writes go to `shard` (the new one); the old one (`moving_from`) is being emptied.
-- `step_at` is when the state last changed: a move takes its next step only once every cached copy of the row
-- (SHARD_MAP_CACHE_MS) and every in-flight batch (30 s) is older than it.
CREATE TABLE tenant_shards (
  tenant_id    TEXT PRIMARY KEY,
  shard        TEXT NOT NULL,
  state        TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'moving', 'frozen', 'draining')),
  moving_to    TEXT,                          -- while moving/frozen: the target shard
  moving_from  TEXT,                          -- while draining: the shard being emptied
  cursor       TEXT,                          -- the move's progress within its current step (JSON)
  step_at      TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  moved_at     TEXT,                          -- when the last move completed
  lease        TEXT,                          -- the move runner working on it (one at a time), until lease_until
  lease_until  TEXT,
  CHECK ((state IN ('moving', 'frozen')) = (moving_to IS NOT NULL)),
  CHECK ((state = 'draining') = (moving_from IS NOT NULL))
);
-- The move job finds unfinished moves without walking every tenant.
CREATE INDEX tenant_shards_moving ON tenant_shards (step_at, tenant_id) WHERE state <> 'active';

-- Placement weights of new tenants: a tenant goes to the shard whose cumulative-weight interval holds the hash of its
-- id. Weight 0 takes no new tenants; a shard not listed takes none either. Changing a weight moves no one.
CREATE TABLE shard_weights (
  shard   TEXT PRIMARY KEY,
  weight  INTEGER NOT NULL CHECK (weight >= 0)
);
INSERT INTO shard_weights (shard, weight) VALUES ('DB', 1);

-- Every existing tenant's projection is here: they stay.
INSERT INTO tenant_shards (tenant_id, shard, state, step_at, created_at)
  SELECT id, 'DB', 'active', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM tenants;
