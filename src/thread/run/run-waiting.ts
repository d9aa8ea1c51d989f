// A run waiting for a person (docs/tools.md#approvals): decisions and client answers reach it here, its actions
// expire here, and it goes on — or ends, by a cancel, a later turn or a handoff — from here.
import type { RunSlot } from "../../auth/run-quota";
import { clientToolTimeoutMs, toolExecutor } from "../../control/tool-approval";
import type { Result } from "../../errors";
import type { ApprovalDecision, ServerFrame } from "../../shared/protocol";
import type { ToolAnswer } from "../../shared/thread-api";
import type { RunAction } from "../../storage/thread/action-store";
import type { Entry } from "../../storage/thread/entry-store";
import type { Run } from "../../storage/thread/run-store";
import { toolNamed } from "../../tools/tool-definitions";
import { type LiveRun, persistedText, runFrame } from "./live-run";
import {
  allSettled,
  parkedFrame,
  parkedSteps,
  pendingToolRequestFrames,
  settledSteps,
} from "./run-action-views";
import {
  type ActionDeps,
  answerToolRequest,
  cancelActions,
  type DeciderKind,
  decideApproval,
  expireActions,
} from "./run-actions";
import type { RunEnd } from "./run-seal";
import { type StoredToolCall, toolCallsOfSteps } from "./tool-history";

export interface WaitingDeps extends ActionDeps {
  /** The run whose model is streaming now, if any: a waiting run goes on only when none is. */
  live: () => LiveRun | null;
  acquireSlot: () => Promise<Result<RunSlot>>;
  /** Asks the object's queue check to try again (a slot was refused). */
  onQueued: () => void;
  armExpiry: (atMs: number) => void;
  requestHandoff: (runId: string) => void;
  /** Streams the run again from its stored steps; it holds `slot` until it ends or waits again. */
  start: (run: Run, userEntry: Entry, subject: string | null, slot: RunSlot) => void;
  /** Ends the run by its cause, its reply below the last entry it wrote. */
  seal: (run: Run, text: string, end: RunEnd, toolCalls: readonly StoredToolCall[]) => Run;
  advanceQueue: () => void;
}

export class WaitingRuns {
  readonly #deps: WaitingDeps;

  constructor(deps: WaitingDeps) {
    this.#deps = deps;
  }

  #actionDeps(): ActionDeps {
    return this.#deps;
  }

  /** The client-tool timeout of a tool, or null for a server tool (what an approved call is asked of next). */
  #clientTimeoutOf = (name: string): number | null => {
    const tool = toolNamed(this.#deps.binding.artifact.tools ?? [], name);
    return tool !== null && toolExecutor(tool) === "client" ? clientToolTimeoutMs(tool) : null;
  };

  /** A decision on one of this thread's approvals (by the socket's user, or the tenant); the run goes on once all are. */
  decide(input: {
    approvalId: string;
    decision: ApprovalDecision;
    reason?: string;
    by: DeciderKind;
  }): Result<RunAction> {
    // Whatever ran out of time is settled by its timeout first (its `onTimeout` included): a late decision is then
    // refused as expired, and the run goes on from the timeout.
    this.expireDue();
    const decided = decideApproval(this.#actionDeps(), input, this.#clientTimeoutOf);
    if (decided.ok) this.#continueWaiting();
    return decided;
  }

  /** A client's answer to a tool request; the run goes on once every call it waits for is answered. */
  answer(input: { toolCallId: string; output?: unknown; error?: string }): Result<ToolAnswer> {
    const answered = answerToolRequest(this.#actionDeps(), input, (name) =>
      toolNamed(this.#deps.binding.artifact.tools ?? [], name),
    );
    if (answered.ok) this.#continueWaiting();
    return answered;
  }

  /** Settles every pending action past its time (the object's alarm, and every wake); then the run goes on. */
  expireDue(): void {
    const now = this.#deps.now();
    const pending = this.#deps.stores.actions.pending();
    const due = pending.filter((a) => a.expiresAt <= now);
    if (due.length > 0) {
      const { handoffRuns } = expireActions(this.#actionDeps(), this.#clientTimeoutOf, due);
      for (const runId of handoffRuns) this.#deps.requestHandoff(runId);
    }
    const next = pending.find((a) => a.expiresAt > now);
    if (next !== undefined) this.#deps.armExpiry(next.expiresAt);
    this.#continueWaiting();
  }

  /** What a socket saying hello needs about a waiting run: its `run` frame and the client tool requests it waits on. */
  frames(): ServerFrame[] {
    const run = this.#deps.stores.runs.waiting();
    if (run === null) return [];
    return [parkedFrame(this.#deps.stores, run), ...pendingToolRequestFrames(this.#deps.stores)];
  }

  /**
   * Continues the waiting run once nothing it waits for is pending: a slot of the tenant's quota first, then the move
   * back to `running` (which only one caller can make), then the model. Without a slot it tries again on the object's
   * queue check.
   */
  #continueWaiting(): void {
    void (async () => {
      const { runs, entries } = this.#deps.stores;
      const run = runs.waiting();
      if (run === null || this.#deps.live() !== null || !allSettled(this.#deps.stores, run.id)) return;
      const slot = await this.#deps.acquireSlot();
      if (!slot.ok) {
        this.#deps.onQueued();
        return;
      }
      const current = runs.get(run.id);
      const userEntry = run.userEntryId === null ? null : entries.get(run.userEntryId);
      if (current?.status !== "requires_action" || this.#deps.live() !== null || userEntry === null) {
        await slot.value.release(0);
        return;
      }
      const moved = runs.transition(run.id, "running");
      if (!moved.ok) {
        await slot.value.release(0);
        return;
      }
      this.#deps.receivers.send(runFrame(moved.value));
      const subject = this.#deps.stores.actions.parkedSubject(run.id);
      this.#deps.start(moved.value, userEntry, subject, slot.value);
    })().catch((error: unknown) => {
      console.error(JSON.stringify({ level: "error", message: "resume failed", error: String(error) }));
    });
  }

  /** Whether a waiting run has every action settled: it goes on as soon as it has a slot. */
  ready(): boolean {
    const run = this.#deps.stores.runs.waiting();
    return run !== null && allSettled(this.#deps.stores, run.id);
  }

  /** Resumes a waiting run whose actions were all settled (the object's queue check, after a refused slot). */
  resume(): void {
    this.#continueWaiting();
  }

  /**
   * Ends the waiting run by `cause` (a cancel, an urgent turn, a handoff): its pending approvals are cancelled
   * (`by: "system"`), and its reply keeps the text and every answered call so far.
   */
  end(run: Run, cause: "cancel" | "interrupt" | "handoff"): Run {
    const reason = cause === "cancel" ? "cancelled" : cause === "interrupt" ? "interrupted" : "handoff";
    cancelActions(this.#actionDeps(), run.id, reason);
    const { stores } = this.#deps;
    const steps = parkedSteps(stores, run.id) ?? [];
    const filled = settledSteps(steps, stores.actions.ofRun(run.id));
    const text = persistedText(stores.chunks, run.id);
    const sealed = this.#deps.seal(run, text, { cause }, toolCallsOfSteps(filled, text));
    this.#deps.advanceQueue();
    return sealed;
  }

  /** A handoff starts: a run waiting for a person ends with it. */
  endForHandoff(): void {
    const run = this.#deps.stores.runs.waiting();
    if (run !== null) this.end(run, "handoff");
  }
}
