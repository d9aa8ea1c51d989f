-- The context variables of a thread's latest private launch (SPEC §8), as canonical JSON (NULL: none), and a counter
-- that grows with every change, so the thread object re-reads them only when a launch has changed them.
ALTER TABLE threads ADD COLUMN context TEXT;
ALTER TABLE threads ADD COLUMN context_version INTEGER NOT NULL DEFAULT 0;
