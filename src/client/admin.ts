// The tenant admin API (`sk_…`, docs/api.md) and the operator API (docs/operations.md), one method per route, typed from src/shared.
import type { z } from "zod";
import type {
  AgentResponse,
  ApiKeyResponse,
  CreatedApiKeyResponse,
  createAgentRequest,
  createApiKeyRequest,
  createdTenantResponse,
  createReleaseRequest,
  createTenantApiKeyRequest,
  DraftResponse,
  patchAgentRequest,
  publishedVersionResponse,
  ReleaseResponse,
  RuntimeResponse,
  SecretResponse,
  TenantPatch,
  TenantResponse,
  TenantShardResponse,
  VersionResponse,
  VersionSummaryResponse,
} from "../shared/api";
import type { ConsoleSessionResponse } from "../shared/console-api";
import type { ErasureResponse, SubjectDigestKeyResponse, SubjectErasureRequest } from "../shared/erasure-api";
import type { LaunchResponse, PreviewSessionRequest, PreviewSessionResponse } from "../shared/launch-api";
import type { HoldResponse, UsageResponse, usageQuery } from "../shared/sessions-api";
import { Approvals, Sessions } from "./admin-sessions";
import { type AnalyticsQuery, readAnalytics } from "./analytics";
import { Evals } from "./evals";
import { type ClientOptions, eachItem, type Page, type PageQuery, seg, Transport } from "./http";
import { launchPrivate, type PrivateLaunchRequest } from "./launch";
import { Webhooks } from "./webhooks";

export type {
  AgentResponse,
  ApiKeyResponse,
  CreatedApiKeyResponse,
  DraftResponse,
  ReleaseResponse,
  RuntimeResponse,
  SecretResponse,
  TenantPatch,
  TenantResponse,
  VersionResponse,
  VersionSummaryResponse,
} from "../shared/api";
export type { ConsoleSessionResponse } from "../shared/console-api";
export type { ErasureResponse, SubjectDigestKeyResponse } from "../shared/erasure-api";
export type { PreviewSessionRequest, PreviewSessionResponse } from "../shared/launch-api";
export type { WireEntry } from "../shared/protocol";
export type {
  HandoffResponse,
  HoldResponse,
  HumanMessageRequest,
  MessageResponse,
  RunInputResponse,
  SessionResponse,
  SessionSearchRequest,
  UsageResponse,
} from "../shared/sessions-api";
export type {
  ApprovalDecisionRequest,
  ApprovalListQuery,
  ApprovalStatus,
  ApprovalView,
  SessionListQuery,
} from "./admin-sessions";

export type CreateAgentRequest = z.input<typeof createAgentRequest>;
export type PatchAgentRequest = Omit<z.input<typeof patchAgentRequest>, "rotatePublicKey">;
export type CreateReleaseRequest = z.input<typeof createReleaseRequest>;
export type CreateApiKeyRequest = z.input<typeof createApiKeyRequest>;
export type UsageQuery = z.input<typeof usageQuery>;
export type CreatedTenantResponse = z.infer<typeof createdTenantResponse>;
export type CreateTenantApiKeyRequest = z.input<typeof createTenantApiKeyRequest>;
export type PublishedVersion = z.infer<typeof publishedVersionResponse>;
/** `PUT …/draft` answers the new revision: the next `If-Match`, and what `versions.publish` takes. */
export interface SavedDraft {
  revision: number;
}

const pageQuery = (query: PageQuery = {}) => ({ cursor: query.cursor, limit: query.limit });

/** Agents: create, list, read, change, rotate the public key (`/v1/agents`). */
class Agents {
  constructor(readonly t: Transport) {}
  create(body: CreateAgentRequest): Promise<AgentResponse> {
    return this.t.json("POST", "/v1/agents", { body });
  }
  list(query?: PageQuery): Promise<Page<AgentResponse>> {
    return this.t.json("GET", "/v1/agents", { query: pageQuery(query) });
  }
  /** Every agent, page after page. */
  all(): AsyncGenerator<AgentResponse> {
    return eachItem((cursor) => this.list({ limit: 200, ...(cursor ? { cursor } : {}) }));
  }
  get(agentId: string): Promise<AgentResponse> {
    return this.t.json("GET", `/v1/agents/${seg(agentId)}`);
  }
  update(agentId: string, patch: PatchAgentRequest): Promise<AgentResponse> {
    return this.t.json("PATCH", `/v1/agents/${seg(agentId)}`, { body: patch });
  }
  /** A new `pk_…`: the old key stops launching at once (embeds must be updated). */
  rotatePublicKey(agentId: string): Promise<AgentResponse> {
    return this.t.json("PATCH", `/v1/agents/${seg(agentId)}`, { body: { rotatePublicKey: true } });
  }
}

