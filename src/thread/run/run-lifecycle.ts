// The run lifecycle: accepts a user turn and starts its run (or queues it behind the live one), drives it to its end,
// cancels, seals and recovers runs. Every move of a run is a cause of the state machine (src/shared/run-states.ts).
import type { RunSlot } from "../../auth/run-quota";
import { fail, ok, type Result } from "../../errors";
import { LIMITS, type ServerFrame } from "../../shared/protocol";
import type { Entry } from "../../storage/thread/entry-store";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import type { QueuedTurnStore } from "../../storage/thread/queued-turn-store";
import type { Run } from "../../storage/thread/run-store";
import type { RequestMeta } from "../contract";
import { toWireEntry } from "./frames";
import { LiveRun, persistedText, runFrame, type StreamReceivers } from "./live-run";
import { multitaskStrategy } from "./multitask";
import { placeUserTurn, storeUserEntry, type TurnRequest } from "./place-user-turn";
import type { PromptHistory } from "./prompt-history";
import type { VersionBindings } from "./run-artifact";
import { RunBindings } from "./run-binding";
import { type QueueStrategy, RunQueue, runIdempotencyKey } from "./run-queue";
import { type RunEnd, sealRun } from "./run-seal";
import type { RunStores } from "./run-stores";
import { RunTimeout, streamRun } from "./run-stream";
import { WaitingRuns } from "./run-waiting";
import { threadLimits } from "./thread-limits";
import type { StoredToolCall } from "./tool-history";

export type { QueueStrategy } from "./run-queue";

export interface TurnAccepted {
  run: Run;
  /** Null while the turn waits behind another run: its message enters the tree when its run starts. */
  userEntry: Entry | null;
  /** False when a retried `send` matched an earlier one: nothing new was stored or started. */
  created: boolean;
  /** Where the turn waits behind another run (1 = next); null once it started, or when it never waited. */
  position: number | null;
}

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
  /** A run waits for a person: the object must wake when the first pending action expires, even if it dies first. */
  armExpiry: (atMs: number) => void;
  /** An approval timed out with `onTimeout: "handoff"`: a person takes the thread once its run ends. */
  requestHandoff: (runId: string) => void;
}

export class RunLifecycle {
  readonly #deps: LifecycleDeps;
  readonly #bindings: RunBindings;
  readonly #queue: RunQueue;
  readonly #waiting: WaitingRuns;
  #live: LiveRun | null = null;
  /** Callers waiting for a queued run's end (the non-streaming HTTP API). */
  readonly #waiters = new Map<string, ((run: Run) => void)[]>();

