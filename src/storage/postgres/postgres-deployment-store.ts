// The DeploymentStore on PostgreSQL, for a control plane in the tenant's own database (docs/control-plane.md): the
// same rules as D1, every table under one prefix, and tables created only by an explicit `migrate()` (or autoMigrate).
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
import { DEFAULT_PREFIX, migrationStep, pgTables, SCHEMA_VERSION, schemaVersionTableSql } from "./migration";
import * as agents from "./pg-agents";
import { type PgConnection, pgRunner } from "./pg-connection";
import * as releases from "./pg-releases";
import { firstRow, type PgContext } from "./pg-rows";
import * as versions from "./pg-versions";

export interface PostgresStoreOptions {
  /** A `pg` Pool (transactions side by side), a `pg` Client (statements in turn), or a PgTransactor. */
  sql: PgConnection;
  /** Every table's name starts with it (default `agent_threads_deploy`): several deployments can share a database. */
  prefix?: string;
  /**
   * Create or upgrade the tables before the first operation. Only for a database the control plane owns alone (a
   * throwaway or dedicated one); an application that owns its schema applies `postgresMigrationSql` itself.
   */
  autoMigrate?: boolean;
  now?: () => Date;
}

export type PostgresDeploymentStore = DeploymentStore & {
  /** Brings the schema to SCHEMA_VERSION in one transaction; running it again changes nothing. */
  migrate(): Promise<void>;
};

export function createPostgresDeploymentStore(options: PostgresStoreOptions): PostgresDeploymentStore {
  return new PgDeploymentStore(options);
}

class PgDeploymentStore implements PostgresDeploymentStore {
  readonly #c: PgContext;
  #ready: Promise<void> | null;

  constructor(options: PostgresStoreOptions) {
    const prefix = options.prefix ?? DEFAULT_PREFIX;
    const now = options.now ?? (() => new Date());
    this.#c = { db: pgRunner(options.sql), t: pgTables(prefix), stamp: () => now().toISOString(), prefix };
    this.#ready = options.autoMigrate === true ? null : Promise.resolve();
  }

  async migrate(): Promise<void> {
    const { db, t, prefix } = this.#c;
    await db.transaction(async (tx) => {
      // Two processes migrating one prefix at once take turns; other prefixes are not held up.
      await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`agent-threads:${prefix}`]);
      await tx.query(schemaVersionTableSql(prefix));
      const row = await firstRow(
        tx,
        `SELECT COALESCE(MAX(version), 0) AS version FROM ${t.schemaVersion}`,
        [],
      );
      const current = Number(row?.version ?? 0);
      for (let step = current + 1; step <= SCHEMA_VERSION; step++) {
        await tx.query(migrationStep(step, prefix));
        await tx.query(`INSERT INTO ${t.schemaVersion} (version) VALUES ($1)`, [step]);
      }
    });
  }

  /** With autoMigrate, the first operation migrates; a failed migration is retried by the next one. */
  async #on(): Promise<PgContext> {
    if (this.#ready === null) {
      this.#ready = this.migrate().catch((error: unknown) => {
        this.#ready = null;
        throw error;
      });
    }
    await this.#ready;
    return this.#c;
  }

  async createTenant(input: { name: string }): Promise<Tenant> {
    return agents.createTenant(await this.#on(), input);
  }

  async getTenant(tenantId: string): Promise<Tenant | null> {
    return agents.getTenant(await this.#on(), tenantId);
  }

  async createAgent(tenantId: string, input: NewAgent): Promise<Result<AgentEntity>> {
    return agents.createAgent(await this.#on(), tenantId, input);
  }

  async getAgent(tenantId: string, agentId: string): Promise<AgentEntity | null> {
    return agents.getAgent(await this.#on(), tenantId, agentId);
  }

  async findAgentByPublicKey(publicKey: string): Promise<AgentEntity | null> {
    return agents.findAgentByPublicKey(await this.#on(), publicKey);
  }

  async findLaunchAgent(lookup: LaunchLookup, environment: Environment): Promise<LaunchAgent | null> {
    return agents.findLaunchAgent(await this.#on(), lookup, environment);
  }

  async listAgents(tenantId: string, page: PageRequest): Promise<Page<AgentEntity>> {
    return agents.listAgents(await this.#on(), tenantId, page);
  }

  async updateAgent(tenantId: string, agentId: string, patch: AgentPatch): Promise<Result<AgentEntity>> {
    return agents.updateAgent(await this.#on(), tenantId, agentId, patch);
  }

  async saveDraft(
    tenantId: string,
    agentId: string,
    expectedRevision: number,
    definition: unknown,
  ): Promise<Result<{ revision: number }>> {
    return versions.saveDraft(await this.#on(), tenantId, agentId, expectedRevision, definition);
  }

  async getDraft(tenantId: string, agentId: string): Promise<Draft | null> {
    return versions.getDraft(await this.#on(), tenantId, agentId);
  }

  async publishDraft(
    tenantId: string,
    agentId: string,
    draftRevision: number,
  ): Promise<Result<AgentVersion>> {
    return versions.publishDraft(await this.#on(), tenantId, agentId, draftRevision);
  }

  async getVersion(tenantId: string, agentId: string, version: number): Promise<Result<AgentVersion>> {
    return versions.getVersion(await this.#on(), tenantId, agentId, version);
  }

  async getVersionById(tenantId: string, versionId: string): Promise<Result<AgentVersion>> {
    return versions.getVersionById(await this.#on(), tenantId, versionId);
  }

  async listVersions(tenantId: string, agentId: string, page: PageRequest): Promise<Page<AgentVersion>> {
    return versions.listVersions(await this.#on(), tenantId, agentId, page);
  }

  async registerRuntime(runtime: RuntimeRevision): Promise<void> {
    return releases.registerRuntime(await this.#on(), runtime);
  }

  async createRelease(
    tenantId: string,
    agentId: string,
    input: { environment: Environment; allocations: Allocation[]; runtimeRevision: string },
  ): Promise<Result<Release>> {
    return releases.createRelease(await this.#on(), tenantId, agentId, input);
  }

  async activateRelease(tenantId: string, agentId: string, releaseId: string): Promise<Result<Release>> {
    return releases.activateRelease(await this.#on(), tenantId, agentId, releaseId);
  }

  async getRelease(tenantId: string, agentId: string, releaseId: string): Promise<Release | null> {
    return releases.getRelease(await this.#on(), tenantId, agentId, releaseId);
  }

  async listReleases(tenantId: string, agentId: string, page: PageRequest): Promise<Page<Release>> {
    return releases.listReleases(await this.#on(), tenantId, agentId, page);
  }

  async getActiveRelease(
    tenantId: string,
    agentId: string,
    environment: Environment,
  ): Promise<Release | null> {
    return releases.getActiveRelease(await this.#on(), tenantId, agentId, environment);
  }

  async assignThread(
    tenantId: string,
    input: { agentId: string; environment: Environment; threadId: string },
  ): Promise<Result<ThreadPin>> {
    return releases.assignThread(await this.#on(), tenantId, input);
  }

  async getPin(tenantId: string, threadId: string): Promise<ThreadPin | null> {
    return releases.getPin(await this.#on(), tenantId, threadId);
  }
}

export { DEFAULT_PREFIX, postgresMigrationSql, SCHEMA_VERSION } from "./migration";
export type { PgConnection, PgPoolLike, PgQueryable, PgTransactor } from "./pg-connection";