/** An agent's draft, saved with compare-and-swap on its revision. */
class Drafts {
  constructor(readonly t: Transport) {}
  get(agentId: string): Promise<DraftResponse> {
    return this.t.json("GET", `/v1/agents/${seg(agentId)}/draft`);
  }
  /**
   * Saves `definition` if the stored draft is still at `revision` (0: there is none yet); a stale revision is
   * AgentThreadsError `precondition_failed` (412) and nothing is saved.
   */
  put(agentId: string, definition: Record<string, unknown>, revision: number): Promise<SavedDraft> {
    return this.t.json("PUT", `/v1/agents/${seg(agentId)}/draft`, {
      body: definition,
      headers: { "If-Match": `"${revision}"` },
    });
  }
  /**
   * A preview thread on draft revision `draftRevision` (or a published `version`): a launch body for the widget or
   * `ThreadClient`, usable only from this deployment's own origin. With `threadId`, a fresh token for that preview.
   * A stale revision is `precondition_failed` (412); an invalid draft `bad_request` with its field paths.
   */
  previewSession(agentId: string, request: PreviewSessionRequest): Promise<PreviewSessionResponse> {
    return this.t.json("POST", `/v1/agents/${seg(agentId)}/draft/preview-session`, { body: request });
  }
}

/** Immutable, digest-pinned versions published from a draft revision. */
class Versions {
  constructor(readonly t: Transport) {}
  publish(agentId: string, draftRevision: number): Promise<PublishedVersion> {
    return this.t.json("POST", `/v1/agents/${seg(agentId)}/versions`, { body: { draftRevision } });
  }
  /** Newest first, without artifacts. */
  list(agentId: string, query?: PageQuery): Promise<Page<VersionSummaryResponse>> {
    return this.t.json("GET", `/v1/agents/${seg(agentId)}/versions`, { query: pageQuery(query) });
  }
  get(agentId: string, version: number): Promise<VersionResponse> {
    return this.t.json("GET", `/v1/agents/${seg(agentId)}/versions/${seg(version)}`);
  }
}

/** Weighted releases per environment; one is active per environment. */
class Releases {
  constructor(readonly t: Transport) {}
  /**
   * Weights are positive integers summing to 10,000; the release is not active until `activate`. `runtimeRevisionId`
   * (default: the deployment's, `runtime()`) names the registered revision it runs on; a version needing a capability
   * it lacks throws AgentThreadsError 409 `runtime_incompatible`.
   */
  create(agentId: string, body: CreateReleaseRequest): Promise<ReleaseResponse> {
    return this.t.json("POST", `/v1/agents/${seg(agentId)}/releases`, { body });
  }
  /** `force` goes past a failing release gate (docs/evals.md#the-release-gate); its reason is recorded. */
  activate(agentId: string, releaseId: string, force?: { reason: string }): Promise<ReleaseResponse> {
    return this.t.json("POST", `/v1/agents/${seg(agentId)}/releases/${seg(releaseId)}/activate`, {
      ...(force !== undefined ? { body: { force: true, reason: force.reason } } : {}),
    });
  }
  list(agentId: string, query?: PageQuery): Promise<Page<ReleaseResponse>> {
    return this.t.json("GET", `/v1/agents/${seg(agentId)}/releases`, { query: pageQuery(query) });
  }
  get(agentId: string, releaseId: string): Promise<ReleaseResponse> {
    return this.t.json("GET", `/v1/agents/${seg(agentId)}/releases/${seg(releaseId)}`);
  }
}

/**
 * Erasure and legal holds by subject (docs/privacy.md): every thread of one of the tenant's users. The subject always
 * travels in a JSON body, never in a URL (URLs reach request logs and traces).
 */
