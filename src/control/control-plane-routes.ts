// The control-plane service's routes, one per port method: what the HTTP adapter calls and the service serves
// (docs/control-plane.md#routes). Pure data, shared by both ends so they cannot drift.
import type { DeploymentStore } from "./deployment-store";

export type DeploymentMethod = keyof DeploymentStore;

/** What a route's token must cover: the body's tenant, the pre-tenant lookups, or the operator's global writes. */
export type RouteScope = "tenant" | "lookup" | "operator";

export interface DeploymentRoute {
  /** Path under /v1/internal/deployment/. */
  path: string;
  /** The method's parameters in order, as the JSON body's member names. */
  params: readonly string[];
  /** `tenant`: the body's `tenantId` must be the token's tenant. */
  scope: RouteScope;
  /** A read the adapter may retry; writes are sent once. */
  read: boolean;
}

export const DEPLOYMENT_ROUTE_PREFIX = "/v1/internal/deployment/";

const tenantRead = (path: string, ...params: string[]): DeploymentRoute => ({
  path,
  params: ["tenantId", ...params],
  scope: "tenant",
  read: true,
});
const tenantWrite = (path: string, ...params: string[]): DeploymentRoute => ({
  path,
  params: ["tenantId", ...params],
  scope: "tenant",
  read: false,
});

export const DEPLOYMENT_ROUTES: Record<DeploymentMethod, DeploymentRoute> = {
  createTenant: { path: "tenants/create", params: ["input"], scope: "operator", read: false },
  getTenant: tenantRead("tenants/get"),
  createAgent: tenantWrite("agents/create", "input"),
  getAgent: tenantRead("agents/get", "agentId"),
  findAgentByPublicKey: { path: "agents/by-public-key", params: ["publicKey"], scope: "lookup", read: true },
  // The scope follows the lookup: by public key before the tenant is known, else the lookup's tenant.
  findLaunchAgent: { path: "launch/agent", params: ["lookup", "environment"], scope: "lookup", read: true },
  listAgents: tenantRead("agents/list", "page"),
  updateAgent: tenantWrite("agents/update", "agentId", "patch"),
  saveDraft: tenantWrite("drafts/save", "agentId", "expectedRevision", "definition"),
  getDraft: tenantRead("drafts/get", "agentId"),
  publishDraft: tenantWrite("versions/publish", "agentId", "draftRevision"),
  getVersion: tenantRead("versions/get", "agentId", "version"),
  getVersionById: tenantRead("versions/by-id", "versionId"),
  listVersions: tenantRead("versions/list", "agentId", "page"),
  registerRuntime: { path: "runtimes/register", params: ["runtime"], scope: "operator", read: false },
  // A runtime revision is deployment data, not a tenant's: read across tenants like the launch lookups.
  getRuntime: { path: "runtimes/get", params: ["runtimeId"], scope: "lookup", read: true },
  createRelease: tenantWrite("releases/create", "agentId", "input"),
  activateRelease: tenantWrite("releases/activate", "agentId", "releaseId"),
  getRelease: tenantRead("releases/get", "agentId", "releaseId"),
  listReleases: tenantRead("releases/list", "agentId", "page"),
  getActiveRelease: tenantRead("releases/active", "agentId", "environment"),
  assignThread: tenantWrite("threads/assign", "input"),
  getPin: tenantRead("threads/pinned-version", "threadId"),
};

/**
 * Methods that return a `Result`: their expected failures travel as the product's error body with the
 * `x-deployment-failure: 1` header, so the adapter returns them as values instead of throwing. An error the store
 * throws on purpose carries `x-deployment-failure: thrown`, and the adapter throws it again with its code.
 */
export const RESULT_METHODS: ReadonlySet<DeploymentMethod> = new Set<DeploymentMethod>([
  "createAgent",
  "updateAgent",
  "saveDraft",
  "publishDraft",
  "getVersion",
  "getVersionById",
  "createRelease",
  "activateRelease",
  "assignThread",
]);

export const FAILURE_HEADER = "x-deployment-failure";

/** The tenant a call is about, for the token's scope: the lookup's tenant when it names one, else none. */
export function scopeOfCall(
  method: DeploymentMethod,
  body: Record<string, unknown>,
): { tenantId: string } | "lookup" | "operator" | null {
  const route = DEPLOYMENT_ROUTES[method];
  if (route.scope === "operator") return "operator";
  if (method === "findLaunchAgent") {
    const lookup = body.lookup;
    if (typeof lookup !== "object" || lookup === null) return null;
    const tenantId = (lookup as Record<string, unknown>).tenantId;
    if (tenantId === undefined) return "lookup";
    return typeof tenantId === "string" ? { tenantId } : null;
  }
  if (route.scope === "lookup") return "lookup";
  return typeof body.tenantId === "string" ? { tenantId: body.tenantId } : null;
}
