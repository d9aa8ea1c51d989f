// The DeploymentStore in memory: the reference the D1 store is held to by the conformance suite, and a fast fake.

import { selectAllocation } from "../../src/control/allocation";
import { canonicalJson, digestOf } from "../../src/control/canonical-json";
import type {
  AgentEntity,
  AgentPatch,
  AgentVersion,
  Allocation,
  DeploymentStore,
  Draft,
  Environment,
  LaunchAgent,
  LaunchLookup,
  NewAgent,
  Page,
  PageRequest,
  Release,
  RuntimeRevision,
  Tenant,
  ThreadPin,
} from "../../src/control/deployment-store";
import { newId } from "../../src/control/ids";
import {
  decodeCursor,
  encodeCursor,
  pageLimit,
  timeIdCursor,
  versionCursor,
} from "../../src/control/page-cursor";
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
} from "../../src/control/store-rules";
import { AppError, fail, ok, type Result } from "../../src/errors";
import type { StoreUnderTest, TestClock } from "./deployment-store-conformance";

/** A version as stored: the artifact is kept as canonical JSON text, exactly as D1 keeps it. */
export interface StoredVersion {
  tenantId: string;
  agentId: string;
  id: string;
  version: number;
  draftRevision: number;
  schemaVersion: number;
  artifact: string;
  digest: string;
  createdAt: string;
}

type StoredRelease = Omit<Release, "active">;

/** The store's state, one map per table; tests pass their own to reach rows the way SQL would. */
export interface MemoryTables {
  tenants: Map<string, Tenant>;
  agents: Map<string, AgentEntity>;
  drafts: Map<string, { revision: number; definition: string; updatedAt: string }>;
  versions: Map<string, StoredVersion>;
  runtimes: Map<string, RuntimeRevision>;
  releases: Map<string, StoredRelease>;
  activeReleases: Map<string, { releaseId: string; activatedAt: string }>;
  pins: Map<string, ThreadPin>;
}

export function createMemoryTables(): MemoryTables {
  return {
    tenants: new Map(),
    agents: new Map(),
    drafts: new Map(),
    versions: new Map(),
    runtimes: new Map(),
    releases: new Map(),
    activeReleases: new Map(),
    pins: new Map(),
  };
}

/** Length-prefixed parts, so that ("a", "b|c") and ("a|b", "c") can never share a key. */
export function scopedKey(...parts: (string | number)[]): string {
  return parts.map((part) => `${String(part).length}:${part}`).join("|");
}

const byTimeThenId = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

const isAfter = (item: { createdAt: string; id: string }, createdAt: string, id: string) =>
  item.createdAt > createdAt || (item.createdAt === createdAt && item.id > id);

export class MemoryDeploymentStore implements DeploymentStore {
  readonly #t: MemoryTables;
  readonly #now: () => Date;

  constructor(options: { now?: () => Date; tables?: MemoryTables } = {}) {
    this.#now = options.now ?? (() => new Date());
    this.#t = options.tables ?? createMemoryTables();
  }