class Subjects {
  constructor(readonly t: Transport) {}
  /**
   * One call of `POST /v1/subject-erasures`: `completed` with the receipt, or `pending` with `remaining` when the
   * subject has more threads than one call erases — call again (the same job continues), or use `eraseAll`.
   */
  erase(subject: string, options: { agentId?: string } = {}): Promise<ErasureResponse> {
    const body: SubjectErasureRequest = { subject, ...options };
    return this.t.json("POST", "/v1/subject-erasures", { body });
  }
  /** Repeats `erase` until the job completes, and answers the completed erasure with its receipt. */
  async eraseAll(subject: string, options: { agentId?: string } = {}) {
    for (;;) {
      const answer = await this.erase(subject, options);
      if (answer.status === "completed") return answer;
    }
  }
  /** A kept erasure and its receipt (`GET /v1/erasures/:id`). */
  erasure(erasureId: string): Promise<ErasureResponse> {
    return this.t.json("GET", `/v1/erasures/${seg(erasureId)}`);
  }
  /**
   * The tenant's key for receipts' `subjectDigest` (`GET /v1/subject-digest-key`): a receipt covers `subject` when
   * its digest is base64url(HMAC-SHA-256(key, subject)).
   */
  digestKey(): Promise<SubjectDigestKeyResponse> {
    return this.t.json("GET", "/v1/subject-digest-key");
  }
  /** `PUT /v1/subject-holds`: every thread of the subject, present and future, is kept from erasure and retention. */
  hold(subject: string, reason: string): Promise<HoldResponse> {
    return this.t.json("PUT", "/v1/subject-holds", { body: { subject, reason } });
  }
  /** `DELETE /v1/subject-holds`: lifts the subject's hold (`not_found` when there is none). */
  releaseHold(subject: string): Promise<void> {
    return this.t.empty("DELETE", "/v1/subject-holds", { body: { subject } });
  }
}

/** The tenant's own API keys; the plaintext `apiKey` is in the creation answer only. */
class ApiKeys {
  constructor(readonly t: Transport) {}
  create(body: CreateApiKeyRequest): Promise<CreatedApiKeyResponse> {
    return this.t.json("POST", "/v1/api-keys", { body });
  }
  list(query?: PageQuery): Promise<Page<ApiKeyResponse>> {
    return this.t.json("GET", "/v1/api-keys", { query: pageQuery(query) });
  }
  get(keyId: string): Promise<ApiKeyResponse> {
    return this.t.json("GET", `/v1/api-keys/${seg(keyId)}`);
  }
  /** The last active admin key cannot be revoked (`conflict`). */
  revoke(keyId: string): Promise<void> {
    return this.t.empty("DELETE", `/v1/api-keys/${seg(keyId)}`);
  }
}

/** Write-only model-provider secrets, referred to by alias from artifacts. */
class Secrets {
  constructor(readonly t: Transport) {}
  list(query?: PageQuery): Promise<Page<SecretResponse>> {
    return this.t.json("GET", "/v1/secrets", { query: pageQuery(query) });
  }
  put(alias: string, value: string): Promise<void> {
    return this.t.empty("PUT", `/v1/secrets/${seg(alias)}`, { body: { value } });
  }
  delete(alias: string): Promise<void> {
    return this.t.empty("DELETE", `/v1/secrets/${seg(alias)}`);
  }
}

/**
 * The console's cookie session (docs/api.md), from a page of the Worker's own origin (its `fetch` carries the cookie).
 * Requests on the session need the answer's `csrfToken` as `X-Console-CSRF` in the client's `headers`.
 */
class ConsoleSessions {
  constructor(readonly t: Transport) {}
  /** Exchanges an API key for the `__Host-console` cookie; the key is not kept. */
  signIn(apiKey: string): Promise<ConsoleSessionResponse> {
    return this.t.json("POST", "/v1/console/session", { body: { apiKey } });
  }
  /**
   * The cookie's session (with its `csrfToken`), e.g. after a reload; null when no session cookie was sent (204),
   * 401 when the cookie names no live session.
   */
  async session(): Promise<ConsoleSessionResponse | null> {
    const res = await this.t.send("GET", "/v1/console/session");
    if (res.status === 204) return null;
    return (await res.json()) as ConsoleSessionResponse;
  }
  /** Ends the session and clears the cookie (needs the `X-Console-CSRF` header). */
  signOut(): Promise<void> {
    return this.t.empty("DELETE", "/v1/console/session");
  }
}

/**
 * A tenant's backend: `new AdminClient({ baseUrl, apiKey })`. Every method answers the route's shared response
 * type or throws AgentThreadsError.
 */
