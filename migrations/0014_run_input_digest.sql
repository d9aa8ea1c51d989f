-- Reproducible audit (SPEC §11): each projected run carries the digest of its first model call's input, so a
-- conversation's replies list it beside the version that produced them. Null for a run that never reached a model
-- (and for runs projected before this migration until their thread projects them again).
ALTER TABLE agent_runs ADD COLUMN input_digest TEXT;
