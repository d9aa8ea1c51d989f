// The run lifecycle: accepts a user turn and starts its run (or queues it behind the live one), drives it to its end,
// cancels, seals and recovers runs.
import type { RunSlot } from "../../auth/run-quota";
import { fail, ok, type Result } from "../../errors";
import { inputDigest, type ModelInput, modelInputOf } from "../../models/model-input";
import { CURRENT_PROMPT_BUILDER, currentPromptBuilder } from "../../models/prompt-builders";
import { runTurn } from "../../models/turn";
import type { ErrorCode, ErrorReason } from "../../shared/errors";
import { LIMITS, type MultitaskStrategy, type ServerFrame } from "../../shared/protocol";
import type { Entry } from "../../storage/thread/entry-store";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import type { QueuedTurnRecord, QueuedTurnStore } from "../../storage/thread/queued-turn-store";
import { type RunAudit, recordRunAudit } from "../../storage/thread/run-audit-store";
import type { Run, RunError } from "../../storage/thread/run-store";
import type { UsageTotals } from "../../storage/thread/usage-store";
import type { RequestMeta } from "../contract";
import { toWireEntry } from "./frames";
import { LiveRun, persistedText, runFrame, type StreamReceivers } from "./live-run";
import { multitaskStrategy, queuedFrame, queuedTurnOf, requestOfQueued } from "./multitask";
import { placeUserTurn, type TurnRequest, type UserTurnPlace } from "./place-user-turn";
import type { PromptHistory } from "./prompt-history";
import { contextBudget, runArtifact, type VersionBindings } from "./run-artifact";
import { recordRunEvent } from "./run-events";
import type { RunStores } from "./run-stores";
import { wireRun } from "./run-wiring";
import { threadLimits } from "./thread-limits";
import { type StoredToolCall, toolCallsOfSteps } from "./tool-history";
import { logTurn } from "./turn-log";

const MAX_MODEL_STEPS = 4;
const STALL_TIMEOUT_MS = 60_000;

export interface TurnAccepted {
  run: Run;
  /** Null while the turn waits behind another run: its message enters the tree when its run starts. */
  userEntry: Entry | null;
  /** False when a retried `send` matched an earlier one: nothing new was stored or started. */
  created: boolean;
  /** Where the turn waits behind another run (1 = next); null once it started, or when it never waited. */
  position: number | null;
}

/** A strategy under which a turn arriving during a run is kept, not refused. */
export type QueueStrategy = Exclude<MultitaskStrategy, "reject">;

/** What `screen` decided: the earlier turn of a retry, start now, or wait behind the live run. */
export type Screened =
  | { kind: "retried"; accepted: TurnAccepted }
  | { kind: "start" }
  | { kind: "queue"; strategy: QueueStrategy };

export interface LifecycleDeps {
  storage: DurableObjectStorage;
  env: Env;
  binding: ThreadBinding;
  /** The thread's verified versions: a turn runs on the one in effect where its message goes (`runArtifact`). */
  versions: VersionBindings;
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
  /** Turns waiting behind the live run. */
  queue: QueuedTurnStore;
  /** A slot in the tenant's run quota for a queued turn about to start. */
  acquireSlot: () => Promise<Result<RunSlot>>;
  /** A turn was queued: the object must wake to run it even if it dies first. */
  onQueued: () => void;
  /** True while queued turns must not run (the thread is in handoff): they are stored and end unanswered. */
  holdsTurns: () => boolean;
}

type RunOutcome =
  | { status: "succeeded" }
  | { status: "aborted"; reason: string }
  | { status: "failed"; error: RunError };

/**
 * Why a run's signal was aborted when it ran past its wall-clock limit. Named `TimeoutError`, so the turn reports a
 * timeout failure (not a cancellation) and every model and tool call under way stops with it.
 */
