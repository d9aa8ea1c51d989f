// The DeploymentStore on D1: every statement on tenant data binds tenant_id; multi-row writes go in one batch.
import { z } from "zod";
import { AppError, fail, ok, type Result } from "../errors";
import { selectAllocation } from "./allocation";
import { canonicalJson, digestOf } from "./canonical-json";
import {
  AGENT_COLUMNS,
  type AllocationRow,
  allocationRow,
  jsonText,
  PIN_COLUMNS,
  RELEASE_COLUMNS,
  TENANT_COLUMNS,
  toAgent,
  toPin,
  toRelease,
  toTenant,
  VERSION_COLUMNS,
  versionRow,
} from "./d1-rows";
import type {
  AgentEntity,
  AgentPatch,
  AgentVersion,
  Allocation,
  DeploymentStore,
  Draft,
  Environment,
  NewAgent,
  Page,
  PageRequest,
  Release,
  RuntimeRevision,
  Tenant,
  ThreadPin,
} from "./deployment-store";
import { newId } from "./ids";
import { decodeCursor, encodeCursor, pageLimit, timeIdCursor, versionCursor } from "./page-cursor";
import {
  agentNotFound,
  agentPatchSchema,
  artifactFromDefinition,
  assignmentSchema,
  badRevision,
  canonicalDraft,
  checkRuntime,
  draftDefinitionSchema,
  isVersionNumber,
  matchPin,
  missingVersion,
  newAgentSchema,
  noActiveRelease,
  pageOf,
  parseInput,
  publicKeyTaken,
  releaseInputSchema,
  revisionSchema,
  slugTaken,
  staleDraft,
  unknownRuntime,
  unsupportedVersion,
  verifyStoredArtifact,
  versionNotFound,
} from "./store-rules";

/** Publishing retries this often when a concurrent writer took the version number first. */
const PUBLISH_ATTEMPTS = 3;

const ALLOCATION_SELECT = `SELECT ra.release_id, ra.version, ra.weight, v.id AS version_id
  FROM release_allocations ra
  JOIN agent_versions v ON v.tenant_id = ra.tenant_id AND v.agent_id = ra.agent_id AND v.version = ra.version`;

const draftRow = z.object({
  revision: z.number().int(),
  definition: jsonText(draftDefinitionSchema),
  updated_at: z.string(),
});

function uniqueViolation(error: unknown): string | null {
  const message = error instanceof Error ? error.message : String(error);
  const match = /UNIQUE constraint failed: ([\w., ]+)/.exec(message);
  return match?.[1] ?? null;
}

export class D1DeploymentStore implements DeploymentStore {
  readonly #db: D1Database;
  readonly #now: () => Date;

  constructor(db: D1Database, options: { now?: () => Date } = {}) {
    this.#db = db;
    this.#now = options.now ?? (() => new Date());
  }

