// The DeploymentStore as a client of the control-plane service (docs/control-plane.md#the-http-service): one POST per
// method with a fresh workload token, a timeout, retries on reads only, and the same Result codes as D1.
import {
  DEPLOYMENT_ROUTE_PREFIX,
  DEPLOYMENT_ROUTES,
  type DeploymentMethod,
  FAILURE_HEADER,
  RESULT_METHODS,
  scopeOfCall,
} from "../../control/control-plane-routes";
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
import { canonicalDraft } from "../../control/store-rules";
import { AppError, databaseUnavailable, type ErrorCode, type Failure, type Result } from "../../errors";

export interface HttpDeploymentStoreOptions {
  /** The service's origin, e.g. `https://control-plane.internal` (routes are under /v1/internal/deployment/). */
  baseUrl: string;
  /** A fresh workload token for a call's scope (`signWorkloadToken`). */
  token: (scope: { tenantId: string } | "lookup" | "operator") => Promise<string>;
  fetch?: (request: Request) => Promise<Response>;
  /** Per attempt. */
  timeoutMs?: number;
  /** Extra attempts for reads after a network failure, a timeout or a 502/503/504. */
  readRetries?: number;
}

export const DEFAULT_TIMEOUT_MS = 5_000;
export const DEFAULT_READ_RETRIES = 2;

interface ErrorBody {
  error?: { code?: ErrorCode; reason?: Failure["reason"]; message?: string; details?: unknown };
}

const TRANSIENT = new Set([502, 503, 504]);

export class HttpDeploymentStore implements DeploymentStore {
  readonly #options: HttpDeploymentStoreOptions;
  readonly #base: string;

  constructor(options: HttpDeploymentStoreOptions) {
    this.#options = options;
    this.#base = options.baseUrl.replace(/\/+$/, "");
  }

