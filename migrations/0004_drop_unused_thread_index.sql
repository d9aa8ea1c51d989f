-- No query reads threads by subject (end users' thread lists come from agent_sessions), so the index only cost a row
-- write per launch.
DROP INDEX IF EXISTS threads_by_subject;
