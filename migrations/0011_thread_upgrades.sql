-- Per-thread upgrades (SPEC §11). Each projected entry carries the agent version in effect where it sits (the one
-- that produced a reply), and each session the version of its current leaf, besides the pinned `agent_version`.
ALTER TABLE agent_messages ADD COLUMN agent_version INTEGER;
ALTER TABLE agent_sessions ADD COLUMN leaf_version INTEGER;

-- Until this migration no thread could change version: every row projected so far ran on its session's pin.
UPDATE agent_messages SET agent_version = (
  SELECT s.agent_version FROM agent_sessions s
  WHERE s.tenant_id = agent_messages.tenant_id AND s.id = agent_messages.session_id
) WHERE agent_version IS NULL;
UPDATE agent_sessions SET leaf_version = agent_version WHERE leaf_version IS NULL;
