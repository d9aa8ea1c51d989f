-- Operator controls per tenant: its own daily and concurrency quotas (NULL = the platform default), and when the
-- operator last changed the row. A tenant's status already exists (0001); disabling it is now possible.
ALTER TABLE tenants ADD COLUMN launches_per_day INTEGER CHECK (launches_per_day IS NULL OR launches_per_day > 0);
ALTER TABLE tenants ADD COLUMN tokens_per_day INTEGER CHECK (tokens_per_day IS NULL OR tokens_per_day > 0);
ALTER TABLE tenants ADD COLUMN concurrent_threads INTEGER CHECK (concurrent_threads IS NULL OR concurrent_threads > 0);
ALTER TABLE tenants ADD COLUMN updated_at TEXT;
-- Keyset pages of `GET /v1/operator/tenants`, oldest first.
CREATE INDEX tenants_by_created ON tenants (created_at, id);

-- When a thread last had a socket open: set when a socket connects and refreshed while sockets stay open, so
-- disabling a tenant reaches only the threads that can have a live socket (docs/decisions.md, "Disabling a tenant").
ALTER TABLE threads ADD COLUMN active_at TEXT;
CREATE INDEX threads_by_activity ON threads (tenant_id, active_at, id) WHERE active_at IS NOT NULL;
