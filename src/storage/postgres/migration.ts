// The control plane's PostgreSQL schema as one canonical text, every name prefixed, so a tenant's own migration
// tool (Prisma, Drizzle, plain psql) can own it (docs/control-plane.md#owning-the-migration).

/** The table prefix when none is given: every table, index and constraint name starts with it. */
export const DEFAULT_PREFIX = "agent_threads_deploy";

/** Lower-case identifier, short enough that the longest derived name stays under PostgreSQL's 63 bytes. */
const PREFIX_PATTERN = /^[a-z_][a-z0-9_]{0,29}$/;

/** The schema version `postgresMigrationSql` brings a database to; `migrate()` applies the steps above the stored one. */
export const SCHEMA_VERSION = 1;

/** The prefixed name of each control-plane table. */
export interface PgTables {
  schemaVersion: string;
  tenants: string;
  agents: string;
  drafts: string;
  versions: string;
  runtimes: string;
  releases: string;
  allocations: string;
  activeReleases: string;
  pins: string;
}

/** Checks `prefix` (a bare lower-case identifier) and returns every table name under it. */
export function pgTables(prefix: string = DEFAULT_PREFIX): PgTables {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new Error(
      `Table prefix "${prefix}" must be a lower-case identifier of at most 30 characters ([a-z_][a-z0-9_]*).`,
    );
  }
  return {
    schemaVersion: `${prefix}_schema_version`,
    tenants: `${prefix}_tenants`,
    agents: `${prefix}_agents`,
    drafts: `${prefix}_agent_drafts`,
    versions: `${prefix}_agent_versions`,
    runtimes: `${prefix}_runtime_revisions`,
    releases: `${prefix}_releases`,
    allocations: `${prefix}_release_allocations`,
    activeReleases: `${prefix}_active_releases`,
    pins: `${prefix}_thread_pins`,
  };
}

/** The unique constraint on agents' public keys: a violation of it is "public key taken", any other "slug taken". */
export function publicKeyConstraint(prefix: string = DEFAULT_PREFIX): string {
  return `${pgTables(prefix).agents}_public_key_key`;
}

