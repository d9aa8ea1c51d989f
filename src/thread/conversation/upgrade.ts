// Per-thread opt-in upgrade (docs/api.md): a `version_change` entry at the leaf moves the turns below it to another
// published version of the same agent; branches forked above it keep the version they had.
import { selectAllocation } from "../../control/allocation";
import { digestOf } from "../../control/canonical-json";
import type { DeploymentStore } from "../../control/deployment-store";
import { fail, ok, type Result } from "../../errors";
import type { Entry, EntryStore } from "../../storage/thread/entry-store";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import { type ThreadVersion, writeThreadVersion } from "../../storage/thread/thread-versions";
import type { UpgradeBy, VersionChangeBody } from "../run";

/**
 * A published version of the thread's own agent, its artifact verified against its digest before the thread may
 * use it (as the pin's is before binding). Unknown, or another agent's: not found.
 */
export async function loadVersion(
  store: DeploymentStore,
  pin: ThreadBinding,
  version: number,
): Promise<Result<ThreadVersion>> {
  const found = await store.getVersion(pin.tenantId, pin.agentId, version);
  if (!found.ok) return found.code === "not_found" ? fail("not_found", "Version not found.") : found;
  const v = found.value;
  if (v.agentId !== pin.agentId || v.tenantId !== pin.tenantId)
    return fail("not_found", "Version not found.");
  if ((await digestOf(v.artifact)) !== v.digest) {
    return fail("internal", "The version's artifact failed its digest check.");
  }
  return ok({ versionId: v.id, version: v.version, digest: v.digest, artifact: v.artifact });
}

/**
 * The version the agent's active release would give this thread now (its own deterministic assignment, exactly as
 * launch assigns a new thread), when the thread's current version offers upgrades and that one is newer; else null.
 */
export async function offeredVersion(store: DeploymentStore, current: ThreadBinding): Promise<number | null> {
  if (current.artifact.upgrades !== "offer") return null;
  const { tenantId, agentId, environment, threadId } = current;
  const release = await store.getActiveRelease(tenantId, agentId, environment);
  if (release === null || release.allocations.length === 0) return null;
  const chosen = await selectAllocation(
    { tenantId, agentId, environment, threadId, releaseId: release.id },
    release.allocations,
  );
  return chosen.version > current.version ? chosen.version : null;
}

/**
 * Stores the target version and appends the `version_change` entry at the leaf, in one transaction. The caller has
 * checked that nothing runs, the thread is not in handoff and the target differs from the leaf's version.
 */
export function appendVersionChange(
  storage: DurableObjectStorage,
  entries: EntryStore,
  change: { leaf: Entry | null; from: ThreadBinding; to: ThreadVersion; by: UpgradeBy; now: number },
): Result<Entry> {
  const { leaf, from, to, by, now } = change;
  return storage.transactionSync((): Result<Entry> => {
    const body: VersionChangeBody = { fromVersion: from.version, toVersion: to.version, by };
    const appended = entries.append({
      parentId: leaf?.id ?? null,
      ...(leaf !== null ? { expectedParentId: leaf.id } : {}),
      kind: "version_change",
      body,
      agentVersion: to.version,
    });
    if (!appended.ok) return appended;
    writeThreadVersion(storage, to, now);
    return ok(appended.value.entry);
  });
}
