// The DeploymentStore on D1: every statement on tenant data binds tenant_id; multi-row writes go in one batch.
//
// The statements live with the tables they touch (tenants, agents, drafts, versions, runtime revisions, releases,
// thread pins); this class only holds the database and the clock, so every stamp comes from the injected `now`.
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
} from "../../control/deployment-store";
import type { Result } from "../../errors";
import {
  createAgent,
  findAgentByPublicKey,
  findLaunchAgent,
  getAgent,
  listAgents,
  updateAgent,
} from "./agents";
import { getDraft, saveDraft } from "./drafts";
import { activateRelease, createRelease, getActiveRelease, getRelease, listReleases } from "./releases";
import { getRuntime, registerRuntime } from "./runtime-revisions";
import { createTenant, getTenant } from "./tenants";
import { assignThread, getPin } from "./thread-pins";
import { getVersion, getVersionById, listVersions, publishDraft } from "./versions";

export class D1DeploymentStore implements DeploymentStore {
  readonly #db: D1Database;
  readonly #stamp: () => string;

  constructor(db: D1Database, options: { now?: () => Date } = {}) {
    this.#db = db;
    const now = options.now ?? (() => new Date());
    this.#stamp = () => now().toISOString();
  }

  createTenant(input: { name: string }): Promise<Tenant> {
    return createTenant(this.#db, this.#stamp, input);
  }

  getTenant(tenantId: string): Promise<Tenant | null> {
    return getTenant(this.#db, tenantId);
  }

  createAgent(tenantId: string, input: NewAgent): Promise<Result<AgentEntity>> {
    return createAgent(this.#db, this.#stamp, tenantId, input);
  }

  getAgent(tenantId: string, agentId: string): Promise<AgentEntity | null> {
    return getAgent(this.#db, tenantId, agentId);
  }

  findAgentByPublicKey(publicKey: string): Promise<AgentEntity | null> {
    return findAgentByPublicKey(this.#db, publicKey);
  }

  findLaunchAgent(lookup: LaunchLookup, environment: Environment): Promise<LaunchAgent | null> {
    return findLaunchAgent(this.#db, lookup, environment);
  }

  listAgents(tenantId: string, page: PageRequest): Promise<Page<AgentEntity>> {
    return listAgents(this.#db, tenantId, page);
  }

  updateAgent(tenantId: string, agentId: string, patch: AgentPatch): Promise<Result<AgentEntity>> {
    return updateAgent(this.#db, this.#stamp, tenantId, agentId, patch);
  }

  saveDraft(
    tenantId: string,
    agentId: string,
    expectedRevision: number,
    definition: unknown,
  ): Promise<Result<{ revision: number }>> {
    return saveDraft(this.#db, this.#stamp, tenantId, agentId, expectedRevision, definition);
  }

  getDraft(tenantId: string, agentId: string): Promise<Draft | null> {
    return getDraft(this.#db, tenantId, agentId);
  }

  publishDraft(tenantId: string, agentId: string, draftRevision: number): Promise<Result<AgentVersion>> {
    return publishDraft(this.#db, this.#stamp, tenantId, agentId, draftRevision);
  }

  getVersion(tenantId: string, agentId: string, version: number): Promise<Result<AgentVersion>> {
    return getVersion(this.#db, tenantId, agentId, version);
  }

  getVersionById(tenantId: string, versionId: string): Promise<Result<AgentVersion>> {
    return getVersionById(this.#db, tenantId, versionId);
  }

  listVersions(tenantId: string, agentId: string, page: PageRequest): Promise<Page<AgentVersion>> {
    return listVersions(this.#db, tenantId, agentId, page);
  }

  registerRuntime(runtime: RuntimeRevision): Promise<void> {
    return registerRuntime(this.#db, this.#stamp, runtime);
  }

  getRuntime(runtimeId: string): Promise<RuntimeRevision | null> {
    return getRuntime(this.#db, runtimeId);
  }

  createRelease(
    tenantId: string,
    agentId: string,
    input: { environment: Environment; allocations: Allocation[]; runtimeRevision: string },
  ): Promise<Result<Release>> {
    return createRelease(this.#db, this.#stamp, tenantId, agentId, input);
  }

  activateRelease(tenantId: string, agentId: string, releaseId: string): Promise<Result<Release>> {
    return activateRelease(this.#db, this.#stamp, tenantId, agentId, releaseId);
  }

  getRelease(tenantId: string, agentId: string, releaseId: string): Promise<Release | null> {
    return getRelease(this.#db, tenantId, agentId, releaseId);
  }

  listReleases(tenantId: string, agentId: string, page: PageRequest): Promise<Page<Release>> {
    return listReleases(this.#db, tenantId, agentId, page);
  }

  getActiveRelease(tenantId: string, agentId: string, environment: Environment): Promise<Release | null> {
    return getActiveRelease(this.#db, tenantId, agentId, environment);
  }

  assignThread(
    tenantId: string,
    input: { agentId: string; environment: Environment; threadId: string },
  ): Promise<Result<ThreadPin>> {
    return assignThread(this.#db, this.#stamp, tenantId, input);
  }

  getPin(tenantId: string, threadId: string): Promise<ThreadPin | null> {
    return getPin(this.#db, tenantId, threadId);
  }
}
