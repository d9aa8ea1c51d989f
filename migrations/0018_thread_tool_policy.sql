-- The tool policy of a thread's latest private launch (docs/tools.md#tool-policy) as canonical JSON (NULL: none, every
-- tool), versioned with its context: a change of either grows `context_version`.
ALTER TABLE threads ADD COLUMN tool_policy TEXT;