  #stamp(): string {
    return this.#now().toISOString();
  }

  async createTenant(input: { name: string }): Promise<Tenant> {
    const tenant: Tenant = { id: newId("ten"), name: input.name, status: "active", createdAt: this.#stamp() };
    this.#t.tenants.set(tenant.id, tenant);
    return structuredClone(tenant);
  }

  async getTenant(tenantId: string): Promise<Tenant | null> {
    return copyOrNull(this.#t.tenants.get(tenantId));
  }

  async createAgent(tenantId: string, input: NewAgent): Promise<Result<AgentEntity>> {
    const parsed = parseInput(newAgentSchema, input, "Agent");
    if (!parsed.ok) return parsed;
    const a = parsed.value;
    if (!this.#t.tenants.has(tenantId)) return fail("not_found", "Tenant not found.");
    const agents = [...this.#t.agents.values()];
    if (agents.some((x) => x.tenantId === tenantId && x.slug === a.slug)) return slugTaken();
    if (agents.some((x) => x.publicKey === a.publicKey)) return publicKeyTaken();
    const now = this.#stamp();
    const agent: AgentEntity = {
      tenantId,
      id: newId("agt"),
      slug: a.slug,
      name: a.name,
      status: "active",
      visibility: a.visibility,
      allowedOrigins: [...a.allowedOrigins],
      publicKey: a.publicKey,
      retention: null,
      createdAt: now,
      updatedAt: now,
    };
    this.#t.agents.set(scopedKey(tenantId, agent.id), agent);
    return ok(structuredClone(agent));
  }

  async getAgent(tenantId: string, agentId: string): Promise<AgentEntity | null> {
    return copyOrNull(this.#t.agents.get(scopedKey(tenantId, agentId)));
  }

  async findAgentByPublicKey(publicKey: string): Promise<AgentEntity | null> {
    return copyOrNull([...this.#t.agents.values()].find((a) => a.publicKey === publicKey));
  }

  async findLaunchAgent(lookup: LaunchLookup, environment: Environment): Promise<LaunchAgent | null> {
    const agent =
      "publicKey" in lookup
        ? await this.findAgentByPublicKey(lookup.publicKey)
        : await this.getAgent(lookup.tenantId, lookup.agentId);
    if (agent === null) return null;
    const released = this.#t.activeReleases.has(scopedKey(agent.tenantId, agent.id, environment));
    return { agent, released };
  }

  async listAgents(tenantId: string, page: PageRequest): Promise<Page<AgentEntity>> {
    const limit = pageLimit(page.limit);
    const [createdAt, id] = page.after === undefined ? ["", ""] : decodeCursor(page.after, timeIdCursor);
    const rows = [...this.#t.agents.values()]
      .filter((a) => a.tenantId === tenantId && isAfter(a, createdAt, id))
      .sort(byTimeThenId);
    return pageOf(
      rows.map((a) => structuredClone(a)),
      limit,
      (a) => encodeCursor([a.createdAt, a.id]),
    );
  }

  async updateAgent(tenantId: string, agentId: string, patch: AgentPatch): Promise<Result<AgentEntity>> {
    const parsed = parseInput(agentPatchSchema, patch, "Agent patch");
    if (!parsed.ok) return parsed;
    const p = parsed.value;
    const agent = this.#t.agents.get(scopedKey(tenantId, agentId));
    if (agent === undefined) return agentNotFound();
    const changes = [p.name, p.status, p.visibility, p.allowedOrigins, p.publicKey, p.retention];
    if (changes.every((value) => value === undefined)) return ok(structuredClone(agent));
    if (
      p.publicKey !== undefined &&
      [...this.#t.agents.values()].some((x) => x.publicKey === p.publicKey && x !== agent)
    ) {
      return publicKeyTaken();
    }
    const updated: AgentEntity = {
      ...agent,
      name: p.name ?? agent.name,
      status: p.status ?? agent.status,
      visibility: p.visibility ?? agent.visibility,
      allowedOrigins: p.allowedOrigins === undefined ? agent.allowedOrigins : [...p.allowedOrigins],
      publicKey: p.publicKey ?? agent.publicKey,
      retention: p.retention === undefined ? agent.retention : p.retention,
      updatedAt: this.#stamp(),
    };
    this.#t.agents.set(scopedKey(tenantId, agentId), updated);
    return ok(structuredClone(updated));
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
    if (!this.#t.agents.has(scopedKey(tenantId, agentId))) return agentNotFound();
    const key = scopedKey(tenantId, agentId);
    const current = this.#t.drafts.get(key)?.revision ?? 0;
    if (current !== expectedRevision) return staleDraft();
    const revision = expectedRevision + 1;
    this.#t.drafts.set(key, { revision, definition: text.value, updatedAt: this.#stamp() });
    return ok({ revision });
  }

  async getDraft(tenantId: string, agentId: string): Promise<Draft | null> {
    const draft = this.#t.drafts.get(scopedKey(tenantId, agentId));
    if (draft === undefined) return null;
    const definition = draftDefinitionSchema.parse(JSON.parse(draft.definition));
    return { tenantId, agentId, revision: draft.revision, definition, updatedAt: draft.updatedAt };
  }

  async publishDraft(
    tenantId: string,
    agentId: string,
    draftRevision: number,
  ): Promise<Result<AgentVersion>> {
    if (!revisionSchema.safeParse(draftRevision).success || draftRevision < 1)
      return badRevision("draftRevision");
    if (!this.#t.agents.has(scopedKey(tenantId, agentId))) return agentNotFound();
    const draft = await this.getDraft(tenantId, agentId);
    if (draft === null) return fail("not_found", "Draft not found.");
    if (draft.revision !== draftRevision) return staleDraft();
    const artifact = artifactFromDefinition(draft.definition);
    if (!artifact.ok) return artifact;
    const digest = await digestOf(artifact.value);
    // Nothing awaits from here on: the revision check, the numbering and the write happen as one step.
    if (this.#t.drafts.get(scopedKey(tenantId, agentId))?.revision !== draftRevision) return staleDraft();
    const version = 1 + Math.max(0, ...this.#versionsOf(tenantId, agentId).map((v) => v.version));
    const stored: StoredVersion = {
      tenantId,
      agentId,
      id: newId("ver"),
      version,
      draftRevision,
      schemaVersion: artifact.value.schemaVersion,
      artifact: canonicalJson(artifact.value),
      digest,
      createdAt: this.#stamp(),
    };
    this.#t.versions.set(scopedKey(tenantId, agentId, version), stored);
    return toVerifiedVersion(stored);
  }

  #versionsOf(tenantId: string, agentId: string): StoredVersion[] {
    return [...this.#t.versions.values()].filter((v) => v.tenantId === tenantId && v.agentId === agentId);
  }

  async getVersion(tenantId: string, agentId: string, version: number): Promise<Result<AgentVersion>> {
    if (!isVersionNumber(version)) return versionNotFound();
    const stored = this.#t.versions.get(scopedKey(tenantId, agentId, version));
    return stored === undefined ? versionNotFound() : toVerifiedVersion(stored);
  }

  async getVersionById(tenantId: string, versionId: string): Promise<Result<AgentVersion>> {
    const stored = [...this.#t.versions.values()].find((v) => v.tenantId === tenantId && v.id === versionId);
    return stored === undefined ? versionNotFound() : toVerifiedVersion(stored);
  }

  async listVersions(tenantId: string, agentId: string, page: PageRequest): Promise<Page<AgentVersion>> {
    const limit = pageLimit(page.limit);
    const [after] = page.after === undefined ? [0] : decodeCursor(page.after, versionCursor);
    const rows = this.#versionsOf(tenantId, agentId)
      .filter((v) => v.version > after)
      .sort((a, b) => a.version - b.version)
      .slice(0, limit + 1);
    const items: AgentVersion[] = [];
    for (const row of rows) {
      const version = await toVerifiedVersion(row);
      if (!version.ok) throw new AppError(version.code, version.message);
      items.push(version.value);
    }
    return pageOf(items, limit, (v) => encodeCursor([v.version]));
  }

  async registerRuntime(runtime: RuntimeRevision): Promise<void> {
    const r = checkRuntime(runtime);
    this.#t.runtimes.set(r.id, { id: r.id, supportedSchemaVersions: [...r.supportedSchemaVersions] });
  }

  async createRelease(
    tenantId: string,
    agentId: string,
    input: { environment: Environment; allocations: Allocation[]; runtimeRevision: string },
  ): Promise<Result<Release>> {
    const parsed = parseInput(releaseInputSchema, input, "Release");
    if (!parsed.ok) return parsed;
    const { environment, allocations, runtimeRevision } = parsed.value;
    if (!this.#t.agents.has(scopedKey(tenantId, agentId))) return agentNotFound();
    const runtime = this.#t.runtimes.get(runtimeRevision);
    if (runtime === undefined) return unknownRuntime(runtimeRevision);
    const resolved: (Allocation & { versionId: string })[] = [];
    for (const [index, allocation] of allocations.entries()) {
      const version = this.#t.versions.get(scopedKey(tenantId, agentId, allocation.version));
      if (version === undefined) return missingVersion(index, allocation.version);
      if (!runtime.supportedSchemaVersions.includes(version.schemaVersion)) {
        return unsupportedVersion(index, version.schemaVersion, runtimeRevision);
      }
      resolved.push({ version: allocation.version, weight: allocation.weight, versionId: version.id });
    }
    const release: StoredRelease = {
      tenantId,
      id: newId("rel"),
      agentId,
      environment,
      runtimeRevision,
      allocations: resolved,
      createdAt: this.#stamp(),
      activatedAt: null,
    };
    this.#t.releases.set(scopedKey(tenantId, release.id), release);
    return ok(this.#toRelease(release));
  }

  #toRelease(release: StoredRelease): Release {
    const active = this.#t.activeReleases.get(
      scopedKey(release.tenantId, release.agentId, release.environment),
    );
    return { ...structuredClone(release), active: active?.releaseId === release.id };
  }

  #release(tenantId: string, agentId: string, releaseId: string): StoredRelease | undefined {
    const release = this.#t.releases.get(scopedKey(tenantId, releaseId));
    return release?.agentId === agentId ? release : undefined;
  }

  async activateRelease(tenantId: string, agentId: string, releaseId: string): Promise<Result<Release>> {
    const release = this.#release(tenantId, agentId, releaseId);
    if (release === undefined) return fail("not_found", "Release not found.");
    const now = this.#stamp();
    release.activatedAt = now;
    this.#t.activeReleases.set(scopedKey(tenantId, agentId, release.environment), {
      releaseId,
      activatedAt: now,
    });
    return ok(this.#toRelease(release));
  }

  async getRelease(tenantId: string, agentId: string, releaseId: string): Promise<Release | null> {
    const release = this.#release(tenantId, agentId, releaseId);
    return release === undefined ? null : this.#toRelease(release);
  }

  async listReleases(tenantId: string, agentId: string, page: PageRequest): Promise<Page<Release>> {
    const limit = pageLimit(page.limit);
    const [createdAt, id] = page.after === undefined ? ["", ""] : decodeCursor(page.after, timeIdCursor);
    const rows = [...this.#t.releases.values()]
      .filter((r) => r.tenantId === tenantId && r.agentId === agentId && isAfter(r, createdAt, id))
      .sort(byTimeThenId);
    return pageOf(
      rows.map((r) => this.#toRelease(r)),
      limit,
      (r) => encodeCursor([r.createdAt, r.id]),
    );
  }

  async getActiveRelease(
    tenantId: string,
    agentId: string,
    environment: Environment,
  ): Promise<Release | null> {
    const active = this.#t.activeReleases.get(scopedKey(tenantId, agentId, environment));
    return active === undefined ? null : this.getRelease(tenantId, agentId, active.releaseId);
  }

  async assignThread(
    tenantId: string,
    input: { agentId: string; environment: Environment; threadId: string },
  ): Promise<Result<ThreadPin>> {
    const parsed = parseInput(assignmentSchema, input, "Thread assignment");
    if (!parsed.ok) return parsed;
    const { agentId, environment, threadId } = parsed.value;
    const key = scopedKey(tenantId, threadId);
    const existing = this.#t.pins.get(key);
    if (existing !== undefined) return matchPin(structuredClone(existing), parsed.value);

    const active = this.#t.activeReleases.get(scopedKey(tenantId, agentId, environment));
    const release = active === undefined ? undefined : this.#release(tenantId, agentId, active.releaseId);
    if (release === undefined) return noActiveRelease();
    const chosen = await selectAllocation(
      { tenantId, environment, agentId, releaseId: release.id, threadId },
      release.allocations,
    );
    const version = await this.getVersionById(tenantId, chosen.versionId);
    if (!version.ok) return version;

    // Concurrent first turns interleave only at the awaits above; from here the first writer wins.
    const raced = this.#t.pins.get(key);
    if (raced !== undefined) return matchPin(structuredClone(raced), parsed.value);
    const pin: ThreadPin = {
      tenantId,
      threadId,
      agentId,
      environment,
      releaseId: release.id,
      versionId: version.value.id,
      version: version.value.version,
      digest: version.value.digest,
      createdAt: this.#stamp(),
    };
    this.#t.pins.set(key, pin);
    return ok(structuredClone(pin));
  }

  async getPin(tenantId: string, threadId: string): Promise<ThreadPin | null> {
    return copyOrNull(this.#t.pins.get(scopedKey(tenantId, threadId)));
  }
}

function copyOrNull<T>(value: T | undefined): T | null {
  return value === undefined ? null : structuredClone(value);
}

async function toVerifiedVersion(stored: StoredVersion): Promise<Result<AgentVersion>> {
  const artifact = await verifyStoredArtifact(stored.artifact, stored.digest);
  if (!artifact.ok) return artifact;
  return ok({
    tenantId: stored.tenantId,
    agentId: stored.agentId,
    id: stored.id,
    version: stored.version,
    draftRevision: stored.draftRevision,
    digest: stored.digest,
    artifact: artifact.value,
    createdAt: stored.createdAt,
  });
}

/** The memory store as the conformance suite takes it (workerd and Node run the same): a clock and a way to tamper. */
export function memoryStoreUnderTest(clock: TestClock): StoreUnderTest {
  const tables = createMemoryTables();
  return {
    store: new MemoryDeploymentStore({ now: clock.now, tables }),
    async tamperArtifact(tenantId, versionId, artifactText) {
      const row = [...tables.versions.values()].find((v) => v.tenantId === tenantId && v.id === versionId);
      if (row === undefined) throw new Error("No version row to tamper with.");
      row.artifact = artifactText;
    },
  };
}
