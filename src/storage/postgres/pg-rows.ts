// The PostgreSQL control-plane rows as zod schemas, mapped to the port's types: `pg` hands back Date for timestamptz,
// strings for bigint and parsed values for jsonb, and columns are a boundary like any other.
import { z } from "zod";
import type { AgentEntity, Release, Tenant, ThreadPin } from "../../control/deployment-store";
import { ENVIRONMENTS } from "../../control/deployment-store";
import type { PgTables } from "./migration";
import type { PgQueryable, PgRunner } from "./pg-connection";

/** What every query function gets: the runner, the prefixed table names, and the clock's ISO stamp. */
export interface PgContext {
  db: PgRunner;
  t: PgTables;
  stamp: () => string;
  prefix: string;
}

/** A timestamptz as the ISO-8601 UTC string the port speaks (`pg` gives a Date; other drivers may give text). */
const timestamp = z.union([z.date(), z.string()]).transform((value, ctx) => {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) {
    ctx.addIssue({ code: "custom", message: "not a timestamp" });
    return z.NEVER;
  }
  return date.toISOString();
});

/** A bigint column (`pg` returns text so as not to lose precision) as a safe JavaScript integer. */
const bigint = z.union([z.number(), z.string()]).transform((value, ctx) => {
  const n = Number(value);
  if (!Number.isSafeInteger(n)) {
    ctx.addIssue({ code: "custom", message: "not a safe integer" });
    return z.NEVER;
  }
  return n;
});

const status = z.enum(["active", "disabled"]);
const environment = z.enum(ENVIRONMENTS);

export const PG_TENANT_COLUMNS = "id, name, status, created_at";

const tenantRow = z.object({ id: z.string(), name: z.string(), status, created_at: timestamp });

export function toTenant(row: unknown): Tenant {
  const r = tenantRow.parse(row);
  return { id: r.id, name: r.name, status: r.status, createdAt: r.created_at };
}

export const PG_AGENT_COLUMNS =
  "tenant_id, id, slug, name, status, visibility, allowed_origins, public_key, created_at, updated_at, retention_max_age_days";

const agentRow = z.object({
  tenant_id: z.string(),
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  status,
  visibility: z.enum(["public", "private"]),
  allowed_origins: z.array(z.string()),
  public_key: z.string(),
  created_at: timestamp,
  updated_at: timestamp,
  retention_max_age_days: z.number().int().nullable(),
});

export function toAgent(row: unknown): AgentEntity {
  const r = agentRow.parse(row);
  return {
    tenantId: r.tenant_id,
    id: r.id,
    slug: r.slug,
    name: r.name,
    status: r.status,
    visibility: r.visibility,
    allowedOrigins: r.allowed_origins,
    publicKey: r.public_key,
    retention: r.retention_max_age_days === null ? null : { maxAgeDays: r.retention_max_age_days },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export const draftRow = z.object({ revision: bigint, definition: z.string(), updated_at: timestamp });

export const PG_VERSION_COLUMNS =
  "tenant_id, agent_id, id, version, draft_revision, schema_version, artifact, digest, created_at";

export const versionRow = z.object({
  tenant_id: z.string(),
  agent_id: z.string(),
  id: z.string(),
  version: bigint,
  draft_revision: bigint,
  schema_version: z.number().int(),
  artifact: z.string(),
  digest: z.string(),
  created_at: timestamp,
});

/** The release columns (aliased `r`) with whether the release is its environment's active one. */
export function releaseColumns(t: PgTables): string {
  return `r.tenant_id, r.id, r.agent_id, r.environment, r.runtime_revision, r.created_at, r.activated_at,
  EXISTS (SELECT 1 FROM ${t.activeReleases} a WHERE a.tenant_id = r.tenant_id AND a.agent_id = r.agent_id
    AND a.environment = r.environment AND a.release_id = r.id) AS active`;
}

const releaseRow = z.object({
  tenant_id: z.string(),
  id: z.string(),
  agent_id: z.string(),
  environment,
  runtime_revision: z.string(),
  created_at: timestamp,
  activated_at: timestamp.nullable(),
  active: z.boolean(),
});

/** A release's allocations with each allocated version's id; callers add the tenant-bound WHERE. */
export function allocationSelect(t: PgTables): string {
  return `SELECT ra.release_id, ra.version, ra.weight, v.id AS version_id
  FROM ${t.allocations} ra
  JOIN ${t.versions} v ON v.tenant_id = ra.tenant_id AND v.agent_id = ra.agent_id AND v.version = ra.version`;
}

const allocationRow = z.object({
  release_id: z.string(),
  version: bigint,
  weight: z.number().int(),
  version_id: z.string(),
});

export type AllocationRow = z.output<typeof allocationRow>;

export function parseAllocations(rows: readonly unknown[]): AllocationRow[] {
  return rows.map((row) => allocationRow.parse(row));
}

export function toRelease(row: unknown, allocations: readonly AllocationRow[]): Release {
  const r = releaseRow.parse(row);
  return {
    tenantId: r.tenant_id,
    id: r.id,
    agentId: r.agent_id,
    environment: r.environment,
    runtimeRevision: r.runtime_revision,
    allocations: allocations
      .filter((a) => a.release_id === r.id)
      .map((a) => ({ version: a.version, weight: a.weight, versionId: a.version_id })),
    createdAt: r.created_at,
    activatedAt: r.activated_at,
    active: r.active,
  };
}

export const PG_PIN_COLUMNS =
  "tenant_id, thread_id, agent_id, environment, release_id, version_id, version, digest, created_at";

const pinRow = z.object({
  tenant_id: z.string(),
  thread_id: z.string(),
  agent_id: z.string(),
  environment,
  release_id: z.string(),
  version_id: z.string(),
  version: bigint,
  digest: z.string(),
  created_at: timestamp,
});

export function toPin(row: unknown): ThreadPin {
  const r = pinRow.parse(row);
  return {
    tenantId: r.tenant_id,
    threadId: r.thread_id,
    agentId: r.agent_id,
    environment: r.environment,
    releaseId: r.release_id,
    versionId: r.version_id,
    version: r.version,
    digest: r.digest,
    createdAt: r.created_at,
  };
}

/** The first row of a query, or null. */
export async function firstRow(
  db: PgQueryable,
  text: string,
  values: unknown[],
): Promise<Record<string, unknown> | null> {
  const { rows } = await db.query(text, values);
  return rows[0] ?? null;
}
