-- Migration number: 0019
-- Tool approvals as the console and GET /v1/approvals list them (docs/api.md#approvals): one row per approval a run
-- asked for, projected from the thread's `run_actions` with the same version guard as runs. Like the other projected
-- tables it lives in the tenant's shard (docs/scaling.md) and erasure deletes its rows with the thread's.
CREATE TABLE agent_approvals (
  tenant_id     TEXT NOT NULL,
  thread_id     TEXT NOT NULL,
  id            TEXT NOT NULL,                      -- the approval id (apr_…)
  environment   TEXT NOT NULL CHECK (environment IN ('development', 'staging', 'production')),
  agent_id      TEXT NOT NULL,
  run_id        TEXT NOT NULL,
  tool_call_id  TEXT NOT NULL,
  tool_name     TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled')),
  by            TEXT NOT NULL,                      -- who may decide: user | tenant | any
  requested_at  TEXT NOT NULL,
  expires_at    TEXT NOT NULL,
  decided_at    TEXT,
  decided_by    TEXT,                               -- user | tenant | timeout | system
  reason        TEXT,
  version       INTEGER NOT NULL,                   -- the run action's revision; older projections are ignored
  PRIMARY KEY (tenant_id, thread_id, id)
);
-- GET /v1/approvals?status=… (newest first).
CREATE INDEX agent_approvals_by_status ON agent_approvals (tenant_id, status, requested_at, id);
-- GET /v1/approvals?status=…&agentId=… (a tenant's pending approvals of one agent, newest first).
CREATE INDEX agent_approvals_by_agent ON agent_approvals (tenant_id, agent_id, status, requested_at, id);
