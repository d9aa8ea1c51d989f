// Whether a release's runtime revision can run every version it allocates, checked when it is created and activated (docs/api.md#runtime-revisions).
import {
  missingCapabilities,
  RUNTIME_CAPABILITIES,
  requiredCapabilities,
  runtimeIncompatible,
  type Shortfall,
} from "../control/capabilities";
import type { DeploymentStore, Release, RuntimeRevision } from "../control/deployment-store";
import { CURRENT_RUNTIME } from "../control/runtime";
import { errors, type Failure } from "../errors";

/**
 * The revision a release runs on: this deployment's own when `runtimeId` is absent or names it (registered first, so
 * a release can always name it), else a registered one; an unknown id is a 400 on `field`.
 */
export async function releaseRuntime(
  store: DeploymentStore,
  runtimeId: string | undefined,
  field: string,
): Promise<RuntimeRevision> {
  await store.registerRuntime(CURRENT_RUNTIME);
  if (runtimeId === undefined || runtimeId === CURRENT_RUNTIME.id) return CURRENT_RUNTIME;
  const runtime = await store.getRuntime(runtimeId);
  if (runtime === null) {
    throw errors.badRequest("Release is invalid.", [
      { path: field, message: `unknown runtime revision '${runtimeId}'` },
    ]);
  }
  return runtime;
}

/**
 * The 409 `runtime_incompatible` refusal when an allocated version needs a capability `runtime` lacks, else null.
 * A version that does not exist is left to the store, which names it as a 400; a version failing its digest check
 * is that failure.
 */
export async function runtimeRefusal(
  store: DeploymentStore,
  tenantId: string,
  agentId: string,
  runtime: RuntimeRevision,
  allocations: readonly { version: number }[],
): Promise<Failure | null> {
  // A revision with every capability this code can ask for lacks nothing: no version needs to be read.
  if (RUNTIME_CAPABILITIES.every((c) => runtime.capabilities.includes(c))) return null;
  const versions = await Promise.all(allocations.map((a) => store.getVersion(tenantId, agentId, a.version)));
  const shortfalls: Shortfall[] = [];
  for (const [index, read] of versions.entries()) {
    if (!read.ok) {
      if (read.code === "not_found") continue;
      return read;
    }
    const missing = missingCapabilities(requiredCapabilities(read.value.artifact), runtime);
    if (missing.length > 0) shortfalls.push({ index, version: read.value.version, missing });
  }
  return shortfalls.length === 0 ? null : runtimeIncompatible(runtime.id, shortfalls);
}

/** The refusal to activate `release` when its runtime, as registered now, cannot run one of its versions. */
export async function activationRefusal(store: DeploymentStore, release: Release): Promise<Failure | null> {
  const id = release.runtimeRevision;
  // A release names a registered revision (the store refuses any other), so a missing one can run nothing.
  const runtime = id === CURRENT_RUNTIME.id ? CURRENT_RUNTIME : await store.getRuntime(id);
  return runtimeRefusal(
    store,
    release.tenantId,
    release.agentId,
    runtime ?? { id, supportedSchemaVersions: [], capabilities: [] },
    release.allocations,
  );
}