export class AdminClient {
  readonly agents: Agents;
  readonly drafts: Drafts;
  readonly versions: Versions;
  readonly releases: Releases;
  readonly sessions: Sessions;
  readonly approvals: Approvals;
  readonly subjects: Subjects;
  readonly apiKeys: ApiKeys;
  readonly secrets: Secrets;
  readonly webhooks: Webhooks;
  readonly evals: Evals;
  readonly console: ConsoleSessions;
  readonly #t: Transport;

  /**
   * `apiKey` is the tenant's `sk_…`. The console leaves it out: its browser sends the session cookie, and `headers`
   * carries the session's `X-Console-CSRF` (docs/api.md).
   */
  constructor(options: ClientOptions & { apiKey?: string }) {
    const { apiKey, ...rest } = options;
    this.#t = new Transport(rest, apiKey);
    this.agents = new Agents(this.#t);
    this.drafts = new Drafts(this.#t);
    this.versions = new Versions(this.#t);
    this.releases = new Releases(this.#t);
    this.sessions = new Sessions(this.#t);
    this.approvals = new Approvals(this.#t);
    this.subjects = new Subjects(this.#t);
    this.apiKeys = new ApiKeys(this.#t);
    this.secrets = new Secrets(this.#t);
    this.webhooks = new Webhooks(this.#t);
    this.evals = new Evals(this.#t);
    this.console = new ConsoleSessions(this.#t);
  }

  /** This deployment's runtime revision and its capabilities (docs/api.md#runtime-revisions). */
  runtime(): Promise<RuntimeResponse> {
    return this.#t.json("GET", "/v1/runtime");
  }

  /** Tokens in/out and runs per day (default: the last 30 days). */
  usage(query: UsageQuery = {}): Promise<UsageResponse> {
    return this.#t.json("GET", "/v1/usage", { query: { ...query } });
  }

  /** Turns, failures, tokens, latency and feedback by version or by day (docs/api.md). */
  analytics(query: AnalyticsQuery = {}) {
    return readAnalytics(this.#t, query);
  }

  /** A launch for one of the tenant's signed-in users (`subject`), with optional context variables. */
  launch(body: PrivateLaunchRequest): Promise<LaunchResponse> {
    return launchPrivate(this.#t, body);
  }
}

/** The platform operator: tenants and their first keys (`Authorization: Bearer <operator token>`). */
export class OperatorClient {
  readonly #t: Transport;

  constructor(options: ClientOptions & { operatorToken: string }) {
    const { operatorToken, ...rest } = options;
    this.#t = new Transport(rest, operatorToken);
  }

  /** A new tenant and its initial admin key (shown only here). */
  createTenant(name: string): Promise<CreatedTenantResponse> {
    return this.#t.json("POST", "/v1/operator/tenants", { body: { name } });
  }
  listTenants(query?: PageQuery): Promise<Page<TenantResponse>> {
    return this.#t.json("GET", "/v1/operator/tenants", { query: pageQuery(query) });
  }
  getTenant(tenantId: string): Promise<TenantResponse> {
    return this.#t.json("GET", `/v1/operator/tenants/${seg(tenantId)}`);
  }
  /**
   * Status (`disabled` refuses its keys, launches and sockets at once), quotas and launch shares (the private reserve
   * and the per-agent public share, in percent; the answer's `launchBudget` shows the launches they come to).
   */
  updateTenant(tenantId: string, patch: TenantPatch): Promise<TenantResponse> {
    return this.#t.json("PATCH", `/v1/operator/tenants/${seg(tenantId)}`, { body: patch });
  }
  issueApiKey(tenantId: string, body: CreateTenantApiKeyRequest = {}): Promise<CreatedApiKeyResponse> {
    return this.#t.json("POST", `/v1/operator/tenants/${seg(tenantId)}/api-keys`, { body });
  }
  /** The D1 shard holding the tenant's projection, and how far a move of it has got. */
  getTenantShard(tenantId: string): Promise<TenantShardResponse> {
    return this.#t.json("GET", `/v1/operator/tenants/${seg(tenantId)}/shard`);
  }
  /** Moves the tenant's projection to another D1 shard (copy, then switch); follow it with `getTenantShard`. */
  moveTenantShard(tenantId: string, shard: string): Promise<TenantShardResponse> {
    return this.#t.json("POST", `/v1/operator/tenants/${seg(tenantId)}/shard`, { body: { shard } });
  }
}
