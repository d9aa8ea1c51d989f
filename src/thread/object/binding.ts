// Pins a thread to one exact agent version on first use, and refuses any request whose claims disagree.
import type { DeploymentStore } from "../../control/deployment-store";
import { fail, ok, type Result } from "../../errors";
import { readPin, type ThreadBinding, writePin } from "../../storage/thread/pin-store";
import { recordThreadEvent } from "../../storage/thread/thread-events";
import type { PreviewPin, ThreadAddress, ThreadClaims } from "../contract";

export function claimsMatch(binding: ThreadBinding, claims: ThreadAddress): boolean {
  return (
    binding.tenantId === claims.tenantId &&
    binding.environment === claims.environment &&
    binding.agentId === claims.agentId &&
    binding.threadId === claims.threadId
  );
}

const mismatch = () => fail("forbidden", "This thread belongs to another agent or tenant.");
const tampered = () => fail("internal", "The thread's pinned artifact failed its digest check.");

/**
 * Reads the stored binding (re-verifying its digest) or creates it: the control plane assigns the pin, the exact
 * version is loaded and its digest checked, and the binding is written once. Claims that disagree fail closed; the
 * caller checked the claims' subject against the thread's owner first (src/thread/object/thread-gate.ts).
 */
export async function bindThread(
  storage: DurableObjectStorage,
  claims: ThreadClaims,
  store: DeploymentStore,
  now: () => number,
): Promise<Result<ThreadBinding>> {
  const stored = await readPin(storage);
  if (!stored.ok) return tampered();
  if (stored.binding !== null) return claimsMatch(stored.binding, claims) ? ok(stored.binding) : mismatch();

  const pin = await store.assignThread(claims.tenantId, {
    agentId: claims.agentId,
    environment: claims.environment,
    threadId: claims.threadId,
  });
  if (!pin.ok) return pin;
  const version = await store.getVersionById(claims.tenantId, pin.value.versionId);
  if (!version.ok) return version;
  if (version.value.digest !== pin.value.digest || version.value.agentId !== claims.agentId)
    return tampered();

  // Another request may have bound the thread while this one awaited the control plane.
  const again = await readPin(storage);
  if (!again.ok) return tampered();
  if (again.binding !== null) return claimsMatch(again.binding, claims) ? ok(again.binding) : mismatch();

  const binding: ThreadBinding = {
    tenantId: claims.tenantId,
    environment: claims.environment,
    agentId: claims.agentId,
    threadId: claims.threadId,
    versionId: version.value.id,
    version: version.value.version,
    digest: version.value.digest,
    artifact: version.value.artifact,
    boundAt: now(),
  };
  // The tenant's backend learns of the thread (`thread.created`) exactly when it is bound, in the same commit.
  storage.transactionSync(() => {
    writePin(storage, binding);
    recordThreadEvent(
      storage,
      {
        type: "thread.created",
        data: {
          threadId: binding.threadId,
          agentId: binding.agentId,
          version: binding.version,
          environment: binding.environment,
        },
      },
      binding.boundAt,
    );
  });
  return ok(binding);
}

/**
 * A preview thread is bound when it is created, to the artifact the console previews, not by the control plane's
 * assignment; it announces nothing (no `thread.created`). The same pin again is a no-op, any other is refused.
 */
export async function bindPreview(
  storage: DurableObjectStorage,
  claims: ThreadAddress,
  pin: PreviewPin,
  now: number,
): Promise<Result<ThreadBinding>> {
  const stored = await readPin(storage);
  if (!stored.ok) return tampered();
  if (stored.binding !== null) {
    const same = claimsMatch(stored.binding, claims) && stored.binding.digest === pin.digest;
    return same && stored.binding.preview !== undefined
      ? ok(stored.binding)
      : fail("conflict", "The thread is already bound.");
  }
  const binding: ThreadBinding = {
    tenantId: claims.tenantId,
    environment: claims.environment,
    agentId: claims.agentId,
    threadId: claims.threadId,
    versionId: pin.versionId,
    version: pin.version,
    digest: pin.digest,
    artifact: pin.artifact,
    boundAt: now,
    preview: pin.preview,
  };
  storage.transactionSync(() => writePin(storage, binding));
  return ok(binding);
}