  async #call(method: DeploymentMethod, args: unknown[]): Promise<unknown> {
    const route = DEPLOYMENT_ROUTES[method];
    const body: Record<string, unknown> = {};
    route.params.forEach((name, i) => {
      if (args[i] !== undefined) body[name] = args[i];
    });
    const scope = scopeOfCall(method, body);
    if (scope === null) throw new AppError("bad_request", "The call names no tenant.");
    const attempts = 1 + (route.read ? (this.#options.readRetries ?? DEFAULT_READ_RETRIES) : 0);
    let lastError: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** (attempt - 1)));
      let response: Response;
      try {
        response = await this.#send(route.path, body, await this.#options.token(scope));
      } catch (error) {
        lastError = error;
        continue;
      }
      if (TRANSIENT.has(response.status)) {
        lastError = new Error(`control plane answered ${response.status}`);
        await response.body?.cancel();
        continue;
      }
      return this.#read(method, response);
    }
    throw databaseUnavailable(lastError);
  }

  async #send(path: string, body: Record<string, unknown>, token: string): Promise<Response> {
    const request = new Request(`${this.#base}${DEPLOYMENT_ROUTE_PREFIX}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
    return (this.#options.fetch ?? fetch)(request);
  }

  async #read(method: DeploymentMethod, response: Response): Promise<unknown> {
    const parsed = (await response.json().catch(() => null)) as ({ value?: unknown } & ErrorBody) | null;
    if (response.ok && parsed !== null && "value" in parsed) {
      return RESULT_METHODS.has(method) ? { ok: true, value: parsed.value } : (parsed.value ?? null);
    }
    const error = parsed?.error;
    if (error?.code === undefined)
      throw databaseUnavailable(new Error(`control plane answered ${response.status}`));
    const marked = response.headers.get(FAILURE_HEADER);
    if (marked === "1" && RESULT_METHODS.has(method)) {
      const failure: Failure = { ok: false, code: error.code, message: error.message ?? "" };
      if (error.reason !== undefined) failure.reason = error.reason;
      if (error.details !== undefined) failure.details = error.details;
      return failure;
    }
    if (marked === "thrown") {
      throw new AppError(
        error.code,
        error.message ?? "",
        error.details !== undefined ? { details: error.details } : {},
      );
    }
    // The service refused our credential: a deployment misconfiguration, never the caller's fault.
    if (response.status === 401 || response.status === 403) {
      throw new AppError("internal", "The control plane refused this deployment's workload credential.", {
        cause: new Error(`${response.status} ${error.code}: ${error.message}`),
      });
    }
    if (response.status >= 500) throw databaseUnavailable(new Error(`${error.code}: ${error.message}`));
    throw new AppError(
      error.code,
      error.message ?? "",
      error.details !== undefined ? { details: error.details } : {},
    );
  }

  createTenant(input: { name: string }): Promise<Tenant> {
    return this.#call("createTenant", [input]) as Promise<Tenant>;
  }
  getTenant(tenantId: string): Promise<Tenant | null> {
    return this.#call("getTenant", [tenantId]) as Promise<Tenant | null>;
  }
  createAgent(tenantId: string, input: NewAgent): Promise<Result<AgentEntity>> {
    return this.#call("createAgent", [tenantId, input]) as Promise<Result<AgentEntity>>;
  }
  getAgent(tenantId: string, agentId: string): Promise<AgentEntity | null> {
    return this.#call("getAgent", [tenantId, agentId]) as Promise<AgentEntity | null>;
  }
  findAgentByPublicKey(publicKey: string): Promise<AgentEntity | null> {
    return this.#call("findAgentByPublicKey", [publicKey]) as Promise<AgentEntity | null>;
  }
  findLaunchAgent(lookup: LaunchLookup, environment: Environment): Promise<LaunchAgent | null> {
    return this.#call("findLaunchAgent", [lookup, environment]) as Promise<LaunchAgent | null>;
  }
  listAgents(tenantId: string, page: PageRequest): Promise<Page<AgentEntity>> {
    return this.#call("listAgents", [tenantId, page]) as Promise<Page<AgentEntity>>;
  }
  updateAgent(tenantId: string, agentId: string, patch: AgentPatch): Promise<Result<AgentEntity>> {
    return this.#call("updateAgent", [tenantId, agentId, patch]) as Promise<Result<AgentEntity>>;
  }
  saveDraft(
    tenantId: string,
    agentId: string,
    expectedRevision: number,
    definition: unknown,
  ): Promise<Result<{ revision: number }>> {
    // What JSON cannot carry (NaN, undefined in an array) is refused here, as the other adapters refuse it.
    const canonical = canonicalDraft(definition);
    if (!canonical.ok) return Promise.resolve(canonical);
    return this.#call("saveDraft", [tenantId, agentId, expectedRevision, definition]) as Promise<
      Result<{ revision: number }>
    >;
  }
  getDraft(tenantId: string, agentId: string): Promise<Draft | null> {
    return this.#call("getDraft", [tenantId, agentId]) as Promise<Draft | null>;
  }
  publishDraft(tenantId: string, agentId: string, draftRevision: number): Promise<Result<AgentVersion>> {
    return this.#call("publishDraft", [tenantId, agentId, draftRevision]) as Promise<Result<AgentVersion>>;
  }
  getVersion(tenantId: string, agentId: string, version: number): Promise<Result<AgentVersion>> {
    return this.#call("getVersion", [tenantId, agentId, version]) as Promise<Result<AgentVersion>>;
  }
  getVersionById(tenantId: string, versionId: string): Promise<Result<AgentVersion>> {
    return this.#call("getVersionById", [tenantId, versionId]) as Promise<Result<AgentVersion>>;
  }
  listVersions(tenantId: string, agentId: string, page: PageRequest): Promise<Page<AgentVersion>> {
    return this.#call("listVersions", [tenantId, agentId, page]) as Promise<Page<AgentVersion>>;
  }
  async registerRuntime(runtime: RuntimeRevision): Promise<void> {
    await this.#call("registerRuntime", [runtime]);
  }
  getRuntime(runtimeId: string): Promise<RuntimeRevision | null> {
    return this.#call("getRuntime", [runtimeId]) as Promise<RuntimeRevision | null>;
  }
  createRelease(
    tenantId: string,
    agentId: string,
    input: { environment: Environment; allocations: Allocation[]; runtimeRevision: string },
  ): Promise<Result<Release>> {
    return this.#call("createRelease", [tenantId, agentId, input]) as Promise<Result<Release>>;
  }
  activateRelease(tenantId: string, agentId: string, releaseId: string): Promise<Result<Release>> {
    return this.#call("activateRelease", [tenantId, agentId, releaseId]) as Promise<Result<Release>>;
  }
  getRelease(tenantId: string, agentId: string, releaseId: string): Promise<Release | null> {
    return this.#call("getRelease", [tenantId, agentId, releaseId]) as Promise<Release | null>;
  }
  listReleases(tenantId: string, agentId: string, page: PageRequest): Promise<Page<Release>> {
    return this.#call("listReleases", [tenantId, agentId, page]) as Promise<Page<Release>>;
  }
  getActiveRelease(tenantId: string, agentId: string, environment: Environment): Promise<Release | null> {
    return this.#call("getActiveRelease", [tenantId, agentId, environment]) as Promise<Release | null>;
  }
  assignThread(
    tenantId: string,
    input: { agentId: string; environment: Environment; threadId: string },
  ): Promise<Result<ThreadPin>> {
    return this.#call("assignThread", [tenantId, input]) as Promise<Result<ThreadPin>>;
  }
  getPin(tenantId: string, threadId: string): Promise<ThreadPin | null> {
    return this.#call("getPin", [tenantId, threadId]) as Promise<ThreadPin | null>;
  }
}
