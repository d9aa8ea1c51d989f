// The presentation a launch answers with (docs/protocol.md): the pinned version's, or for a thread not yet pinned the version
// the active release assigns it. The `ready` frame, sent by the pinned thread itself, has the last word.
import { selectAllocation } from "../../control/allocation";
import type { ContextVariables } from "../../control/context-variables";
import type { DeploymentStore, Environment } from "../../control/deployment-store";
import { type PresentationSource, presentationOf, presentationSource } from "../../control/presentation";
import type { Presentation } from "../../shared/presentation";
import { activeReleaseCached } from "./active-release-cache";

/** Versions are write-once and digest-checked on read, so what they present never goes stale: no TTL. */
export const PRESENTATION_CACHE_MAX = 500;

const byVersion = new Map<string, Promise<PresentationSource | null>>();

function sourceOf(
  store: DeploymentStore,
  tenantId: string,
  versionId: string,
): Promise<PresentationSource | null> {
  const key = `${tenantId}\u0000${versionId}`;
  const hit = byVersion.get(key);
  if (hit !== undefined) return hit;
  const read = store
    .getVersionById(tenantId, versionId)
    .then((version) => (version.ok ? presentationSource(version.value.artifact) : null));
  // A failed read (not found, a digest mismatch, D1 down) is asked again next time.
  const forget = () => {
    if (byVersion.get(key) === read) byVersion.delete(key);
  };
  read.then((source) => source === null && forget(), forget);
  if (byVersion.size >= PRESENTATION_CACHE_MAX) {
    const oldest = byVersion.keys().next();
    if (!oldest.done) byVersion.delete(oldest.value);
  }
  byVersion.set(key, read);
  return read;
}

export interface PresentationTarget {
  tenantId: string;
  agentId: string;
  environment: Environment;
  threadId: string;
  /** True when the thread existed before this launch, so it may already be pinned. */
  existing: boolean;
  /** The pinned version as the thread object reported it (null: not pinned yet); read from D1 when absent. */
  pinnedVersionId?: string | null;
}

/**
 * The version a thread shows: its pin when it has one (a refreshed thread keeps the version it was pinned to, whatever
 * was released since), else the active release's allocation for it, which is the pin its first connection will
 * write unless a release is activated in between. Undefined when there is no release to show.
 */
async function versionIdFor(store: DeploymentStore, target: PresentationTarget): Promise<string | null> {
  if (target.pinnedVersionId !== undefined && target.pinnedVersionId !== null) return target.pinnedVersionId;
  if (target.existing && target.pinnedVersionId === undefined) {
    const pin = await store.getPin(target.tenantId, target.threadId);
    if (pin !== null) return pin.agentId === target.agentId ? pin.versionId : null;
  }
  const release = await activeReleaseCached(store, target.tenantId, target.agentId, target.environment);
  if (release === null || release.allocations.length === 0) return null;
  const { tenantId, agentId, environment, threadId } = target;
  const chosen = await selectAllocation(
    { tenantId, agentId, environment, threadId, releaseId: release.id },
    release.allocations,
  );
  return chosen.versionId;
}

/** Undefined when the agent has nothing to present yet (no pin and no active release). */
export async function launchPresentation(
  store: DeploymentStore,
  target: PresentationTarget,
  variables: ContextVariables,
): Promise<Presentation | undefined> {
  const versionId = await versionIdFor(store, target);
  if (versionId === null) return undefined;
  const source = await sourceOf(store, target.tenantId, versionId);
  return source === null ? undefined : presentationOf(source, variables);
}
