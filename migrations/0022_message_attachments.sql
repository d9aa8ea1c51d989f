-- A user message's attachments in the sessions projection (docs/api.md#attachments): the refs as JSON
-- ([{id, sha256, mediaType, size, name}]); NULL when it has none, and under zero retention. Never a byte of the files.
ALTER TABLE agent_messages ADD COLUMN attachments TEXT;
