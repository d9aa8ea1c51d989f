// One run's model call: moved to running, wired (secrets, tools, context), prompted from its branch, streamed to the
// live run's receivers, audited, and sealed by its cause — succeed, an abort's, or fail with a timeout or the error.
import { modelInputOf } from "../../models/model-input";
import { CURRENT_PROMPT_BUILDER, currentPromptBuilder } from "../../models/prompt-builders";
import { runTurn } from "../../models/turn";
import type { ErrorCode, ErrorReason } from "../../shared/errors";
import { abortCauseOf } from "../../shared/run-states";
import type { Entry } from "../../storage/thread/entry-store";
import type { Run, RunError } from "../../storage/thread/run-store";
import { type LiveRun, runFrame, type StreamReceivers } from "./live-run";
import type { PromptHistory } from "./prompt-history";
import { contextBudget, runArtifact, type VersionBindings } from "./run-artifact";
import { runAuditor } from "./run-audit";
import type { RunEnd } from "./run-seal";
import type { RunStores } from "./run-stores";
import { type WiringDeps, wireRun } from "./run-wiring";
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

export interface StreamDeps extends Omit<WiringDeps, "binding"> {
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
  ) => Run;
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
  const wiring = await wireRun(
    { ...deps, binding },
    { runId: live.runId, subject: live.subject, stores: live.stores, requestHost: live.meta?.host ?? null },
  );
  live.stores = wiring.stores;
  if (!wiring.turn.ok) {
    return deps.seal(running.value, "", { cause: "fail", error: runError(wiring.turn) }, live.stores);
  }

  const maxContextTokens = contextBudget(binding.artifact);
  const history = deps.history.historyFor(userEntry, maxContextTokens);
  const prompt = currentPromptBuilder({
    instructions: wiring.instructions,
    branch: history,
    maxContextTokens,
  });
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
  const result = await runTurn({
    ...wiring.turn.value,
    prompt,
    signal: live.controller.signal,
    maxSteps: MAX_MODEL_STEPS,
    stallTimeoutMs: STALL_TIMEOUT_MS,
    onDelta: (delta) => live.push(delta),
    onModelCall: audit.modelCall,
  });
  await audit.settled();
  // Deltas of the model's last event-loop turn are stored and sent before the reply entry.
  live.flush();

  const current = runs.get(live.runId) ?? running.value;
  const stopped = live.controller.signal.reason;
  const end: RunEnd =
    result.status === "succeeded"
      ? { cause: "succeed" }
      : result.status === "aborted"
        ? { cause: abortCauseOf(stopped) }
        : {
            cause: "fail",
            error: stopped instanceof RunTimeout ? stopped.runError() : runError(result.error),
          };
  const sealed = deps.seal(current, live.text, end, live.stores, toolCallsOfSteps(result.steps, live.text));
  deps.history.remember(history, userEntry, sealed, maxContextTokens);
  return sealed;
}