class RunTimeout extends Error {
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
  /** True while the next queued turn is being started (its quota slot is asked for). */
  #advancing = false;
  /** The position each queued run's receivers last heard, so only a change is announced. */
  readonly #announced = new Map<string, number>();
  /** Callers waiting for a queued run's end (the non-streaming HTTP API). */
  readonly #waiters = new Map<string, ((run: Run) => void)[]>();

  constructor(deps: LifecycleDeps) {
    this.#deps = deps;
  }

  /** The run whose model is streaming now, if any. */
  get live(): LiveRun | null {
    return this.#live;
  }

  /**
   * What `accept` decides before storing anything: the earlier turn of a retried send or edit, a refusal, whether the
   * turn starts now, or (a run being live, under a strategy other than `reject`) waits behind it.
   */
  screen(request: TurnRequest): Result<Screened> {
    const { entries, runs } = this.#deps.stores;
    const binding = this.#bindingOfRequest(request);
    const limits = threadLimits(binding);
    if (request.kind !== "regenerate") {
      const earlier = runs.byIdempotencyKey(runIdempotencyKey(request));
      if (earlier !== null) {
        // A turn still queued, or one that ended before it started, has no message in the tree.
        if (earlier.userEntryId === null) {
          const position = this.#deps.queue.position(earlier.id);
          return ok({
            kind: "retried",
            accepted: { run: earlier, userEntry: null, created: false, position },
          });
        }
        const userEntry = entries.get(earlier.userEntryId);
        if (userEntry !== null) {
          return ok({
            kind: "retried",
            accepted: { run: earlier, userEntry, created: false, position: null },
          });
        }
      }
    }
    if (request.kind !== "regenerate" && request.text.length > limits.maxMessageChars) {
      return fail("bad_request", `Messages are limited to ${limits.maxMessageChars} characters.`);
    }
    const busy = this.#live !== null || this.#advancing || runs.active().length > 0;
    const strategy = multitaskStrategy(request, binding.artifact);
    if (busy && strategy === "reject") {
      return fail("conflict", "A reply is still being written; wait for it or cancel it.");
    }
    // Every send, edit and regenerate makes one run (a queued one too), so recent runs are recent sends.
    if (
      runs.countCreatedAfter(this.#deps.now() - 60_000, limits.sendsPerMinute + 1) >= limits.sendsPerMinute
    ) {
      return { ok: false, code: "rate_limited", message: "Too many messages; slow down.", retryAfter: 60 };
    }
    // (A busy thread under `reject` was refused above.)
    if (!busy || strategy === "reject") return ok({ kind: "start" });
    if (this.#deps.queue.count() >= LIMITS.maxQueuedSends) {
      return fail(
        "conflict",
        `${LIMITS.maxQueuedSends} messages are already waiting for a reply; wait for one or cancel it.`,
      );
    }
    return ok({ kind: "queue", strategy });
  }

  /**
   * Validates and stores a user turn, then starts its run, which holds `slot` until it ends; or queues it when a run
   * became live meanwhile. Nothing is stored when it is refused; a refused, retried or queued turn leaves `slot` to
   * its caller.
   */
  accept(request: TurnRequest, slot: RunSlot): Result<TurnAccepted> {
    const screened = this.screen(request);
    if (!screened.ok) return screened;
    if (screened.value.kind === "retried") return ok(screened.value.accepted);
    if (screened.value.kind === "queue") return this.enqueue(request, screened.value.strategy);
    const { entries, runs } = this.#deps.stores;

    const placed = placeUserTurn(request, entries);
    if (!placed.ok) return placed;

    const result = this.#deps.storage.transactionSync((): Result<{ run: Run; userEntry: Entry }> => {
      const stored = this.#storeUserEntry(placed.value);
      if (!stored.ok) return stored;
      const userEntry = stored.value;
      const created = runs.create({
        ...(request.kind !== "regenerate" ? { idempotencyKey: runIdempotencyKey(request) } : {}),
        userEntryId: userEntry.id,
        ...(userEntry.parentId !== null ? { parentEntryId: userEntry.parentId } : {}),
        versionId: this.#bindingAt(userEntry).versionId,
        // Nothing runs and its slot is held: the run starts now, never having waited.
        start: true,
      });
      if (!created.ok) return created;
      return ok({ run: created.value.run, userEntry });
    });
    if (!result.ok) return result;

