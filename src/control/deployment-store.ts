// The control plane as a port: D1 implements it today; Postgres or an HTTP control plane could tomorrow.
import type { Result } from "../errors";
import type { Artifact } from "./artifact";

export { ENVIRONMENTS, type Environment } from "../shared/api";

import type { Environment } from "../shared/api";

export interface Tenant {
  id: string;
  name: string;
  status: "active" | "disabled";
  createdAt: string;
}

export interface AgentEntity {
  tenantId: string;
  id: string;
  slug: string;
  name: string;
  status: "active" | "disabled";
  visibility: "public" | "private";
  allowedOrigins: string[];
  publicKey: string;
  /** docs/privacy.md: a max age over all of the agent's threads (the shorter of it and the version's applies), or null. */
  retention: AgentRetention | null;
  createdAt: string;
  updatedAt: string;
}

export interface AgentRetention {
  maxAgeDays: number;
}

/** How a launch names its agent: by public key (before the tenant is known), or by id within a tenant. */
export type LaunchLookup = { publicKey: string } | { tenantId: string; agentId: string };

/** The agent a launch names, and whether it has an active release in the launch's environment. */
export interface LaunchAgent {
  agent: AgentEntity;
  released: boolean;
}

export interface NewAgent {
  slug: string;
  name: string;
  visibility: "public" | "private";
  allowedOrigins: string[];
  publicKey: string;
}

export interface AgentPatch {
  name?: string;
  status?: "active" | "disabled";
  visibility?: "public" | "private";
  allowedOrigins?: string[];
  publicKey?: string;
  /** null clears the agent's own retention. */
  retention?: AgentRetention | null;
}

export interface Draft {
  tenantId: string;
  agentId: string;
  revision: number;
  /** The stored definition; a validated artifact once published, any JSON object while a draft. */
  definition: Record<string, unknown>;
  updatedAt: string;
}

export interface AgentVersion {
  tenantId: string;
  agentId: string;
  id: string;
  version: number;
  draftRevision: number;
  digest: string;
  artifact: Artifact;
  createdAt: string;
}

export interface RuntimeRevision {
  id: string;
  supportedSchemaVersions: number[];
  /** What this revision can run (`tools.server`, `attachments`, …; src/control/capabilities.ts), no duplicates. */
  capabilities: string[];
}

export interface Allocation {
  version: number;
  weight: number;
}

export interface Release {
  tenantId: string;
  id: string;
  agentId: string;
  environment: Environment;
  runtimeRevision: string;
  allocations: (Allocation & { versionId: string })[];
  createdAt: string;
  activatedAt: string | null;
  active: boolean;
}

export interface ThreadPin {
  tenantId: string;
  threadId: string;
  agentId: string;
  environment: Environment;
  releaseId: string;
  versionId: string;
  version: number;
  digest: string;
  createdAt: string;
}

export interface Page<T> {
  items: T[];
  /** Keyset position after the last item; absent on the last page. */
  next?: string;
}

export interface PageRequest {
  limit: number;
  after?: string;
}

/**
 * Every method takes the tenant from verified context. Expected failures are returned values:
 * `bad_request` (validation, with field paths in `details`), `not_found`, `conflict`, `precondition_failed`.
 */
export interface DeploymentStore {
  createTenant(input: { name: string }): Promise<Tenant>;
  getTenant(tenantId: string): Promise<Tenant | null>;

  createAgent(tenantId: string, input: NewAgent): Promise<Result<AgentEntity>>;
  getAgent(tenantId: string, agentId: string): Promise<AgentEntity | null>;
  /** Credential look-up before the tenant is known: the public key selects one agent. */
  findAgentByPublicKey(publicKey: string): Promise<AgentEntity | null>;
  /** The launch's agent read: the agent and whether `environment` has an active release for it, in one read. */
  findLaunchAgent(lookup: LaunchLookup, environment: Environment): Promise<LaunchAgent | null>;
  /**
   * Lists are oldest first (versions by number). `after` must be a `next` this store returned; anything else
   * throws a `bad_request` AppError. `limit` is clamped to 1..200.
   */
  listAgents(tenantId: string, page: PageRequest): Promise<Page<AgentEntity>>;
  updateAgent(tenantId: string, agentId: string, patch: AgentPatch): Promise<Result<AgentEntity>>;

  /** Compare-and-swap: `expectedRevision` 0 creates; a stale revision → `precondition_failed`. */
  saveDraft(
    tenantId: string,
    agentId: string,
    expectedRevision: number,
    definition: unknown,
  ): Promise<Result<{ revision: number }>>;
  getDraft(tenantId: string, agentId: string): Promise<Draft | null>;

  /**
   * Builds a version from exactly draft revision `draftRevision`; validates the artifact strictly. Another
   * revision → `precondition_failed`; no draft → `not_found`; an invalid artifact → `bad_request` with paths.
   */
  publishDraft(tenantId: string, agentId: string, draftRevision: number): Promise<Result<AgentVersion>>;
  /** Reads re-verify the stored digest: a mismatch is `internal` ("Stored artifact failed its digest check."). */
  getVersion(tenantId: string, agentId: string, version: number): Promise<Result<AgentVersion>>;
  getVersionById(tenantId: string, versionId: string): Promise<Result<AgentVersion>>;
  listVersions(tenantId: string, agentId: string, page: PageRequest): Promise<Page<AgentVersion>>;

  /**
   * Idempotent upsert by id: a second registration replaces both lists. Runtime revisions are global, not per tenant;
   * a malformed revision (empty id, a capability that is not a dotted lowercase word, a duplicate) throws.
   */
  registerRuntime(runtime: RuntimeRevision): Promise<void>;
  /** A registered revision exactly as last registered, or null. */
  getRuntime(runtimeId: string): Promise<RuntimeRevision | null>;

  createRelease(
    tenantId: string,
    agentId: string,
    input: { environment: Environment; allocations: Allocation[]; runtimeRevision: string },
  ): Promise<Result<Release>>;
  activateRelease(tenantId: string, agentId: string, releaseId: string): Promise<Result<Release>>;
  getRelease(tenantId: string, agentId: string, releaseId: string): Promise<Release | null>;
  listReleases(tenantId: string, agentId: string, page: PageRequest): Promise<Page<Release>>;
  getActiveRelease(tenantId: string, agentId: string, environment: Environment): Promise<Release | null>;

  /**
   * Atomic create-or-read of a thread's pin. An existing pin is returned unchanged; one for another
   * agent or environment → `conflict`; no active release → `not_found`.
   */
  assignThread(
    tenantId: string,
    input: { agentId: string; environment: Environment; threadId: string },
  ): Promise<Result<ThreadPin>>;
  getPin(tenantId: string, threadId: string): Promise<ThreadPin | null>;
}
