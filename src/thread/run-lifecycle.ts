// The run lifecycle: accepts a user turn and starts its run, drives it to its end, cancels, seals and recovers runs.
import type { RunSlot } from "../auth/run-quota";
import { fail, ok, type Result } from "../errors";
import { buildPrompt } from "../models/prompt";
import { runTurn } from "../models/turn";
import type { ErrorCode, ErrorReason } from "../shared/errors";
import type { Entry } from "../storage/entry-store";
import type { ThreadBinding } from "../storage/pin-store";
import type { Run, RunError } from "../storage/run-store";
import { toWireEntry } from "./frames";
import { LiveRun, persistedText, runFrame, type StreamReceivers } from "./live-run";
import { placeUserTurn, type TurnRequest } from "./place-user-turn";
import type { PromptHistory } from "./prompt-history";
import type { RequestMeta } from "./request-meta";
import type { RunStores } from "./run-stores";
import { wireRun } from "./run-wiring";
import { DEFAULT_CONTEXT_TOKENS, threadLimits } from "./thread-limits";
import { logTurn } from "./turn-log";

const MAX_MODEL_STEPS = 4;
const STALL_TIMEOUT_MS = 60_000;

export interface TurnAccepted {
  run: Run;
  userEntry: Entry;
  /** False when a retried `send` matched an earlier one: nothing new was stored or started. */
  created: boolean;
}

export interface LifecycleDeps {
  storage: DurableObjectStorage;
  env: Env;
  binding: ThreadBinding;
  now: () => number;
  /** Keeps the object in memory while a model streams. */
  keepAliveWhile: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Runs after a turn is sealed, still inside the keep-alive (the D1 projection drain). */
  afterTurn: () => Promise<void>;
  /** Outbound fetch for tool webhooks (tests pass a fake). */
  fetch?: typeof fetch;
  /** The thread's plain (non-redacting) stores. */
  stores: RunStores;
  receivers: StreamReceivers;
  history: PromptHistory;
}

type RunOutcome =
  | { status: "succeeded" }
  | { status: "aborted"; reason: string }
  | { status: "failed"; error: RunError };

/** The stored, public part of a failure: code, reason (a provider's, when it gave one) and message. */
function runError(error: { code: ErrorCode; reason?: ErrorReason; message: string }): RunError {
  return {
    code: error.code,
    ...(error.reason !== undefined ? { reason: error.reason } : {}),
    message: error.message,
  };
}

/** A send or an edit carries the client's message id; its run is found again by it when the client retries. */
function runIdempotencyKey(request: { kind: "send" | "edit"; clientMessageId: string }): string {
  return `${request.kind}:${request.clientMessageId}`;
}

export class RunLifecycle {
  readonly #deps: LifecycleDeps;
  #live: LiveRun | null = null;

  constructor(deps: LifecycleDeps) {
    this.#deps = deps;
  }

  /** The run whose model is streaming now, if any. */
  get live(): LiveRun | null {
    return this.#live;
  }

