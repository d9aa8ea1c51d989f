-- Migration number: 0020
-- Evaluations that gate releases (docs/evals.md): suites of cases per agent, runs of a suite against one artifact
-- digest with a result per case, an agent's release gate, and the overrides of that gate.

-- A suite: its cases as one JSON document, saved only at the revision the editor saw (If-Match, like drafts).
CREATE TABLE eval_suites (
  tenant_id   TEXT NOT NULL,
  id          TEXT NOT NULL,                 -- `es_…`
  agent_id    TEXT NOT NULL,
  name        TEXT NOT NULL,
  revision    INTEGER NOT NULL,              -- 1 on create, +1 on every change
  cases       TEXT NOT NULL,                 -- JSON: the cases (docs/evals.md#cases)
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX eval_suites_by_agent ON eval_suites (tenant_id, agent_id, id);

-- A run of one suite revision against one artifact (a draft revision or a version), driven by the tenant's
-- TenantEvals object. The release gate looks runs up by (agent, suite, suite revision, digest).
CREATE TABLE eval_runs (
  tenant_id       TEXT NOT NULL,
  id              TEXT NOT NULL,             -- `er_…`
  agent_id        TEXT NOT NULL,
  suite_id        TEXT NOT NULL,
  suite_revision  INTEGER NOT NULL,
  target          TEXT NOT NULL,             -- JSON: {"draftRevision": n} or {"version": n}
  digest          TEXT NOT NULL,             -- the target's artifact digest
  repeats         INTEGER NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  total           INTEGER NOT NULL,          -- cases x repeats
  passed          INTEGER NOT NULL DEFAULT 0,
  failed          INTEGER NOT NULL DEFAULT 0,
  input_tokens    INTEGER NOT NULL DEFAULT 0,
  output_tokens   INTEGER NOT NULL DEFAULT 0,
  created_at      TEXT NOT NULL,
  started_at      TEXT,
  completed_at    TEXT,
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX eval_runs_by_digest ON eval_runs (tenant_id, agent_id, suite_id, digest, suite_revision);
CREATE INDEX eval_runs_by_suite ON eval_runs (tenant_id, agent_id, suite_id, created_at);

-- One execution of one case (a case runs `repeats` times): pass or fail, and everything the result view shows.
CREATE TABLE eval_case_results (
  tenant_id   TEXT NOT NULL,
  run_id      TEXT NOT NULL,
  case_id     TEXT NOT NULL,
  repeat      INTEGER NOT NULL,              -- 0-based
  passed      INTEGER NOT NULL,              -- 0 or 1
  result      TEXT NOT NULL,                 -- JSON: failures, judge verdicts, transcript and its hash, tokens, time
  PRIMARY KEY (tenant_id, run_id, case_id, repeat)
);

-- An agent's release gate: suites whose current revision must have a completed run meeting `min_pass_rate` on a
-- version's digest before a release raises that version's weight.
CREATE TABLE agent_release_gates (
  tenant_id      TEXT NOT NULL,
  agent_id       TEXT NOT NULL,
  suite_ids      TEXT NOT NULL,              -- JSON array of suite ids
  min_pass_rate  REAL NOT NULL,              -- 0..1
  updated_at     TEXT NOT NULL,
  PRIMARY KEY (tenant_id, agent_id)
);

-- A release created or activated past a failing gate with `force: true`: who, when, why, and what failed.
CREATE TABLE release_gate_overrides (
  tenant_id   TEXT NOT NULL,
  release_id  TEXT NOT NULL,
  action      TEXT NOT NULL CHECK (action IN ('create', 'activate')),
  api_key_id  TEXT NOT NULL,
  reason      TEXT NOT NULL,
  failing     TEXT NOT NULL,                 -- JSON: the gate's failures at that moment
  created_at  TEXT NOT NULL,
  PRIMARY KEY (tenant_id, release_id, action, created_at)
);
