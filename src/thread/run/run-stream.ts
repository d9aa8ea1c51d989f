// One run's model call: moved to running, wired (secrets, tools, context), prompted from its branch, streamed to the
// live run's receivers, audited, and sealed by its cause — succeed, an abort's, or fail with a timeout or the error.
import { modelInputOf } from "../../models/model-input";
import type { BuildPromptInput } from "../../models/prompt";
import { CURRENT_PROMPT_BUILDER, currentPromptBuilder } from "../../models/prompt-builders";
import { runTurn, type TurnStep } from "../../models/turn";
import type { ErrorCode, ErrorReason } from "../../shared/errors";
import { abortCauseOf, RUN_MOVES } from "../../shared/run-states";
import type { JsonValue } from "../../storage/redact";
import type { Entry } from "../../storage/thread/entry-store";
import { readRunAudit } from "../../storage/thread/run-audit-store";
import type { Run, RunError } from "../../storage/thread/run-store";
import { type LiveRun, runFrame, type StreamReceivers } from "./live-run";
import { attachmentReader, withAttachmentBytes } from "./prompt-attachments";
import type { PromptHistory } from "./prompt-history";
import { outcomeOf, parkedFrame, parkedSteps } from "./run-action-views";
import { cancelActions } from "./run-actions";
import { contextBudget, runArtifact, type VersionBindings } from "./run-artifact";
import { runAuditor } from "./run-audit";
import type { RunEnd } from "./run-seal";
import type { RunStores } from "./run-stores";
import { type RunWiring, type WiringDeps, wireRun } from "./run-wiring";
import { type StoredToolCall, toolCallsOfSteps } from "./tool-history";

const MAX_MODEL_STEPS = 4;
const STALL_TIMEOUT_MS = 60_000;

/**
 * Why a run's signal was aborted when it ran past its wall-clock limit. Named `TimeoutError`, so the turn reports a
 * timeout failure (not a cancellation) and every model and tool call under way stops with it.
 */
export class RunTimeout extends Error {
  override readonly name = "TimeoutError";

  constructor(readonly limitMs: number) {
    super(`The run passed its limit of ${limitMs} ms.`);
  }

  /** What the run frame, the run's record and `run.failed` say. */
  runError(): RunError {
    return {
      code: "upstream_unavailable",
      reason: "timeout",
      message: `The reply took longer than this agent's limit of ${this.limitMs / 1000} seconds.`,
    };
  }
}

/** The stored, public part of a failure: code, reason (a provider's, when it gave one) and message. */
export function runError(error: { code: ErrorCode; reason?: ErrorReason; message: string }): RunError {
  return {
    code: error.code,
    ...(error.reason !== undefined ? { reason: error.reason } : {}),
    message: error.message,
  };
}

export interface StreamDeps extends Omit<WiringDeps, "binding" | "receivers"> {
  stores: RunStores;
  receivers: StreamReceivers;
  versions: VersionBindings;
  history: PromptHistory;
  /** Ends the run (src/thread/run/run-seal.ts) through `stores`, with its answered tool calls. */
  seal: (
    run: Run,
    text: string,
    end: RunEnd,
    stores: RunStores,
    toolCalls?: readonly StoredToolCall[],
    afterActions?: boolean,
  ) => Run;
  /** A run now waits for a person: arm the object's wake-up for the first of its actions to expire. */
  onParked: () => void;
}