/** Each schema step, in order: step n brings the schema from version n-1 to n. Append only. */
const STEPS: readonly ((t: PgTables) => string)[] = [
  (t) => `-- Tenants: the one control-plane table keyed by id alone.
CREATE TABLE IF NOT EXISTS ${t.tenants} (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  created_at  timestamptz NOT NULL
);

-- Agents: every key leads with tenant_id; the public key is unique across tenants (it is how a launch finds one).
CREATE TABLE IF NOT EXISTS ${t.agents} (
  tenant_id               text NOT NULL REFERENCES ${t.tenants} (id),
  id                      text NOT NULL,
  slug                    text NOT NULL,
  name                    text NOT NULL,
  status                  text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  visibility              text NOT NULL CHECK (visibility IN ('public', 'private')),
  allowed_origins         jsonb NOT NULL DEFAULT '[]'::jsonb,
  public_key              text NOT NULL,
  retention_max_age_days  integer,
  created_at              timestamptz NOT NULL,
  updated_at              timestamptz NOT NULL,
  CONSTRAINT ${t.agents}_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT ${t.agents}_slug_key UNIQUE (tenant_id, slug),
  CONSTRAINT ${t.agents}_public_key_key UNIQUE (public_key)
);
CREATE INDEX IF NOT EXISTS ${t.agents}_by_created ON ${t.agents} (tenant_id, created_at, id);

-- One editable definition per agent, saved only at the revision the editor saw (canonical JSON text).
CREATE TABLE IF NOT EXISTS ${t.drafts} (
  tenant_id   text NOT NULL,
  agent_id    text NOT NULL,
  revision    bigint NOT NULL CHECK (revision > 0),
  definition  text NOT NULL,
  updated_at  timestamptz NOT NULL,
  CONSTRAINT ${t.drafts}_pkey PRIMARY KEY (tenant_id, agent_id),
  CONSTRAINT ${t.drafts}_agent_fkey FOREIGN KEY (tenant_id, agent_id) REFERENCES ${t.agents} (tenant_id, id)
);

-- Write-once versions: the artifact is canonical JSON text, re-verified against its digest on every read.
CREATE TABLE IF NOT EXISTS ${t.versions} (
  tenant_id       text NOT NULL,
  agent_id        text NOT NULL,
  version         bigint NOT NULL CHECK (version > 0),
  id              text NOT NULL,
  draft_revision  bigint NOT NULL,
  schema_version  integer NOT NULL,
  artifact        text NOT NULL,
  digest          text NOT NULL,
  created_at      timestamptz NOT NULL,
  CONSTRAINT ${t.versions}_pkey PRIMARY KEY (tenant_id, agent_id, version),
  CONSTRAINT ${t.versions}_id_key UNIQUE (tenant_id, id),
  CONSTRAINT ${t.versions}_agent_fkey FOREIGN KEY (tenant_id, agent_id) REFERENCES ${t.agents} (tenant_id, id)
);

-- Builds of the runtime that bind artifacts, and which artifact schema versions each understands (not tenant data).
CREATE TABLE IF NOT EXISTS ${t.runtimes} (
  id                         text PRIMARY KEY,
  supported_schema_versions  jsonb NOT NULL,
  created_at                 timestamptz NOT NULL
);

CREATE TABLE IF NOT EXISTS ${t.releases} (
  tenant_id         text NOT NULL,
  id                text NOT NULL,
  agent_id          text NOT NULL,
  environment       text NOT NULL CHECK (environment IN ('development', 'staging', 'production')),
  runtime_revision  text NOT NULL REFERENCES ${t.runtimes} (id),
  created_at        timestamptz NOT NULL,
  activated_at      timestamptz,
  CONSTRAINT ${t.releases}_pkey PRIMARY KEY (tenant_id, id),
  CONSTRAINT ${t.releases}_agent_fkey FOREIGN KEY (tenant_id, agent_id) REFERENCES ${t.agents} (tenant_id, id)
);
CREATE INDEX IF NOT EXISTS ${t.releases}_by_agent ON ${t.releases} (tenant_id, agent_id, created_at, id);

-- A release's weights sum to 10,000 (checked before writing); each names a version of the release's agent.
CREATE TABLE IF NOT EXISTS ${t.allocations} (
  tenant_id   text NOT NULL,
  release_id  text NOT NULL,
  position    integer NOT NULL,
  agent_id    text NOT NULL,
  version     bigint NOT NULL,
  weight      integer NOT NULL CHECK (weight > 0 AND weight <= 10000),
  CONSTRAINT ${t.allocations}_pkey PRIMARY KEY (tenant_id, release_id, position),
  CONSTRAINT ${t.allocations}_release_fkey FOREIGN KEY (tenant_id, release_id) REFERENCES ${t.releases} (tenant_id, id),
  CONSTRAINT ${t.allocations}_version_fkey FOREIGN KEY (tenant_id, agent_id, version)
    REFERENCES ${t.versions} (tenant_id, agent_id, version)
);

-- Which release serves each (tenant, agent, environment): activating replaces the row.
CREATE TABLE IF NOT EXISTS ${t.activeReleases} (
  tenant_id     text NOT NULL,
  agent_id      text NOT NULL,
  environment   text NOT NULL,
  release_id    text NOT NULL,
  activated_at  timestamptz NOT NULL,
  CONSTRAINT ${t.activeReleases}_pkey PRIMARY KEY (tenant_id, agent_id, environment),
  CONSTRAINT ${t.activeReleases}_release_fkey FOREIGN KEY (tenant_id, release_id) REFERENCES ${t.releases} (tenant_id, id)
);

-- A thread's pin is written once (the first turn's INSERT wins) and never follows a later release.
CREATE TABLE IF NOT EXISTS ${t.pins} (
  tenant_id    text NOT NULL,
  thread_id    text NOT NULL,
  agent_id     text NOT NULL,
  environment  text NOT NULL,
  release_id   text NOT NULL,
  version_id   text NOT NULL,
  version      bigint NOT NULL,
  digest       text NOT NULL,
  created_at   timestamptz NOT NULL,
  CONSTRAINT ${t.pins}_pkey PRIMARY KEY (tenant_id, thread_id),
  CONSTRAINT ${t.pins}_release_fkey FOREIGN KEY (tenant_id, release_id) REFERENCES ${t.releases} (tenant_id, id),
  CONSTRAINT ${t.pins}_version_fkey FOREIGN KEY (tenant_id, version_id) REFERENCES ${t.versions} (tenant_id, id)
);`,
];

/** The statements of step `n` (1-based) for `prefix`. */
export function migrationStep(n: number, prefix: string = DEFAULT_PREFIX): string {
  const step = STEPS[n - 1];
  if (step === undefined) throw new Error(`No control-plane schema step ${n}.`);
  return step(pgTables(prefix));
}

/** The version table and its first row; `migrate()` and the printed text both create it the same way. */
export function schemaVersionTableSql(prefix: string = DEFAULT_PREFIX): string {
  const t = pgTables(prefix);
  return `CREATE TABLE IF NOT EXISTS ${t.schemaVersion} (
  version     integer PRIMARY KEY,
  applied_at  timestamptz NOT NULL DEFAULT now()
);`;
}

/**
 * The canonical migration: every step up to SCHEMA_VERSION and the version rows, idempotent (IF NOT EXISTS,
 * ON CONFLICT DO NOTHING), so applying it twice, or running `migrate()` after it, changes nothing.
 */
export function postgresMigrationSql(prefix: string = DEFAULT_PREFIX): string {
  const t = pgTables(prefix);
  const steps = STEPS.map((_, i) => migrationStep(i + 1, prefix));
  const versions = STEPS.map((_, i) => `(${i + 1})`).join(", ");
  return `-- agent-threads control plane, schema version ${SCHEMA_VERSION}, table prefix "${prefix}".
-- Generated by \`npm run control-plane:sql -- --prefix ${prefix}\`. Apply it as one migration of your application,
-- in one transaction (your migration tool's, or \`psql --single-transaction\`). Applying it again changes nothing.

${schemaVersionTableSql(prefix)}

${steps.join("\n\n")}

INSERT INTO ${t.schemaVersion} (version) VALUES ${versions} ON CONFLICT (version) DO NOTHING;
`;
}