    const receivers = this.#deps.receivers;
    if (placed.value.existingUser === undefined)
      receivers.send({ type: "entry", entry: toWireEntry(result.value.userEntry) });
    receivers.send(runFrame(result.value.run));
    this.#start(result.value.run, result.value.userEntry, request.subject, slot, request.meta);
    return ok({ ...result.value, created: true, position: null });
  }

  /**
   * Keeps a turn that arrived during a run (right after `screen` said `queue`): its run is stored `queued` with the
   * request, and every receiver hears its position. `interrupt` and `rollback` turns go first and end the live run
   * (`aborted`, reason `interrupted`); a `rollback` send's message will be a sibling of that run's user message.
   */
  enqueue(request: TurnRequest, strategy: QueueStrategy): Result<TurnAccepted> {
    const { entries, runs } = this.#deps.stores;
    // Checked now so a turn that could never be placed is refused with nothing stored; placed when it starts.
    const placed = placeUserTurn(request, entries);
    if (!placed.ok) return placed;
    const live = this.#live;
    const urgent = strategy !== "enqueue";
    let kept = request;
    if (
      strategy === "rollback" &&
      request.kind === "send" &&
      request.parentId === undefined &&
      live !== null
    ) {
      const interrupted = runs.get(live.runId);
      const user = interrupted?.userEntryId ? entries.get(interrupted.userEntryId) : null;
      if (user !== null && user !== undefined) kept = { ...request, parentId: user.parentId };
    }
    const created = this.#deps.storage.transactionSync((): Result<Run> => {
      const made = runs.create({
        ...(request.kind !== "regenerate" ? { idempotencyKey: runIdempotencyKey(request) } : {}),
        // Recorded again when its message is placed: the version where it lands then is the one it runs on.
        versionId: this.#bindingOfRequest(request).versionId,
      });
      if (!made.ok) return made;
      if (!made.value.created) return fail("conflict", "This message was already sent.");
      this.#deps.queue.add({ runId: made.value.run.id, urgent, ...queuedTurnOf(kept) });
      return ok(made.value.run);
    });
    if (!created.ok) return created;
    this.#announceQueue();
    if (urgent) live?.controller.abort("interrupted");
    this.#deps.onQueued();
    void this.#advance();
    const position = this.#deps.queue.position(created.value.id);
    return ok({ run: created.value, userEntry: null, created: true, position });
  }

  /** Where a run waits (1 = next), or null when it is not queued. */
  position(runId: string): number | null {
    return this.#deps.queue.position(runId);
  }

  /** A `run` frame with its position for every queued run, in order (what a socket that just said hello needs). */
  queuedFrames(): ServerFrame[] {
    return this.#deps.queue.order().map((runId, i) => queuedFrame(runId, i + 1));
  }

  /** Starts the next queued turn if nothing runs (after a wake, or from the object's scheduled check). */
  resumeQueue(): void {
    void this.#advance();
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

  /** Waits for a run to end, a queued one included (for the non-streaming HTTP API). */
  async settled(runId: string): Promise<Run | null> {
    if (this.#live?.runId === runId) return this.#live.done;
    const run = this.#deps.stores.runs.get(runId);
    if (run === null || run.status !== "queued" || this.#deps.queue.position(runId) === null) return run;
    return new Promise<Run>((resolve) => {
      this.#waiters.set(runId, [...(this.#waiters.get(runId) ?? []), resolve]);
    });
  }

  /**
   * Seals runs left unfinished by an earlier instance of this object (an eviction or a deploy mid-stream): the
   * persisted part of the reply becomes an interrupted entry and the run ends `aborted`, never stuck `running`.
   * Queued turns keep their place and then run in order.
   */
  recoverInterruptedRuns(): void {
    const { runs, chunks } = this.#deps.stores;
    for (const run of runs.active()) {
      if (this.#live?.runId === run.id) continue;
      if (run.status === "queued" && this.#deps.queue.position(run.id) !== null) continue;
      this.#seal(run, persistedText(chunks, run.id), { status: "aborted", reason: "interrupted" });
    }
    void this.#advance();
  }

  /**
   * Starts the next queued turn when no run is live. Every run's end calls it again once its quota slot is back, so
   * the queue drains one run at a time, in order. A turn whose slot is refused fails unstarted and the next one goes.
   */
  async #advance(): Promise<void> {
    const queue = this.#deps.queue;
    if (this.#advancing || this.#live !== null || queue.count() === 0) return;
    this.#advancing = true;
    try {
      // A queued turn records the version where it lands: the thread's upgrade targets must be verified first.
      await this.#deps.versions.load();
      while (this.#live === null && queue.count() > 0) {
        const slot = await this.#deps.acquireSlot();
        // Read after the await: a cancel, an urgent turn or a handoff may have changed what runs next.
        if (this.#deps.holdsTurns()) {
          if (slot.ok) await slot.value.release(0);
          this.#holdQueued();
          break;
        }
        const next = queue.first();
        if (next === null) {
          if (slot.ok) await slot.value.release(0);
          break;
        }
        if (!slot.ok) {
          this.#failQueued(next.runId, { code: slot.code, message: slot.message });
          continue;
        }
        if (!this.#startQueued(next, slot.value)) await slot.value.release(0);
      }
    } catch (error) {
      // The queue is durable: the next run's end, a wake or the scheduled check tries again.
      console.error(
        JSON.stringify({ level: "error", message: "queue advance failed", error: String(error) }),
      );
    } finally {
      this.#advancing = false;
    }
  }

  /** Places a queued turn's user message (below the thread's leaf as it is now, for a plain send) and starts it. */
  #startQueued(next: QueuedTurnRecord, slot: RunSlot): boolean {
    const { entries, runs } = this.#deps.stores;
    const run = runs.get(next.runId);
    if (run === null || run.status !== "queued") {
      this.#deps.queue.remove(next.runId);
      return false;
    }
    const request = requestOfQueued(next);
    const placed = placeUserTurn(request, entries);
    if (!placed.ok) {
      this.#failQueued(run.id, { code: placed.code, message: placed.message });
      return false;
    }
    const started = this.#deps.storage.transactionSync((): Result<{ run: Run; userEntry: Entry }> => {
      const stored = this.#storeUserEntry(placed.value);
      if (!stored.ok) return stored;
      const userEntry = stored.value;
      const attached = runs.placeUserEntry(run.id, {
        userEntryId: userEntry.id,
        parentEntryId: userEntry.parentId,
        versionId: this.#bindingAt(userEntry).versionId,
      });
      if (!attached.ok) return attached;
      this.#deps.queue.remove(run.id);
      return ok({ run: attached.value, userEntry });
    });
    if (!started.ok) {
      this.#failQueued(run.id, { code: started.code, message: started.message });
      return false;
    }
    if (placed.value.existingUser === undefined) {
      this.#deps.receivers.send({ type: "entry", entry: toWireEntry(started.value.userEntry) });
    }
    this.#announceQueue();
    this.#start(started.value.run, started.value.userEntry, request.subject, slot, request.meta);
    return true;
  }

  /**
   * In handoff, every queued turn's message enters the tree as a held send would, in queue order, and its run ends
   * `aborted` (reason `handoff`) without a model call: the person answering sees every message, none is lost.
   */
  #holdQueued(): void {
    const { entries, runs } = this.#deps.stores;
    for (let next = this.#deps.queue.first(); next !== null; next = this.#deps.queue.first()) {
      const run = runs.get(next.runId);
      if (run === null || run.status !== "queued") {
        this.#deps.queue.remove(next.runId);
        continue;
      }
      const placed = placeUserTurn(requestOfQueued(next), entries);
      if (!placed.ok) {
        this.#failQueued(run.id, { code: placed.code, message: placed.message });
        continue;
      }
      const held = this.#deps.storage.transactionSync((): Result<{ run: Run; userEntry: Entry }> => {
        const stored = this.#storeUserEntry(placed.value);
        if (!stored.ok) return stored;
        const attached = runs.placeUserEntry(run.id, {
          userEntryId: stored.value.id,
          parentEntryId: stored.value.parentId,
        });
        if (!attached.ok) return attached;
        return ok({ run: attached.value, userEntry: stored.value });
      });
      if (!held.ok) {
        this.#failQueued(run.id, { code: held.code, message: held.message });
        continue;
      }
      if (placed.value.existingUser === undefined) {
        this.#deps.receivers.send({ type: "entry", entry: toWireEntry(held.value.userEntry) });
      }
      this.#seal(held.value.run, "", { status: "aborted", reason: "handoff" });
    }
    this.#announceQueue();
  }

  /** A queued turn that cannot start ends `failed` with why; nothing of it enters the tree. */
  #failQueued(runId: string, error: { code: ErrorCode; message: string }): void {
    const run = this.#deps.stores.runs.get(runId);
    if (run === null || run.status !== "queued") {
      this.#deps.queue.remove(runId);
      return;
    }
    this.#seal(run, "", { status: "failed", error });
  }

  /** Tells every receiver each queued run's position, when it is new or changed. */
  #announceQueue(): void {
    const order = this.#deps.queue.order();
    for (const runId of [...this.#announced.keys()]) {
      if (!order.includes(runId)) this.#announced.delete(runId);
    }
    order.forEach((runId, i) => {
      if (this.#announced.get(runId) === i + 1) return;
      this.#announced.set(runId, i + 1);
      this.#deps.receivers.send(queuedFrame(runId, i + 1));
    });
  }

  /** The user entry of a placed turn (the one a regenerate answers again), inside the caller's transaction. */
  #storeUserEntry(place: UserTurnPlace): Result<Entry> {
    const { parentId, text, clientMessageId, existingUser } = place;
    if (existingUser !== undefined) return ok(existingUser);
    const entries = this.#deps.stores.entries;
    const appended = entries.append({
      parentId,
      ...(parentId !== null ? { expectedParentId: parentId } : {}),
      kind: "message",
      role: "user",
      // A retried send or edit is answered from its run's idempotency key, so the entry needs none.
      body: { text, ...(clientMessageId !== undefined ? { clientMessageId } : {}) },
    });
    if (!appended.ok) return appended;
    const userEntry = appended.value.entry;
    // An append below the selected leaf already moves the selection; a fork (edit) must select itself.
    if (entries.latestLeaf()?.id !== userEntry.id) entries.setActiveLeaf(userEntry.id);
    return ok(userEntry);
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
      try {
        const totals = live.usage ?? usage.totalsForRun(run.id);
        return totals.inputTokens + totals.outputTokens;
      } catch {
        return 0; // the thread was erased while the run ended: its usage went with it
      }
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
    // The run's wall-clock limit (docs/api.md, "The artifact"): past it the run's signal aborts with a RunTimeout,
    // and the run is sealed failed with the text streamed so far.
    const limitMs = threadLimits(this.#bindingAt(userEntry)).runTimeoutMs;
    const deadline = setTimeout(() => live.controller.abort(new RunTimeout(limitMs)), limitMs);
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
        } finally {
          clearTimeout(deadline);
        }
        finish(final);
        // Every end gives the tenant's slot back with the run's tokens; an object that dies first lets it lapse.
        await slot.release(tokens());
        // The next queued turn asks for its slot once this one is back (a tenant allowed one run at a time has it).
        void this.#advance();
        // The projection runs inside the same keep-alive: an eviction here leaves the outbox for the next wake.
        await this.#deps.afterTurn();
      })
      .catch((error: unknown) => {
        console.error(JSON.stringify({ level: "error", message: "after-turn failed", error: String(error) }));
        // The thread may have been erased meanwhile (its tables are gone): the run as last known is the end.
        let last = run;
        try {
          last = runs.get(run.id) ?? run;
        } catch {}
        clearTimeout(deadline);
        finish(last);
        void slot
          .release(tokens())
          .then(() => this.#advance())
          .catch(() => {});
      });
  }

  async #stream(live: LiveRun, queued: Run, userEntry: Entry): Promise<Run> {
    const { runs } = this.#deps.stores;
    // A run accepted with nothing ahead of it was stored running (and announced so) when it was created.
    const running = queued.status === "running" ? ok(queued) : runs.transition(queued.id, "running");
    if (!running.ok) return queued;
    if (running.value !== queued) this.#deps.receivers.send(runFrame(running.value));

    await this.#deps.versions.load();
    const bound = runArtifact(this.#deps.versions, userEntry);
    if (!bound.ok) {
      return this.#seal(running.value, "", { status: "failed", error: runError(bound) }, live.stores);
    }
    const binding = bound.value;
    const wiring = await wireRun(
      { ...this.#deps, binding },
      {
        runId: live.runId,
        subject: live.subject,
        stores: live.stores,
        requestHost: live.meta?.host ?? null,
      },
    );
    live.stores = wiring.stores;
    if (!wiring.turn.ok) {
      return this.#seal(running.value, "", { status: "failed", error: runError(wiring.turn) }, live.stores);
    }

    const maxContextTokens = contextBudget(binding.artifact);
    const history = this.#deps.history.historyFor(userEntry, maxContextTokens);
    const prompt = currentPromptBuilder({
      instructions: wiring.instructions,
      branch: history,
      maxContextTokens,
    });
    const turn = runTurn({
      ...wiring.turn.value,
      prompt,
      signal: live.controller.signal,
      maxSteps: MAX_MODEL_STEPS,
      stallTimeoutMs: STALL_TIMEOUT_MS,
      onDelta: (delta) => live.push(delta),
    });
    const digested = this.#recordAudit(
      live.runId,
      {
        promptBuilder: CURRENT_PROMPT_BUILDER,
        artifactDigest: binding.digest,
        contextVersion: wiring.contextVersion,
      },
      modelInputOf(binding.artifact.model, prompt, wiring.turn.value.tools),
    );
    const result = await turn;
    await digested;
    // Deltas of the model's last event-loop turn are stored and sent before the reply entry.
    live.flush();

    const current = runs.get(live.runId) ?? running.value;
    const stopped = live.controller.signal.reason;
    const sealed = this.#seal(
      current,
      live.text,
      result.status === "succeeded"
        ? { status: "succeeded" }
        : result.status === "aborted"
          ? { status: "aborted", reason: String(stopped ?? "cancelled") }
          : {
              status: "failed",
              error: stopped instanceof RunTimeout ? stopped.runError() : runError(result.error),
            },
      live.stores,
      toolCallsOfSteps(result.steps, live.text),
    );
    this.#deps.history.remember(history, userEntry, sealed, maxContextTokens);
    return sealed;
  }

  /** The binding a turn stored at `at` runs on; the pin when its version cannot be used (the run then fails). */
  #bindingAt(at: Entry | null): ThreadBinding {
    const bound = runArtifact(this.#deps.versions, at);
    return bound.ok ? bound.value : this.#deps.binding;
  }

  /** Where a request's message would go, and so the version its limits and strategy come from. */
  #bindingOfRequest(request: TurnRequest): ThreadBinding {
    const sole = this.#deps.versions.sole();
    if (sole !== null) return sole;
    const entries = this.#deps.stores.entries;
    const placed = placeUserTurn(request, entries);
    if (!placed.ok) return this.#bindingAt(entries.latestLeaf());
    const { existingUser, parentId } = placed.value;
    return this.#bindingAt(existingUser ?? (parentId === null ? null : entries.get(parentId)));
  }

  /** The binding a run used: the one in effect at its user message (the pin for a run that never placed one). */
  #bindingOfRun(run: Run): ThreadBinding {
    const sole = this.#deps.versions.sole();
    if (sole !== null) return sole;
    const user = run.userEntryId === null ? null : this.#deps.stores.entries.get(run.userEntryId);
    return this.#bindingAt(user);
  }

  /**
   * Records the run's audit: what made its model input and the digest of the input its first model call was handed,
   * once that call is under way (the canonical JSON and the hash run while the request is in flight, never before the
   * first delta can be asked for), in one row write. A digest that fails (a bug) is logged and the record is kept
   * without it; the run itself is never failed for it.
   */
  async #recordAudit(runId: string, made: Omit<RunAudit, "inputDigest">, input: ModelInput): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    let digest: string | null = null;
    try {
      digest = await inputDigest(input);
    } catch (error) {
      console.error(JSON.stringify({ level: "error", message: "input digest failed", error: String(error) }));
    }
    try {
      recordRunAudit(this.#deps.storage, runId, { ...made, inputDigest: digest });
    } catch (error) {
      console.error(JSON.stringify({ level: "error", message: "run audit failed", error: String(error) }));
    }
  }

  /**
   * Ends a run: the reply entry (if any text, with the run's answered tool calls on it), the run's final status and
   * the chunk cleanup commit together.
   */
  #seal(
    run: Run,
    text: string,
    outcome: RunOutcome,
    stores: RunStores = this.#deps.stores,
    toolCalls: readonly StoredToolCall[] = [],
  ): Run {
    const entryStatus =
      outcome.status === "succeeded" ? "complete" : outcome.status === "aborted" ? "interrupted" : "failed";
    const live = this.#live?.runId === run.id ? this.#live : null;
    const firstDeltaAt = live?.firstDeltaAt ?? null;
    const binding = this.#bindingOfRun(run);
    const sealed = this.#deps.storage.transactionSync(
      (): { run: Run; entry: Entry | null; usage: UsageTotals } => {
        let entry: Entry | null = null;
        if (text.length > 0 && run.userEntryId !== null) {
          const appended = stores.entries.append({
            parentId: run.userEntryId,
            kind: "message",
            role: "assistant",
            runId: run.id,
            body: { text, status: entryStatus, ...(toolCalls.length > 0 ? { toolCalls } : {}) },
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
          ...(firstDeltaAt !== null
            ? { firstDeltaMs: Math.max(0, Math.round(firstDeltaAt - run.createdAt)) }
            : {}),
        });
        // The run's usage is final now: read once for its event, its log line and its quota slot.
        const usage = stores.usage.totalsForRun(run.id);
        if (live !== null) live.usage = usage;
        // A queued run that ends unstarted leaves the queue with its request.
        if (ended.ok) this.#deps.queue.remove(run.id);
        if (ended.ok) recordRunEvent(this.#deps.storage, binding, ended.value, usage, this.#deps.now());
        return { run: ended.ok ? ended.value : run, entry, usage };
      },
    );
    logTurn({
      binding,
      run: sealed.run,
      usage: () => sealed.usage,
      requestId: live?.meta?.requestId ?? null,
      firstDeltaAt,
    });
    if (sealed.entry !== null) this.#deps.receivers.send({ type: "entry", entry: toWireEntry(sealed.entry) });
    this.#deps.receivers.send(runFrame(sealed.run));
    this.#announceQueue();
    const waiting = this.#waiters.get(run.id);
    this.#waiters.delete(run.id);
    for (const resolve of waiting ?? []) resolve(sealed.run);
    return sealed.run;
  }
}