export async function streamRun(
  deps: StreamDeps,
  live: LiveRun,
  queued: Run,
  userEntry: Entry,
): Promise<Run> {
  const { runs } = deps.stores;
  // A run accepted with nothing ahead of it was stored running (and announced so) when it was created.
  const running =
    queued.status === "running"
      ? { ok: true as const, value: queued }
      : runs.transition(queued.id, "running");
  if (!running.ok) return queued;
  if (running.value !== queued) deps.receivers.send(runFrame(running.value));

  await deps.versions.load();
  const bound = runArtifact(deps.versions, userEntry);
  if (!bound.ok) return deps.seal(running.value, "", { cause: "fail", error: runError(bound) }, live.stores);
  const binding = bound.value;
  // A run that waited for a person goes on from its stored steps, under the context its first model call saw.
  const parked = live.resumed ? parkedSteps(live.stores, live.runId) : null;
  const startedUnder = parked === null ? undefined : readRunAudit(deps.storage, live.runId)?.contextVersion;
  const wiring = await wireRun(
    { ...deps, binding },
    {
      runId: live.runId,
      userEntryId: running.value.userEntryId,
      subject: live.subject,
      stores: live.stores,
      requestHost: live.meta?.host ?? null,
      ...(startedUnder !== undefined ? { contextVersion: startedUnder } : {}),
      onAsked: () => {
        live.asked = true;
      },
    },
  );
  live.stores = wiring.stores;
  if (!wiring.turn.ok) {
    return deps.seal(running.value, "", { cause: "fail", error: runError(wiring.turn) }, live.stores);
  }

  const maxContextTokens = contextBudget(binding.artifact);
  const history = deps.history.historyFor(userEntry, maxContextTokens);
  let promptInput: BuildPromptInput;
  try {
    promptInput = await withAttachmentBytes(
      { instructions: wiring.instructions, branch: history, maxContextTokens },
      attachmentReader(deps.env, binding.tenantId),
    );
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", message: "attachment read failed", error: String(error) }),
    );
    const unreadable = {
      code: "upstream_unavailable" as const,
      message: "An attachment of this conversation could not be read; try again.",
    };
    return deps.seal(running.value, "", { cause: "fail", error: unreadable }, live.stores);
  }
  const prompt = currentPromptBuilder(promptInput);
  const { tools } = wiring.turn.value;
  const audit = runAuditor(
    deps.storage,
    live.runId,
    {
      promptBuilder: CURRENT_PROMPT_BUILDER,
      artifactDigest: binding.digest,
      contextVersion: wiring.contextVersion,
    },
    (messages) => modelInputOf(binding.artifact.model, messages, tools),
  );
  // A run that waited for a person continues from its stored steps, every waiting call now answered: a denial, a
  // client's answer, or the approved server tool's (run here, once: its answer is kept on the approval).
  let resume: TurnStep[] | undefined;
  if (parked !== null) {
    resume = await answeredSteps(parked, live, binding.digest, wiring.runApproved);
    if (live.controller.signal.aborted) resume = undefined;
  }
  const result = await runTurn({
    ...wiring.turn.value,
    ...(resume !== undefined ? { resume } : {}),
    prompt,
    signal: live.controller.signal,
    maxSteps: MAX_MODEL_STEPS,
    stallTimeoutMs: STALL_TIMEOUT_MS,
    onDelta: (delta) => live.push(delta),
    onModelCall: audit.modelCall,
  });
  await audit.settled();

  // The run as it started: nothing but its end changes what the seal reads of it (the seal's own update checks its
  // status, and a seal refused because it ended elsewhere reports the run as it is).
  const current = running.value;
  if (result.status === "requires_action" && !live.controller.signal.aborted) {
    // Deltas of the model's last event-loop turn are stored and sent before the run waits: its reply goes on after them.
    live.flush();
    const waiting = park(deps, live, current, result.steps);
    if (waiting !== null) return waiting;
  }
  // Otherwise the seal stores them in the reply entry and sends them before it (`LiveRun.settle`).
  const stopped = live.controller.signal.reason;
  const end: RunEnd =
    result.status === "succeeded"
      ? { cause: "succeed" }
      : result.status !== "failed"
        ? { cause: abortCauseOf(stopped) }
        : {
            cause: "fail",
            error: stopped instanceof RunTimeout ? stopped.runError() : runError(result.error),
          };
  const asked = live.resumed || live.asked;
  // A run that ends without waiting (cancelled, failed, out of time) leaves nothing pending behind it.
  if (asked) {
    cancelActions(
      { storage: deps.storage, stores: live.stores, receivers: deps.receivers, binding, now: deps.now },
      live.runId,
      end.cause === "succeed" ? "ended" : end.cause === "fail" ? "failed" : RUN_MOVES[end.cause].reason,
    );
  }
  const sealed = deps.seal(
    current,
    live.text,
    end,
    live.stores,
    toolCallsOfSteps(result.steps, live.text),
    asked,
  );
  deps.history.remember(history, userEntry, sealed, maxContextTokens, live.reply);
  return sealed;
}

/** Stores a run's steps and moves it to `requires_action`, with its pending approvals on the run frame. */
function park(deps: StreamDeps, live: LiveRun, run: Run, steps: readonly TurnStep[]): Run | null {
  const moved = deps.storage.transactionSync(() => {
    live.stores.actions.park(run.id, steps as unknown as JsonValue, live.subject);
    return live.stores.runs.transition(run.id, "requires_action");
  });
  if (!moved.ok) return null;
  deps.receivers.send(parkedFrame(live.stores, moved.value));
  deps.onParked();
  return moved.value;
}

/**
 * The waiting step's calls with their answers filled in from the run's settled actions. An approved server tool runs
 * now, its delivery id its approval's; its answer is kept on the approval, so a second resume never calls it again. A
 * call approved under another artifact than the run's now is refused (the approval was bound to the one it saw).
 */
async function answeredSteps(
  steps: readonly TurnStep[],
  live: LiveRun,
  artifactDigest: string,
  runApproved: RunWiring["runApproved"],
): Promise<TurnStep[]> {
  const actions = live.stores.actions.ofRun(live.runId);
  const out: TurnStep[] = [];
  for (const step of steps) {
    const waiting = new Set(step.waiting ?? []);
    const toolCalls: TurnStep["toolCalls"] = [];
    for (const call of step.toolCalls) {
      if (!waiting.has(call.toolCallId)) {
        toolCalls.push(call);
        continue;
      }
      // The newest action of the call decides: an approved client tool's request follows its approval.
      const action = actions.filter((a) => a.toolCallId === call.toolCallId).at(-1);
      let outcome = action === undefined ? null : outcomeOf(action);
      if (action !== undefined && outcome === null && action.status === "approved") {
        outcome =
          action.artifactDigest !== artifactDigest
            ? { output: { denied: true, reason: "The agent changed since this call was approved." } }
            : await runApproved(call, action.id, live.controller.signal);
        live.stores.actions.recordOutput(action.id, outcome.output as JsonValue, outcome.isError === true);
      }
      toolCalls.push({ ...call, outcome: outcome ?? { output: { error: "No answer." }, isError: true } });
    }
    const { waiting: _answered, ...rest } = step;
    out.push({ ...rest, toolCalls });
  }
  return out;
}