  /**
   * What `accept` decides before storing anything: the earlier turn of a retried send or edit, a refusal, or null
   * when the turn may go ahead.
   */
  screen(request: TurnRequest): Result<TurnAccepted | null> {
    const { entries, runs } = this.#deps.stores;
    const limits = threadLimits(this.#deps.binding);
    if (request.kind !== "regenerate") {
      const earlier = runs.byIdempotencyKey(runIdempotencyKey(request));
      if (earlier !== null) {
        const userEntry = earlier.userEntryId === null ? null : entries.get(earlier.userEntryId);
        if (userEntry !== null) return ok({ run: earlier, userEntry, created: false });
      }
    }
    if (request.kind !== "regenerate" && request.text.length > limits.maxMessageChars) {
      return fail("bad_request", `Messages are limited to ${limits.maxMessageChars} characters.`);
    }
    if (this.#live !== null || runs.active().length > 0) {
      return fail("conflict", "A reply is still being written; wait for it or cancel it.");
    }
    // Every send, edit and regenerate starts one run, so recent runs are recent sends.
    if (
      runs.countCreatedAfter(this.#deps.now() - 60_000, limits.sendsPerMinute + 1) >= limits.sendsPerMinute
    ) {
      return { ok: false, code: "rate_limited", message: "Too many messages; slow down.", retryAfter: 60 };
    }
    return ok(null);
  }

  /**
   * Validates and stores a user turn, then starts its run, which holds `slot` until it ends. Nothing is stored when
   * it is refused; a refused or retried turn leaves `slot` to its caller.
   */
  accept(request: TurnRequest, slot: RunSlot): Result<TurnAccepted> {
    const screened = this.screen(request);
    if (!screened.ok) return screened;
    if (screened.value !== null) return ok(screened.value);
    const { entries, runs } = this.#deps.stores;

    const placed = placeUserTurn(request, entries);
    if (!placed.ok) return placed;
    const { parentId, text, clientMessageId, existingUser } = placed.value;

    const result = this.#deps.storage.transactionSync((): Result<TurnAccepted> => {
      let userEntry: Entry;
      if (existingUser !== undefined) {
        userEntry = existingUser;
      } else {
        const appended = entries.append({
          parentId,
          ...(parentId !== null ? { expectedParentId: parentId } : {}),
          kind: "message",
          role: "user",
          // A retried send or edit is answered above from its run's idempotency key, so the entry needs none.
          body: { text, ...(clientMessageId !== undefined ? { clientMessageId } : {}) },
        });
        if (!appended.ok) return appended;
        userEntry = appended.value.entry;
        // An append below the selected leaf already moves the selection; a fork (edit) must select itself.
        if (entries.latestLeaf()?.id !== userEntry.id) entries.setActiveLeaf(userEntry.id);
      }
      const created = runs.create({
        ...(request.kind !== "regenerate" ? { idempotencyKey: runIdempotencyKey(request) } : {}),
        userEntryId: userEntry.id,
        ...(userEntry.parentId !== null ? { parentEntryId: userEntry.parentId } : {}),
        versionId: this.#deps.binding.versionId,
      });
      if (!created.ok) return created;
      return ok({ run: created.value.run, userEntry, created: true });
    });
    if (!result.ok) return result;

    const receivers = this.#deps.receivers;
    if (existingUser === undefined)
      receivers.send({ type: "entry", entry: toWireEntry(result.value.userEntry) });
    receivers.send(runFrame(result.value.run));
    this.#start(result.value.run, result.value.userEntry, request.subject, slot, request.meta);
    return result;
  }

  cancel(runId: string): Result<Run> {
    const run = this.#deps.stores.runs.get(runId);
    if (run === null) return fail("not_found", "Run not found.");
    if (this.#live?.runId === runId) {
      this.#live.controller.abort("cancelled");
      return ok(run);
    }
    if (run.status === "queued" || run.status === "running") {
      const sealed = this.#seal(run, "", { status: "aborted", reason: "cancelled" });
      return ok(sealed);
    }
    return fail("conflict", `The run has already ${run.status}.`);
  }

  /** Waits for a run to end (for the non-streaming HTTP API). */
  async settled(runId: string): Promise<Run | null> {
    if (this.#live?.runId === runId) return this.#live.done;
    return this.#deps.stores.runs.get(runId);
  }

  /**
   * Seals runs left unfinished by an earlier instance of this object (an eviction or a deploy mid-stream): the
   * persisted part of the reply becomes an interrupted entry and the run ends `aborted`, never stuck `running`.
   */
  recoverInterruptedRuns(): void {
    const { runs, chunks } = this.#deps.stores;
    for (const run of runs.active()) {
      if (this.#live?.runId === run.id) continue;
      this.#seal(run, persistedText(chunks, run.id), { status: "aborted", reason: "interrupted" });
    }
  }

  #start(
    run: Run,
    userEntry: Entry,
    subject: string | null,
    slot: RunSlot,
    meta: RequestMeta | undefined,
  ): void {
    const { runs, usage } = this.#deps.stores;
    const tokens = () => {
      const totals = usage.totalsForRun(run.id);
      return totals.inputTokens + totals.outputTokens;
    };
    const receivers = this.#deps.receivers;
    const live = new LiveRun({
      runId: run.id,
      stores: this.#deps.stores,
      subject,
      ...(meta !== undefined ? { meta } : {}),
      now: this.#deps.now,
      send: (f) => receivers.send(f),
    });
    this.#live = live;
    const finish = (final: Run) => {
      if (this.#live === live) this.#live = null;
      live.finish(final);
    };
    void this.#deps
      .keepAliveWhile(async () => {
        let final: Run;
        try {
          final = await this.#stream(live, run, userEntry);
        } catch (error) {
          console.error(JSON.stringify({ level: "error", message: "turn crashed", error: String(error) }));
          final = runs.get(run.id) ?? run;
          if (final.status === "queued" || final.status === "running") {
            final = this.#seal(
              final,
              live.textSoFar(),
              { status: "failed", error: { code: "internal", message: "The reply failed." } },
              live.stores,
            );
          }
        }
        finish(final);
        // Every end gives the tenant's slot back with the run's tokens; an object that dies first lets it lapse.
        await slot.release(tokens());
        // The projection runs inside the same keep-alive: an eviction here leaves the outbox for the next wake.
        await this.#deps.afterTurn();
      })
      .catch((error: unknown) => {
        console.error(JSON.stringify({ level: "error", message: "after-turn failed", error: String(error) }));
        finish(runs.get(run.id) ?? run);
        void slot.release(tokens());
      });
  }

  async #stream(live: LiveRun, queued: Run, userEntry: Entry): Promise<Run> {
    const { runs } = this.#deps.stores;
    const running = runs.transition(queued.id, "running");
    if (!running.ok) return queued;
    this.#deps.receivers.send(runFrame(running.value));

    const wiring = await wireRun(this.#deps, {
      runId: live.runId,
      subject: live.subject,
      stores: live.stores,
      requestHost: live.meta?.host ?? null,
    });
    live.stores = wiring.stores;
    if (!wiring.turn.ok) {
      return this.#seal(running.value, "", { status: "failed", error: runError(wiring.turn) }, live.stores);
    }

