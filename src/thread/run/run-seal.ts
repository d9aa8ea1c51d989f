// A run's end, in one transaction: its reply entry (if any text, with its answered tool calls), its final status by
// the state machine's cause (src/shared/run-states.ts), its event and usage; then its log line and frames.
import type { AbortCause } from "../../shared/run-states";
import { RUN_MOVES } from "../../shared/run-states";
import type { Entry } from "../../storage/thread/entry-store";
import type { QueuedTurnStore } from "../../storage/thread/queued-turn-store";
import type { Run, RunError } from "../../storage/thread/run-store";
import type { UsageTotals } from "../../storage/thread/usage-store";
import { toWireEntry } from "./frames";
import { type LiveRun, runFrame, type StreamReceivers } from "./live-run";
import type { RunBindings } from "./run-binding";
import { recordRunEvent } from "./run-events";
import type { RunStores } from "./run-stores";
import type { StoredToolCall } from "./tool-history";
import { logTurn } from "./turn-log";

/** How a run ends: the cause of its last move, and a failure's error. */
export type RunEnd = { cause: "succeed" } | { cause: AbortCause } | { cause: "fail"; error: RunError };

export interface SealDeps {
  storage: DurableObjectStorage;
  queue: QueuedTurnStore;
  receivers: StreamReceivers;
  bindings: RunBindings;
  now: () => number;
}

export interface SealedRun {
  /** The run whose model was streaming, when it is the one that ends. */
  live: LiveRun | null;
  /** The stores its rows go through (the live run's redacting ones while it streamed). */
  stores: RunStores;
  toolCalls?: readonly StoredToolCall[];
  /** The run asked a person (approvals, client tools): its reply goes below the last entry it wrote. */
  afterActions?: boolean;
}

/** What the seal's transaction wrote: the run as it ended (or as it is, when its end was refused) and its reply. */
interface SealOutcome {
  run: Run;
  entry: Entry | null;
  usage: UsageTotals;
  /** The run's own end was written (false: it had ended elsewhere). */
  ended: boolean;
}

export function sealRun(deps: SealDeps, run: Run, text: string, end: RunEnd, sealed: SealedRun): Run {
  const move = RUN_MOVES[end.cause];
  const entryStatus = move.to === "succeeded" ? "complete" : move.to === "aborted" ? "interrupted" : "failed";
  const { live, stores } = sealed;
  const toolCalls = sealed.toolCalls ?? [];
  const firstDeltaAt = live?.firstDeltaAt ?? null;
  const binding = deps.bindings.ofRun(run);
  const done = deps.storage.transactionSync((): SealOutcome => {
    let entry: Entry | null = null;
    if (text.length > 0 && run.userEntryId !== null) {
      const below = sealed.afterActions
        ? (stores.entries.lastOfRun(run.id)?.id ?? run.userEntryId)
        : run.userEntryId;
      const appended = stores.entries.append({
        parentId: below,
        kind: "message",
        role: "assistant",
        runId: run.id,
        body: { text, status: entryStatus, ...(toolCalls.length > 0 ? { toolCalls } : {}) },
        select: true,
      });
      if (appended.ok) entry = appended.value.entry;
    }
    const ended = stores.runs.transition(run.id, move.to, {
      ...(entry !== null ? { assistantEntryId: entry.id } : {}),
      ...("reason" in move ? { abortReason: move.reason } : {}),
      ...(end.cause === "fail" ? { error: end.error } : {}),
      ...(firstDeltaAt !== null
        ? { firstDeltaMs: Math.max(0, Math.round(firstDeltaAt - run.createdAt)) }
        : {}),
    });
    // The run's usage is final now: read once for its event, its log line and its quota slot.
    const usage = stores.usage.sealedTotals(run.id);
    if (live !== null) {
      live.usage = usage;
      live.reply = entry;
    }
    // A queued run that ends unstarted leaves the queue with its request (a started one left it as it started); a
    // waiting one its stored steps.
    if (ended.ok && run.status === "queued") deps.queue.remove(run.id);
    if (ended.ok && sealed.afterActions) stores.actions.unpark(run.id);
    if (ended.ok) recordRunEvent(deps.storage, binding, ended.value, usage, deps.now());
    return {
      run: ended.ok ? ended.value : (stores.runs.get(run.id) ?? run),
      entry,
      usage,
      ended: ended.ok,
    };
  });
  // The streamed deltas not yet sent go first, now that the reply entry holds their text.
  live?.settle(done.ended && done.entry !== null && text === live.text);
  logTurn({
    binding,
    run: done.run,
    usage: () => done.usage,
    requestId: live?.meta?.requestId ?? null,
    firstDeltaAt,
  });
  if (done.entry !== null) deps.receivers.send({ type: "entry", entry: toWireEntry(done.entry) });
  deps.receivers.send(runFrame(done.run));
  return done.run;
}
