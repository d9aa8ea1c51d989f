// What the tenant's admin API does to a bound thread: handoff and a person's reply (docs/protocol.md#handoff), upgrade
// (docs/api.md#upgrading-a-thread-to-another-version), export and a run's rebuilt input. Each change is projected
// before it answers, so the session views show it.
import { zeroRetentionIdleMinutes } from "../../control/artifact";
import { fail, ok, type Result } from "../../errors";
import type { WireEntry } from "../../shared/protocol";
import { handoffRequest, humanMessageRequest, upgradeRequest } from "../../shared/sessions-api";
import { exportThreadStream } from "../../storage/thread/thread-export";
import type { HandoffView, RunInputView, UpgradeReply } from "../contract";
import { rebuildRunInput, toWireEntry } from "../run";
import type { ThreadRuntime } from "./thread-runtime";

/** Drains the thread's outbox into D1 and waits for it. */
type Project = () => Promise<void>;

const invalidBody = () => fail("bad_request", "Request body is invalid.");

/** `POST /v1/sessions/:id/handoff`: starts or ends a handoff. */
export async function changeHandoff(
  runtime: ThreadRuntime,
  request: unknown,
  project: Project,
): Promise<Result<HandoffView>> {
  const parsed = handoffRequest.safeParse(request);
  if (!parsed.success) return invalidBody();
  const handoff = runtime.handoff;
  const changed = parsed.data.action === "start" ? await handoff.start(parsed.data.agentName) : handoff.end();
  if (changed.ok && changed.value.changed) await project();
  return changed;
}

/** `POST /v1/sessions/:id/upgrade`: moves the thread to another version of its agent from its leaf on. */
export async function upgradeThread(
  runtime: ThreadRuntime,
  request: unknown,
  project: Project,
): Promise<Result<UpgradeReply>> {
  const parsed = upgradeRequest.safeParse(request);
  if (!parsed.success) return invalidBody();
  const upgraded = await runtime.upgrade(parsed.data.version, "tenant");
  if (upgraded.ok) await project();
  return upgraded;
}

/** `POST /v1/sessions/:id/messages`: a person's reply during a handoff. */
export async function postHumanMessage(
  runtime: ThreadRuntime,
  message: unknown,
  project: Project,
): Promise<Result<WireEntry>> {
  const parsed = humanMessageRequest.safeParse(message);
  if (!parsed.success) return invalidBody();
  const appended = runtime.handoff.humanMessage(parsed.data);
  if (!appended.ok) return appended;
  await project();
  return ok(toWireEntry(appended.value));
}

/**
 * `GET /v1/sessions/:id/export`: the whole thread as a stream of JSON text (`threadExportSchema`), produced a page at a
 * time as the Worker reads it.
 */
export function exportThread(
  storage: DurableObjectStorage,
  runtime: ThreadRuntime,
): Result<ReadableStream<Uint8Array>> {
  // Zero retention (docs/privacy.md): the thread keeps no content worth exporting, so export refuses rather than
  // answer a document whose text comes and goes with the thread's idleness.
  if (zeroRetentionIdleMinutes(runtime.binding.artifact) !== null) {
    return fail("conflict", "This agent keeps no conversation content (zero retention): nothing to export.");
  }
  return ok(exportThreadStream(storage, runtime.binding));
}

/**
 * `GET /v1/sessions/:id/runs/:runId/input`: the run's audit record with the model input of call `step` (its last
 * when absent) rebuilt from storage.
 */
export function runInput(
  storage: DurableObjectStorage,
  runtime: ThreadRuntime,
  runId: string,
  step?: number,
): Promise<Result<RunInputView>> {
  return rebuildRunInput(storage, runtime.versions, runId, {
    attachments: runtime.attachmentBytes,
    ...(step === undefined ? {} : { step }),
  });
}