  #stamp(): string {
    return this.#now().toISOString();
  }

  async createTenant(input: { name: string }): Promise<Tenant> {
    const tenant: Tenant = { id: newId("ten"), name: input.name, status: "active", createdAt: this.#stamp() };
    await this.#db
      .prepare("INSERT INTO tenants (id, name, status, created_at) VALUES (?, ?, ?, ?)")
      .bind(tenant.id, tenant.name, tenant.status, tenant.createdAt)
      .run();
    return tenant;
  }

  async getTenant(tenantId: string): Promise<Tenant | null> {
    const row = await this.#db
      .prepare(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ?`)
      .bind(tenantId)
      .first();
    return row === null ? null : toTenant(row);
  }

  async createAgent(tenantId: string, input: NewAgent): Promise<Result<AgentEntity>> {
    const parsed = parseInput(newAgentSchema, input, "Agent");
    if (!parsed.ok) return parsed;
    const agent = parsed.value;
    const now = this.#stamp();
    try {
      const row = await this.#db
        .prepare(
          `INSERT INTO agents (${AGENT_COLUMNS})
           SELECT ?1, ?2, ?3, ?4, 'active', ?5, ?6, ?7, ?8, ?8 WHERE EXISTS (SELECT 1 FROM tenants WHERE id = ?1)
           RETURNING ${AGENT_COLUMNS}`,
        )
        .bind(
          tenantId,
          newId("agt"),
          agent.slug,
          agent.name,
          agent.visibility,
          JSON.stringify(agent.allowedOrigins),
          agent.publicKey,
          now,
        )
        .first();
      return row === null ? fail("not_found", "Tenant not found.") : ok(toAgent(row));
    } catch (error) {
      return agentConflict(error);
    }
  }

  async getAgent(tenantId: string, agentId: string): Promise<AgentEntity | null> {
    const row = await this.#db
      .prepare(`SELECT ${AGENT_COLUMNS} FROM agents WHERE tenant_id = ? AND id = ?`)
      .bind(tenantId, agentId)
      .first();
    return row === null ? null : toAgent(row);
  }

  async findAgentByPublicKey(publicKey: string): Promise<AgentEntity | null> {
    // The one agent read without a tenant: the key is how the tenant is found (unique index agents_by_public_key).
    const row = await this.#db
      .prepare(`SELECT ${AGENT_COLUMNS} FROM agents WHERE public_key = ?`)
      .bind(publicKey)
      .first();
    return row === null ? null : toAgent(row);
  }

  async listAgents(tenantId: string, page: PageRequest): Promise<Page<AgentEntity>> {
    const limit = pageLimit(page.limit);
    const [createdAt, id] = page.after === undefined ? ["", ""] : decodeCursor(page.after, timeIdCursor);
    const { results } = await this.#db
      .prepare(
        `SELECT ${AGENT_COLUMNS} FROM agents
         WHERE tenant_id = ?1 AND (created_at > ?2 OR (created_at = ?2 AND id > ?3))
         ORDER BY created_at, id LIMIT ?4`,
      )
      .bind(tenantId, createdAt, id, limit + 1)
      .all();
    return pageOf(results.map(toAgent), limit, (a) => encodeCursor([a.createdAt, a.id]));
  }

  async updateAgent(tenantId: string, agentId: string, patch: AgentPatch): Promise<Result<AgentEntity>> {
    const parsed = parseInput(agentPatchSchema, patch, "Agent patch");
    if (!parsed.ok) return parsed;
    const p = parsed.value;
    const changes = [p.name, p.status, p.visibility, p.allowedOrigins, p.publicKey];
    if (changes.every((value) => value === undefined)) {
      const agent = await this.getAgent(tenantId, agentId);
      return agent === null ? agentNotFound() : ok(agent);
    }
    try {
      // COALESCE keeps each absent field, so two patches of different fields never undo each other.
      const row = await this.#db
        .prepare(
          `UPDATE agents SET name = COALESCE(?3, name), status = COALESCE(?4, status),
             visibility = COALESCE(?5, visibility), allowed_origins = COALESCE(?6, allowed_origins),
             public_key = COALESCE(?7, public_key), updated_at = ?8
           WHERE tenant_id = ?1 AND id = ?2 RETURNING ${AGENT_COLUMNS}`,
        )
        .bind(
          tenantId,
          agentId,
          p.name ?? null,
          p.status ?? null,
          p.visibility ?? null,
          p.allowedOrigins === undefined ? null : JSON.stringify(p.allowedOrigins),
          p.publicKey ?? null,
          this.#stamp(),
        )
        .first();
      return row === null ? agentNotFound() : ok(toAgent(row));
    } catch (error) {
      return agentConflict(error);
    }
  }

  async #agentExists(tenantId: string, agentId: string): Promise<boolean> {
    const row = await this.#db
      .prepare("SELECT 1 AS found FROM agents WHERE tenant_id = ? AND id = ?")
      .bind(tenantId, agentId)
      .first();
    return row !== null;
  }

  async saveDraft(
    tenantId: string,
    agentId: string,
    expectedRevision: number,
    definition: unknown,
  ): Promise<Result<{ revision: number }>> {
    if (!revisionSchema.safeParse(expectedRevision).success) return badRevision("expectedRevision");
    const text = canonicalDraft(definition);
    if (!text.ok) return text;
    if (!(await this.#agentExists(tenantId, agentId))) return agentNotFound();
    const now = this.#stamp();
    const statement =
      expectedRevision === 0
        ? this.#db
            .prepare(
              `INSERT INTO agent_drafts (tenant_id, agent_id, revision, definition, updated_at)
               VALUES (?1, ?2, 1, ?3, ?4) ON CONFLICT (tenant_id, agent_id) DO NOTHING`,
            )
            .bind(tenantId, agentId, text.value, now)
        : this.#db
            .prepare(
              `UPDATE agent_drafts SET revision = revision + 1, definition = ?3, updated_at = ?4
               WHERE tenant_id = ?1 AND agent_id = ?2 AND revision = ?5`,
            )
            .bind(tenantId, agentId, text.value, now, expectedRevision);
    const result = await statement.run();
    return result.meta.changes === 1 ? ok({ revision: expectedRevision + 1 }) : staleDraft();
  }

  async getDraft(tenantId: string, agentId: string): Promise<Draft | null> {
    const row = await this.#db
      .prepare(
        "SELECT revision, definition, updated_at FROM agent_drafts WHERE tenant_id = ? AND agent_id = ?",
      )
      .bind(tenantId, agentId)
      .first();
    if (row === null) return null;
    const r = draftRow.parse(row);
    return { tenantId, agentId, revision: r.revision, definition: r.definition, updatedAt: r.updated_at };
  }

  async publishDraft(
    tenantId: string,
    agentId: string,
    draftRevision: number,
  ): Promise<Result<AgentVersion>> {
    if (!revisionSchema.safeParse(draftRevision).success || draftRevision < 1)
      return badRevision("draftRevision");
    if (!(await this.#agentExists(tenantId, agentId))) return agentNotFound();
    const draft = await this.getDraft(tenantId, agentId);
    if (draft === null) return fail("not_found", "Draft not found.");
    if (draft.revision !== draftRevision) return staleDraft();
    const artifact = artifactFromDefinition(draft.definition);
    if (!artifact.ok) return artifact;
    const text = canonicalJson(artifact.value);
    const digest = await digestOf(artifact.value);
    const createdAt = this.#stamp();
    // One INSERT … SELECT MAX(version)+1 numbers the version atomically (a D1 statement runs alone) and only
    // while the draft is still at the named revision; the primary key backstops the number, with a retry.
    for (let attempt = 0; attempt < PUBLISH_ATTEMPTS; attempt++) {
      const id = newId("ver");
      try {
        const row = await this.#db
          .prepare(
            `INSERT INTO agent_versions (${VERSION_COLUMNS})
             SELECT ?1, ?2, ?3, next, ?4, ?5, ?6, ?7, ?8
             FROM (SELECT COALESCE(MAX(version), 0) + 1 AS next FROM agent_versions
                   WHERE tenant_id = ?1 AND agent_id = ?2)
             WHERE EXISTS (SELECT 1 FROM agent_drafts WHERE tenant_id = ?1 AND agent_id = ?2 AND revision = ?4)
             RETURNING version`,
          )
          .bind(tenantId, agentId, id, draftRevision, artifact.value.schemaVersion, text, digest, createdAt)
          .first();
        if (row === null) return staleDraft();
        const { version } = z.object({ version: z.number().int() }).parse(row);
        return ok({
          tenantId,
          agentId,
          id,
          version,
          draftRevision,
          digest,
          artifact: artifact.value,
          createdAt,
        });
      } catch (error) {
        if (uniqueViolation(error) === null) throw error;
      }
    }
    return fail("conflict", "Another version was published at the same time; retry.");
  }

  async #version(sql: string, ...binds: unknown[]): Promise<Result<AgentVersion>> {
    const row = await this.#db
      .prepare(`SELECT ${VERSION_COLUMNS} FROM agent_versions WHERE ${sql}`)
      .bind(...binds)
      .first();
    return row === null ? versionNotFound() : toVerifiedVersion(row);
  }

  async getVersion(tenantId: string, agentId: string, version: number): Promise<Result<AgentVersion>> {
    if (!isVersionNumber(version)) return versionNotFound();
    return this.#version("tenant_id = ? AND agent_id = ? AND version = ?", tenantId, agentId, version);
  }

  getVersionById(tenantId: string, versionId: string): Promise<Result<AgentVersion>> {
    return this.#version("tenant_id = ? AND id = ?", tenantId, versionId);
  }

  async listVersions(tenantId: string, agentId: string, page: PageRequest): Promise<Page<AgentVersion>> {
    const limit = pageLimit(page.limit);
    const [after] = page.after === undefined ? [0] : decodeCursor(page.after, versionCursor);
    const { results } = await this.#db
      .prepare(
        `SELECT ${VERSION_COLUMNS} FROM agent_versions WHERE tenant_id = ? AND agent_id = ? AND version > ?
         ORDER BY version LIMIT ?`,
      )
      .bind(tenantId, agentId, after, limit + 1)
      .all();
    const items: AgentVersion[] = [];
    for (const row of results) {
      const version = await toVerifiedVersion(row);
      if (!version.ok) throw new AppError(version.code, version.message);
      items.push(version.value);
    }
    return pageOf(items, limit, (v) => encodeCursor([v.version]));
  }

  async registerRuntime(runtime: RuntimeRevision): Promise<void> {
    const r = checkRuntime(runtime);
    await this.#db
      .prepare(
        `INSERT INTO runtime_revisions (id, supported_schema_versions, created_at) VALUES (?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET supported_schema_versions = excluded.supported_schema_versions`,
      )
      .bind(r.id, JSON.stringify(r.supportedSchemaVersions), this.#stamp())
      .run();
  }

  async createRelease(
    tenantId: string,
    agentId: string,
    input: { environment: Environment; allocations: Allocation[]; runtimeRevision: string },
  ): Promise<Result<Release>> {
    const parsed = parseInput(releaseInputSchema, input, "Release");
    if (!parsed.ok) return parsed;
    const { environment, allocations, runtimeRevision } = parsed.value;
    if (!(await this.#agentExists(tenantId, agentId))) return agentNotFound();

    const runtimeRow = await this.#db
      .prepare("SELECT supported_schema_versions FROM runtime_revisions WHERE id = ?")
      .bind(runtimeRevision)
      .first();
    if (runtimeRow === null) return unknownRuntime(runtimeRevision);
    const supported = z
      .object({ supported_schema_versions: jsonText(z.array(z.number().int())) })
      .parse(runtimeRow).supported_schema_versions;

    const numbers = allocations.map((a) => a.version);
    const { results } = await this.#db
      .prepare(
        `SELECT id, version, schema_version FROM agent_versions
         WHERE tenant_id = ? AND agent_id = ? AND version IN (${numbers.map(() => "?").join(", ")})`,
      )
      .bind(tenantId, agentId, ...numbers)
      .all();
    const found = new Map(
      results
        .map((row) =>
          z.object({ id: z.string(), version: z.number(), schema_version: z.number() }).parse(row),
        )
        .map((v) => [v.version, v]),
    );
    const resolved: (Allocation & { versionId: string })[] = [];
    for (const [index, allocation] of allocations.entries()) {
      const version = found.get(allocation.version);
      if (version === undefined) return missingVersion(index, allocation.version);
      if (!supported.includes(version.schema_version)) {
        return unsupportedVersion(index, version.schema_version, runtimeRevision);
      }
      resolved.push({ version: allocation.version, weight: allocation.weight, versionId: version.id });
    }

    const release: Release = {
      tenantId,
      id: newId("rel"),
      agentId,
      environment,
      runtimeRevision,
      allocations: resolved,
      createdAt: this.#stamp(),
      activatedAt: null,
      active: false,
    };
    await this.#db.batch([
      this.#db
        .prepare(
          `INSERT INTO releases (tenant_id, id, agent_id, environment, runtime_revision, created_at, activated_at)
           VALUES (?, ?, ?, ?, ?, ?, NULL)`,
        )
        .bind(tenantId, release.id, agentId, environment, runtimeRevision, release.createdAt),
      ...resolved.map((a, position) =>
        this.#db
          .prepare(
            `INSERT INTO release_allocations (tenant_id, release_id, position, agent_id, version, weight)
             VALUES (?, ?, ?, ?, ?, ?)`,
          )
          .bind(tenantId, release.id, position, agentId, a.version, a.weight),
      ),
    ]);
    return ok(release);
  }

  async activateRelease(tenantId: string, agentId: string, releaseId: string): Promise<Result<Release>> {
    const now = this.#stamp();
    const [marked] = await this.#db.batch([
      this.#db
        .prepare("UPDATE releases SET activated_at = ?1 WHERE tenant_id = ?2 AND agent_id = ?3 AND id = ?4")
        .bind(now, tenantId, agentId, releaseId),
      // The WHERE clause also keeps SQLite from reading ON CONFLICT as a join constraint.
      this.#db
        .prepare(
          `INSERT INTO active_releases (tenant_id, agent_id, environment, release_id, activated_at)
           SELECT tenant_id, agent_id, environment, id, ?1 FROM releases
           WHERE tenant_id = ?2 AND agent_id = ?3 AND id = ?4
           ON CONFLICT (tenant_id, agent_id, environment)
           DO UPDATE SET release_id = excluded.release_id, activated_at = excluded.activated_at`,
        )
        .bind(now, tenantId, agentId, releaseId),
    ]);
    if (marked === undefined || marked.meta.changes === 0) return fail("not_found", "Release not found.");
    const release = await this.getRelease(tenantId, agentId, releaseId);
    return release === null ? fail("not_found", "Release not found.") : ok(release);
  }

  async getRelease(tenantId: string, agentId: string, releaseId: string): Promise<Release | null> {
    const [releases, allocations] = await this.#db.batch([
      this.#db
        .prepare(
          `SELECT ${RELEASE_COLUMNS} FROM releases r WHERE r.tenant_id = ? AND r.agent_id = ? AND r.id = ?`,
        )
        .bind(tenantId, agentId, releaseId),
      this.#db
        .prepare(`${ALLOCATION_SELECT} WHERE ra.tenant_id = ? AND ra.release_id = ? ORDER BY ra.position`)
        .bind(tenantId, releaseId),
    ]);
    const row = releases?.results[0];
    return row === undefined ? null : toRelease(row, parseAllocations(allocations?.results ?? []));
  }

  async listReleases(tenantId: string, agentId: string, page: PageRequest): Promise<Page<Release>> {
    const limit = pageLimit(page.limit);
    const [createdAt, id] = page.after === undefined ? ["", ""] : decodeCursor(page.after, timeIdCursor);
    const pageWhere = `tenant_id = ?1 AND agent_id = ?2 AND (created_at > ?3 OR (created_at = ?3 AND id > ?4))
      ORDER BY created_at, id LIMIT ?5`;
    const binds = [tenantId, agentId, createdAt, id, limit + 1];
    // One batch is one transaction, so the releases and their allocations are read from the same state.
    const [releases, allocations] = await this.#db.batch([
      this.#db.prepare(`SELECT ${RELEASE_COLUMNS} FROM releases r WHERE ${pageWhere}`).bind(...binds),
      this.#db
        .prepare(
          `${ALLOCATION_SELECT} WHERE ra.tenant_id = ?1
           AND ra.release_id IN (SELECT id FROM releases WHERE ${pageWhere}) ORDER BY ra.position`,
        )
        .bind(...binds),
    ]);
    const allocationRows = parseAllocations(allocations?.results ?? []);
    const items = (releases?.results ?? []).map((row) => toRelease(row, allocationRows));
    return pageOf(items, limit, (r) => encodeCursor([r.createdAt, r.id]));
  }

  async getActiveRelease(
    tenantId: string,
    agentId: string,
    environment: Environment,
  ): Promise<Release | null> {
    const row = await this.#activeReleaseId(tenantId, agentId, environment);
    return row === null ? null : this.getRelease(tenantId, agentId, row);
  }

  async #activeReleaseId(tenantId: string, agentId: string, environment: string): Promise<string | null> {
    return this.#db
      .prepare(
        "SELECT release_id FROM active_releases WHERE tenant_id = ? AND agent_id = ? AND environment = ?",
      )
      .bind(tenantId, agentId, environment)
      .first<string>("release_id");
  }

  async assignThread(
    tenantId: string,
    input: { agentId: string; environment: Environment; threadId: string },
  ): Promise<Result<ThreadPin>> {
    const parsed = parseInput(assignmentSchema, input, "Thread assignment");
    if (!parsed.ok) return parsed;
    const { agentId, environment, threadId } = parsed.value;
    const existing = await this.getPin(tenantId, threadId);
    if (existing !== null) return matchPin(existing, parsed.value);

    const releaseId = await this.#activeReleaseId(tenantId, agentId, environment);
    if (releaseId === null) return noActiveRelease();
    const { results } = await this.#db
      .prepare(`${ALLOCATION_SELECT} WHERE ra.tenant_id = ? AND ra.release_id = ? ORDER BY ra.position`)
      .bind(tenantId, releaseId)
      .all();
    const chosen = await selectAllocation(
      { tenantId, environment, agentId, releaseId, threadId },
      parseAllocations(results),
    );
    // The pinned version is verified before it is pinned: a tampered artifact must never be bound.
    const version = await this.getVersionById(tenantId, chosen.version_id);
    if (!version.ok) return version;

    // Concurrent first turns all try to insert; the first wins and every caller reads that one pin.
    const [, pinned] = await this.#db.batch([
      this.#db
        .prepare(
          `INSERT INTO thread_pins (${PIN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (tenant_id, thread_id) DO NOTHING`,
        )
        .bind(
          tenantId,
          threadId,
          agentId,
          environment,
          releaseId,
          version.value.id,
          version.value.version,
          version.value.digest,
          this.#stamp(),
        ),
      this.#db
        .prepare(`SELECT ${PIN_COLUMNS} FROM thread_pins WHERE tenant_id = ? AND thread_id = ?`)
        .bind(tenantId, threadId),
    ]);
    const row = pinned?.results[0];
    if (row === undefined) throw new Error("Thread pin vanished after being written.");
    return matchPin(toPin(row), parsed.value);
  }

  async getPin(tenantId: string, threadId: string): Promise<ThreadPin | null> {
    const row = await this.#db
      .prepare(`SELECT ${PIN_COLUMNS} FROM thread_pins WHERE tenant_id = ? AND thread_id = ?`)
      .bind(tenantId, threadId)
      .first();
    return row === null ? null : toPin(row);
  }
}

async function toVerifiedVersion(row: unknown): Promise<Result<AgentVersion>> {
  const r = versionRow.parse(row);
  const artifact = await verifyStoredArtifact(r.artifact, r.digest);
  if (!artifact.ok) return artifact;
  return ok({
    tenantId: r.tenant_id,
    agentId: r.agent_id,
    id: r.id,
    version: r.version,
    draftRevision: r.draft_revision,
    digest: r.digest,
    artifact: artifact.value,
    createdAt: r.created_at,
  });
}

function parseAllocations(rows: readonly unknown[]): AllocationRow[] {
  return rows.map((row) => allocationRow.parse(row));
}

function agentConflict(error: unknown): Result<never> {
  const columns = uniqueViolation(error);
  if (columns === null) throw error;
  return columns.includes("public_key") ? publicKeyTaken() : slugTaken();
}
