-- Each runtime revision's capability list (docs/api.md#runtime-revisions): a release whose versions need one its
-- runtime lacks is refused. JSON array of strings; revisions registered before this migration get theirs below.
ALTER TABLE runtime_revisions ADD COLUMN capabilities TEXT NOT NULL DEFAULT '[]';

-- The only revision registered before capability lists existed: it ran everything the next one does but attachments.
UPDATE runtime_revisions
SET capabilities = '["tools.server","tools.client","approvals","handoff","upgrades","context"]'
WHERE id = 'runtime-2026-11';
