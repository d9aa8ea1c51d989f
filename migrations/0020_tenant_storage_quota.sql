-- Attachment storage per tenant (docs/operations.md, "Quotas"): the bytes of distinct attachment objects the tenant
-- may keep in R2; NULL = the default (1 GiB).
ALTER TABLE tenants ADD COLUMN storage_bytes INTEGER CHECK (storage_bytes IS NULL OR storage_bytes > 0);
