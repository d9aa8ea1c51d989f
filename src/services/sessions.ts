// A tenant's work on one of its conversations through its thread object (docs/api.md, "Sessions"): export, a run's
// input, handoff, a human agent's message, an upgrade, and erasure. Null where the object no longer has the thread.
import { AppError, type Result, unwrap } from "../errors";
import { eventBody, tenantEvents } from "../events/tenant-events";
import type { HandoffRequest, HumanMessageRequest, UpgradeRequest } from "../shared/sessions-api";
import type { ApprovalDecisionBody } from "../shared/thread-api";
import { findHold, heldError } from "../storage/d1/legal-holds";
import { eraseSessionRows } from "../storage/d1/sessions-repository";
import { eraseThreadRecord, type ThreadRecord } from "../storage/d1/thread-registry";
import { newEventId } from "../storage/thread/thread-events";
import { rowAddress, type ThreadAddress, type ThreadObject, threadStubFor } from "../thread/contract";
import { releaseErasedThreadAttachments } from "./erased-attachments";

/** An RPC to the thread's object; an object that cannot be reached is a 502, its refusals are its own. */
async function onThread<T>(
  env: Env,
  thread: ThreadRecord,
  rpc: (stub: DurableObjectStub<ThreadObject>, address: ThreadAddress) => Promise<Result<T>>,
): Promise<T> {
  const stub = await threadStubFor(env, thread);
  let result: Result<T>;
  try {
    result = await rpc(stub, rowAddress(thread));
  } catch (error) {
    throw new AppError("upstream_unavailable", "The thread is unavailable; try again.", { cause: error });
  }
  return unwrap(result);
}

/** The thread as one JSON document, streamed: the object checks the address and validates every row it writes. */
export function exportSession(env: Env, thread: ThreadRecord) {
  return onThread(env, thread, (stub, address) => stub.exportThread(address));
}

/** The run's audit record with the model input of call `step` (its last when absent), rebuilt by its object. */
export function sessionRunInput(env: Env, thread: ThreadRecord, runId: string, step?: number) {
  return onThread(env, thread, (stub, address) => stub.runInput(address, runId, step));
}

export function changeHandoff(env: Env, thread: ThreadRecord, request: HandoffRequest) {
  return onThread(env, thread, (stub, address) => stub.changeHandoff(address, request));
}

/** The tenant's decision on one of the thread's approvals (docs/tools.md#approvals). */
export function decideApproval(
  env: Env,
  thread: ThreadRecord,
  approvalId: string,
  body: ApprovalDecisionBody,
) {
  return onThread(env, thread, (stub, address) => stub.decideApprovalAsTenant(address, approvalId, body));
}

export function postHumanMessage(env: Env, thread: ThreadRecord, request: HumanMessageRequest) {
  return onThread(env, thread, (stub, address) => stub.postHumanMessage(address, request));
}

export function upgradeSession(env: Env, thread: ThreadRecord, request: UpgradeRequest) {
  return onThread(env, thread, (stub, address) => stub.upgradeThread(address, request));
}

/**
 * Erases one conversation: its registry row, its projected rows, its object, its files no other live thread uses
 * (docs/privacy.md#attachments), then `session.erased`. A held thread (its own hold or its subject's) is kept whole:
 * nothing runs (docs/privacy.md). Each step is idempotent: a 502 part way is finished by repeating the DELETE.
 */
export async function eraseSession(env: Env, thread: ThreadRecord): Promise<void> {
  const hold = await findHold(env.DB, thread.tenantId, thread.id);
  if (hold !== null) throw heldError(hold.scope);
  // Deleted first, so tokens for the thread are refused and late projections write nothing from here on; the
  // tombstone keeps no subject and the pin goes (docs/privacy.md: no subject id left anywhere).
  const at = new Date().toISOString();
  await eraseThreadRecord(env.DB, thread.tenantId, thread.id, at);
  await eraseSessionRows(env, thread.tenantId, thread.id, at);
  await onThread(env, thread, (stub, address) => stub.eraseThread(address));
  await releaseErasedThreadAttachments(env, thread.tenantId, thread.id);
  await emitSessionErased(env, thread);
}

/**
 * `session.erased` (docs/webhooks.md, docs/privacy.md: ids only), straight to the tenant's events object once the erasure succeeded; that
 * object also forgets the thread's earlier event bodies. The DELETE answers 204 only once the event is stored there:
 * if the object cannot take it, the answer is 502 and a retried DELETE (which finds the erased thread's tombstone and
 * erases again, harmlessly) records it — at least once, never silently lost.
 */
async function emitSessionErased(env: Env, thread: ThreadRecord): Promise<void> {
  const event = eventBody({
    id: newEventId(),
    type: "session.erased",
    createdAt: Date.now(),
    tenantId: thread.tenantId,
    data: { threadId: thread.id, agentId: thread.agentId, environment: thread.environment },
  });
  let result: Result<unknown>;
  try {
    result = await tenantEvents(env, thread.tenantId).accept(thread.tenantId, [event]);
  } catch (cause) {
    throw new AppError(
      "upstream_unavailable",
      "The conversation was erased, but its session.erased event could not be recorded; repeat the DELETE.",
      { cause },
    );
  }
  unwrap(result);
}
