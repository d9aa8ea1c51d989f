-- Migration number: 0021
-- Attachments (docs/privacy.md#attachments): an erasure job remembers the SHA-256s of the attachment objects its
-- threads' erasure deleted, batch by batch, so the receipt signed at the end lists every one of them even when the
-- job ran over several calls. Content digests only: no name, no media type, no byte.
ALTER TABLE erasures ADD COLUMN attachments TEXT NOT NULL DEFAULT '[]';