    const binding = this.#deps.binding;
    const history = this.#deps.history.historyFor(userEntry);
    const result = await runTurn({
      ...wiring.turn.value,
      prompt: buildPrompt({
        instructions: wiring.instructions,
        branch: history,
        maxContextTokens: binding.artifact.limits?.maxContextTokens ?? DEFAULT_CONTEXT_TOKENS,
      }),
      signal: live.controller.signal,
      maxSteps: MAX_MODEL_STEPS,
      stallTimeoutMs: STALL_TIMEOUT_MS,
      onDelta: (delta) => live.push(delta),
    });
    // Deltas of the model's last event-loop turn are stored and sent before the reply entry.
    live.flush();

    const current = runs.get(live.runId) ?? running.value;
    const sealed = this.#seal(
      current,
      live.text,
      result.status === "succeeded"
        ? { status: "succeeded" }
        : result.status === "aborted"
          ? { status: "aborted", reason: String(live.controller.signal.reason ?? "cancelled") }
          : { status: "failed", error: runError(result.error) },
      live.stores,
    );
    this.#deps.history.remember(history, userEntry, sealed);
    return sealed;
  }

  /** Ends a run: the reply entry (if any text), the run's final status and the chunk cleanup commit together. */
  #seal(run: Run, text: string, outcome: RunOutcome, stores: RunStores = this.#deps.stores): Run {
    const entryStatus =
      outcome.status === "succeeded" ? "complete" : outcome.status === "aborted" ? "interrupted" : "failed";
    const sealed = this.#deps.storage.transactionSync((): { run: Run; entry: Entry | null } => {
      let entry: Entry | null = null;
      if (text.length > 0 && run.userEntryId !== null) {
        const appended = stores.entries.append({
          parentId: run.userEntryId,
          kind: "message",
          role: "assistant",
          runId: run.id,
          body: { text, status: entryStatus },
        });
        if (appended.ok) {
          entry = appended.value.entry;
          if (stores.entries.latestLeaf()?.id !== entry.id) stores.entries.setActiveLeaf(entry.id);
        }
      }
      const ended = stores.runs.transition(run.id, outcome.status, {
        ...(entry !== null ? { assistantEntryId: entry.id } : {}),
        ...(outcome.status === "aborted" ? { abortReason: outcome.reason } : {}),
        ...(outcome.status === "failed" ? { error: outcome.error } : {}),
      });
      return { run: ended.ok ? ended.value : run, entry };
    });
    const live = this.#live?.runId === run.id ? this.#live : null;
    logTurn({
      binding: this.#deps.binding,
      run: sealed.run,
      usage: () => stores.usage.totalsForRun(run.id),
      requestId: live?.meta?.requestId ?? null,
      firstDeltaAt: live?.firstDeltaAt ?? null,
    });
    if (sealed.entry !== null) this.#deps.receivers.send({ type: "entry", entry: toWireEntry(sealed.entry) });
    this.#deps.receivers.send(runFrame(sealed.run));
    return sealed.run;
  }
}
