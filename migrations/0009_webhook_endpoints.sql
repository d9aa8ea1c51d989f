-- Event webhooks (SPEC §9): a tenant's endpoints for events about its threads. The signing secret (`whsec_…`) is
-- stored AES-GCM sealed under SECRETS_KEY with the tenant and endpoint id as associated data, never in plaintext.
-- Deliveries, attempts and the delivery log live in the tenant's events Durable Object, not here (docs/storage.md).
CREATE TABLE webhook_endpoints (
  tenant_id         TEXT NOT NULL,
  id                TEXT NOT NULL,                 -- whk_…
  url               TEXT NOT NULL,
  events_json       TEXT NOT NULL,                 -- JSON array of event types, at least one
  description       TEXT,
  secret_ciphertext TEXT NOT NULL,
  secret_iv         TEXT NOT NULL,
  secret_key_id     TEXT NOT NULL,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
