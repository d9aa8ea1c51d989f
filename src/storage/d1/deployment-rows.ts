// The D1 control-plane rows as zod schemas, and their mapping to the port's types: columns are a boundary too.
import { z } from "zod";
import type { AgentEntity, Release, Tenant, ThreadPin } from "../../control/deployment-store";
import { ENVIRONMENTS } from "../../control/deployment-store";

/** A TEXT column that holds JSON, parsed and then validated with `schema`. */
export function jsonText<S extends z.ZodType>(schema: S) {
  return z
    .string()
    .transform((text, ctx): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        ctx.addIssue({ code: "custom", message: "column does not hold JSON" });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

const status = z.enum(["active", "disabled"]);
const environment = z.enum(ENVIRONMENTS);

const tenantRow = z.object({ id: z.string(), name: z.string(), status, created_at: z.string() });

export const TENANT_COLUMNS = "id, name, status, created_at";

export function toTenant(row: unknown): Tenant {
  const r = tenantRow.parse(row);
  return { id: r.id, name: r.name, status: r.status, createdAt: r.created_at };
}

export const AGENT_COLUMNS =
  "tenant_id, id, slug, name, status, visibility, allowed_origins, public_key, created_at, updated_at, retention_max_age_days";

const agentRow = z.object({
  tenant_id: z.string(),
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  status,
  visibility: z.enum(["public", "private"]),
  allowed_origins: jsonText(z.array(z.string())),
  public_key: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
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

export const VERSION_COLUMNS =
  "tenant_id, agent_id, id, version, draft_revision, schema_version, artifact, digest, created_at";

export const versionRow = z.object({
  tenant_id: z.string(),
  agent_id: z.string(),
  id: z.string(),
  version: z.number().int(),
  draft_revision: z.number().int(),
  schema_version: z.number().int(),
  artifact: z.string(),
  digest: z.string(),
  created_at: z.string(),
});

export const RELEASE_COLUMNS = `r.tenant_id, r.id, r.agent_id, r.environment, r.runtime_revision, r.created_at,
  r.activated_at, EXISTS (SELECT 1 FROM active_releases a WHERE a.tenant_id = r.tenant_id
  AND a.agent_id = r.agent_id AND a.environment = r.environment AND a.release_id = r.id) AS active`;

const releaseRow = z.object({
  tenant_id: z.string(),
  id: z.string(),
  agent_id: z.string(),
  environment,
  runtime_revision: z.string(),
  created_at: z.string(),
  activated_at: z.string().nullable(),
  active: z.union([z.literal(0), z.literal(1)]),
});

export const allocationRow = z.object({
  release_id: z.string(),
  version: z.number().int(),
  weight: z.number().int(),
  version_id: z.string(),
});

export type AllocationRow = z.output<typeof allocationRow>;

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
    active: r.active === 1,
  };
}

export const PIN_COLUMNS =
  "tenant_id, thread_id, agent_id, environment, release_id, version_id, version, digest, created_at";

const pinRow = z.object({
  tenant_id: z.string(),
  thread_id: z.string(),
  agent_id: z.string(),
  environment,
  release_id: z.string(),
  version_id: z.string(),
  version: z.number().int(),
  digest: z.string(),
  created_at: z.string(),
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

/** The columns a D1 UNIQUE violation names, or null when `error` is something else. */
export function uniqueViolation(error: unknown): string | null {
  const message = error instanceof Error ? error.message : String(error);
  const match = message.match(/UNIQUE constraint failed: ([\w., ]+)/);
  return match?.[1] ?? null;
}