  constructor(deps: LifecycleDeps) {
    this.#deps = deps;
    this.#bindings = new RunBindings(deps.versions, deps.binding, deps.stores.entries);
    this.#queue = new RunQueue({
      storage: deps.storage,
      stores: deps.stores,
      queue: deps.queue,
      receivers: deps.receivers,
      versions: deps.versions,
      bindings: this.#bindings,
      live: () => this.#live,
      waiting: () => deps.stores.runs.waiting(),
      interruptWaiting: (run) => this.#waiting.end(run, "interrupt"),
      acquireSlot: deps.acquireSlot,
      onQueued: deps.onQueued,
      holdsTurns: deps.holdsTurns,
      start: (run, userEntry, subject, slot, meta) => this.#start(run, userEntry, subject, slot, meta),
      seal: (run, text, end) => this.#seal(run, text, end),
    });
    this.#waiting = new WaitingRuns({
      storage: deps.storage,
      stores: deps.stores,
      receivers: deps.receivers,
      binding: deps.binding,
      now: deps.now,
      live: () => this.#live,
      acquireSlot: deps.acquireSlot,
      onQueued: deps.onQueued,
      armExpiry: deps.armExpiry,
      requestHandoff: deps.requestHandoff,
      start: (run, userEntry, subject, slot) => this.#start(run, userEntry, subject, slot, undefined, true),
      seal: (run, text, end, toolCalls) => this.#seal(run, text, end, deps.stores, toolCalls, true),
      advanceQueue: () => void this.#queue.advance(),
    });
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
    const binding = this.#bindings.ofRequest(request);
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
    const busy = this.#live !== null || this.#queue.advancing || runs.active().length > 0;
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
      const stored = storeUserEntry(entries, placed.value);
      if (!stored.ok) return stored;
      const userEntry = stored.value;
      const created = runs.create({
        ...(request.kind !== "regenerate" ? { idempotencyKey: runIdempotencyKey(request) } : {}),
        userEntryId: userEntry.id,
        ...(userEntry.parentId !== null ? { parentEntryId: userEntry.parentId } : {}),
        versionId: this.#bindings.at(userEntry).versionId,
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

  /** Keeps a turn that arrived during a run (right after `screen` said `queue`), src/thread/run/run-queue.ts. */
  enqueue(request: TurnRequest, strategy: QueueStrategy): Result<TurnAccepted> {
    const queued = this.#queue.enqueue(request, strategy);
    if (!queued.ok) return queued;
    return ok({ run: queued.value.run, userEntry: null, created: true, position: queued.value.position });
  }

  /** Where a run waits (1 = next), or null when it is not queued. */
  position(runId: string): number | null {
    return this.#queue.position(runId);
  }

  /** A `run` frame with its position for every queued run, in order (what a socket that just said hello needs). */
  queuedFrames(): ServerFrame[] {
    return this.#queue.frames();
  }

  /** Starts the next queued turn if nothing runs (after a wake, or from the object's scheduled check). */
  resumeQueue(): void {
    void this.#queue.advance();
  }

  /** The caller's cancel: a live run's signal aborts (its stream seals it), a waiting one ends now. */
  cancel(runId: string): Result<Run> {
    const run = this.#deps.stores.runs.get(runId);
    if (run === null) return fail("not_found", "Run not found.");
    if (this.#live?.runId === runId) {
      this.#live.controller.abort("cancelled");
      return ok(run);
    }
    if (run.status === "requires_action") return ok(this.#waiting.end(run, "cancel"));
    if (run.status === "queued" || run.status === "running")
      return ok(this.#seal(run, "", { cause: "cancel" }));
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
      // A run waiting for a person holds nothing in memory: it waits on, and goes on when it is answered.
      if (run.status === "requires_action") continue;
      this.#seal(run, persistedText(chunks, run.id), { cause: "interrupt" });
    }
    this.#waiting.expireDue();
    void this.#queue.advance();
  }

  // ---- runs waiting for a person (src/thread/run/run-waiting.ts) ----

  /** The run waiting for a person: its decisions, answers, expiry, and its end by a cancel, a later turn or a handoff. */
  get waiting(): WaitingRuns {
    return this.#waiting;
  }

  #start(
    run: Run,
    userEntry: Entry,
    subject: string | null,
    slot: RunSlot,
    meta: RequestMeta | undefined,
    resumed = false,
  ): void {
    const { runs, usage, chunks } = this.#deps.stores;
    const spent = (totals: { inputTokens: number; outputTokens: number }) =>
      totals.inputTokens + totals.outputTokens;
    // A run going on after a person answered gave back its earlier tokens when it parked: only the new ones count.
    const before = resumed ? spent(usage.totalsForRun(run.id)) : 0;
    const tokens = () => {
      try {
        return Math.max(0, spent(live.usage ?? usage.totalsForRun(run.id)) - before);
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
      // A run that waited for a person goes on writing its reply after the deltas it already streamed.
      ...(resumed ? { continueAfter: chunks.after(run.id, 0) } : {}),
    });
    this.#live = live;
    const finish = (final: Run) => {
      if (this.#live === live) this.#live = null;
      live.finish(final);
    };
    // The run's wall-clock limit (docs/api.md, "The artifact"): past it the run's signal aborts with a RunTimeout,
    // and the run is sealed failed with the text streamed so far.
    const limitMs = threadLimits(this.#bindings.at(userEntry)).runTimeoutMs;
    const deadline = setTimeout(() => live.controller.abort(new RunTimeout(limitMs)), limitMs);
    void this.#deps
      .keepAliveWhile(async () => {
        let final: Run;
        try {
          final = await streamRun(this.#streamDeps(), live, run, userEntry);
        } catch (error) {
          console.error(JSON.stringify({ level: "error", message: "turn crashed", error: String(error) }));
          final = runs.get(run.id) ?? run;
          if (final.status === "queued" || final.status === "running") {
            final = this.#seal(
              final,
              live.textSoFar(),
              { cause: "fail", error: { code: "internal", message: "The reply failed." } },
              live.stores,
            );
          }
        } finally {
          clearTimeout(deadline);
        }
        finish(final);
        // The projection starts with the run's end, beside the slot's release: D1 learns the reply without waiting
        // for the quota object (docs/decisions.md, "Coalesced projection"). It runs inside the same keep-alive: an
        // eviction here leaves the outbox for the next wake.
        await Promise.all([
          this.#deps.afterTurn(),
          // Every end gives the tenant's slot back with the run's tokens; an object that dies first lets it lapse.
          // The next queued turn asks for its slot once this one is back (a tenant allowed one run at a time has it).
          slot.release(tokens()).then(() => void this.#queue.advance()),
        ]);
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
          .then(() => this.#queue.advance())
          .catch(() => {});
      });
  }

  #streamDeps() {
    const { storage, env, now, stores, receivers, versions, history } = this.#deps;
    return {
      storage,
      env,
      now,
      stores,
      receivers,
      versions,
      history,
      ...(this.#deps.fetch !== undefined ? { fetch: this.#deps.fetch } : {}),
      seal: (
        run: Run,
        text: string,
        end: RunEnd,
        stores: RunStores,
        toolCalls?: readonly StoredToolCall[],
        afterActions?: boolean,
      ) => this.#seal(run, text, end, stores, toolCalls, afterActions),
      onParked: () => this.#waiting.expireDue(),
    };
  }

  /** Ends a run by its cause (src/thread/run/run-seal.ts), then moves the queue's places and answers its waiters. */
  #seal(
    run: Run,
    text: string,
    end: RunEnd,
    stores: RunStores = this.#deps.stores,
    toolCalls: readonly StoredToolCall[] = [],
    afterActions = false,
  ): Run {
    const live = this.#live?.runId === run.id ? this.#live : null;
    const sealed = sealRun(
      {
        storage: this.#deps.storage,
        queue: this.#deps.queue,
        receivers: this.#deps.receivers,
        bindings: this.#bindings,
        now: this.#deps.now,
      },
      run,
      text,
      end,
      { live, stores, toolCalls, afterActions },
    );
    this.#queue.announce();
    const waiting = this.#waiters.get(run.id);
    this.#waiters.delete(run.id);
    for (const resolve of waiting ?? []) resolve(sealed);
    return sealed;
  }
}
