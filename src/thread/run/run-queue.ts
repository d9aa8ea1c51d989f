// Turns that arrive while a run is live (double-texting, docs/protocol.md#one-run-at-a-time-and-double-texting): kept `queued` with their
// request, announced with their place, started one at a time in order as each run ends, or held in handoff.
import type { RunSlot } from "../../auth/run-quota";
import { fail, ok, type Result } from "../../errors";
import type { ErrorCode } from "../../shared/errors";
import type { MultitaskStrategy, ServerFrame } from "../../shared/protocol";
import type { Entry } from "../../storage/thread/entry-store";
import type { QueuedTurnRecord, QueuedTurnStore } from "../../storage/thread/queued-turn-store";
import type { Run } from "../../storage/thread/run-store";
import type { RequestMeta } from "../contract";
import { toWireEntry } from "./frames";
import type { LiveRun, StreamReceivers } from "./live-run";
import { queuedFrame, queuedTurnOf, requestOfQueued } from "./multitask";
import { placeUserTurn, storeUserEntry, type TurnRequest } from "./place-user-turn";
import type { VersionBindings } from "./run-artifact";
import type { RunBindings } from "./run-binding";
import type { RunEnd } from "./run-seal";
import type { RunStores } from "./run-stores";

/** A strategy under which a turn arriving during a run is kept, not refused. */
export type QueueStrategy = Exclude<MultitaskStrategy, "reject">;

/** A send or an edit carries the client's message id; its run is found again by it when the client retries. */
export function runIdempotencyKey(request: { kind: "send" | "edit"; clientMessageId: string }): string {
  return `${request.kind}:${request.clientMessageId}`;
}

export interface RunQueueDeps {
  storage: DurableObjectStorage;
  stores: RunStores;
  queue: QueuedTurnStore;
  receivers: StreamReceivers;
  versions: VersionBindings;
  bindings: RunBindings;
  /** The run whose model is streaming now, if any. */
  live: () => LiveRun | null;
  /** The run waiting for a person (`requires_action`), if any: queued turns wait behind it too. */
  waiting: () => Run | null;
  /** Ends the waiting run for an urgent turn (`interrupt`, `rollback`): its pending approvals are cancelled. */
  interruptWaiting: (run: Run) => void;
  /** A slot in the tenant's run quota for a queued turn about to start. */
  acquireSlot: () => Promise<Result<RunSlot>>;
  /** A turn was queued: the object must wake to run it even if it dies first. */
  onQueued: () => void;
  /** True while queued turns must not run (the thread is in handoff): they are stored and end unanswered. */
  holdsTurns: () => boolean;
  /** Starts a placed run's model call; it holds `slot` until it ends. */
  start: (
    run: Run,
    userEntry: Entry,
    subject: string | null,
    slot: RunSlot,
    meta: RequestMeta | undefined,
  ) => void;
  /** Ends a run by the state machine's cause. */
  seal: (run: Run, text: string, end: RunEnd) => Run;
}

export class RunQueue {
  readonly #deps: RunQueueDeps;
  /** True while the next queued turn is being started (its quota slot is asked for). */
  #advancing = false;
  /** The position each queued run's receivers last heard, so only a change is announced. */
  readonly #announced = new Map<string, number>();

  constructor(deps: RunQueueDeps) {
    this.#deps = deps;
  }

  /** True while the next queued turn is being started: a new turn must wait behind it too. */
  get advancing(): boolean {
    return this.#advancing;
  }

  /** Where a run waits (1 = next), or null when it is not queued. */
  position(runId: string): number | null {
    return this.#deps.queue.position(runId);
  }

  /** A `run` frame with its position for every queued run, in order (what a socket that just said hello needs). */
  frames(): ServerFrame[] {
    return this.#deps.queue.order().map((runId, i) => queuedFrame(runId, i + 1));
  }

  /**
   * Keeps a turn that arrived during a run: its run is stored `queued` with the request, and every receiver hears its
   * position. `interrupt` and `rollback` turns go first and end the live run (`aborted`, reason `interrupted`); a
   * `rollback` send's message will be a sibling of that run's user message.
   */
  enqueue(request: TurnRequest, strategy: QueueStrategy): Result<{ run: Run; position: number | null }> {
    const { entries, runs } = this.#deps.stores;
    // Checked now so a turn that could never be placed is refused with nothing stored; placed when it starts.
    const placed = placeUserTurn(request, entries);
    if (!placed.ok) return placed;
    const live = this.#deps.live();
    const waiting = live === null ? this.#deps.waiting() : null;
    const current = live?.runId ?? waiting?.id ?? null;
    const urgent = strategy !== "enqueue";
    let kept = request;
    if (
      strategy === "rollback" &&
      request.kind === "send" &&
      request.parentId === undefined &&
      current !== null
    ) {
      const interrupted = runs.get(current);
      const user = interrupted?.userEntryId ? entries.get(interrupted.userEntryId) : null;
      if (user !== null && user !== undefined) kept = { ...request, parentId: user.parentId };
    }
    const created = this.#deps.storage.transactionSync((): Result<Run> => {
      const made = runs.create({
        ...(request.kind !== "regenerate" ? { idempotencyKey: runIdempotencyKey(request) } : {}),
        // Recorded again when its message is placed: the version where it lands then is the one it runs on.
        versionId: this.#deps.bindings.ofRequest(request).versionId,
      });
      if (!made.ok) return made;
      if (!made.value.created) return fail("conflict", "This message was already sent.");
      this.#deps.queue.add({ runId: made.value.run.id, urgent, ...queuedTurnOf(kept) });
      return ok(made.value.run);
    });
    if (!created.ok) return created;
    this.announce();
    if (urgent) live?.controller.abort("interrupted");
    if (urgent && waiting !== null) this.#deps.interruptWaiting(waiting);
    this.#deps.onQueued();
    void this.advance();
    return ok({ run: created.value, position: this.#deps.queue.position(created.value.id) });
  }

  /**
   * Starts the next queued turn when no run is live. Every run's end calls it again once its quota slot is back, so
   * the queue drains one run at a time, in order. A turn whose slot is refused fails unstarted and the next one goes.
   */
  async advance(): Promise<void> {
    const queue = this.#deps.queue;
    if (this.#advancing || this.#deps.live() !== null || this.#waiting() === 0) return;
    if (this.#deps.waiting() !== null) return;
    this.#advancing = true;
    try {
      // A queued turn records the version where it lands: the thread's upgrade targets must be verified first.
      await this.#deps.versions.load();
      while (this.#deps.live() === null && this.#deps.waiting() === null && queue.count() > 0) {
        const slot = await this.#deps.acquireSlot();
        // Read after the await: a cancel, an urgent turn or a handoff may have changed what runs next.
        if (this.#deps.holdsTurns()) {
          if (slot.ok) await slot.value.release(0);
          this.#holdAll();
          break;
        }
        const next = queue.first();
        if (next === null) {
          if (slot.ok) await slot.value.release(0);
          break;
        }
        if (!slot.ok) {
          this.#fail(next.runId, { code: slot.code, message: slot.message });
          continue;
        }
        if (!this.#startNext(next, slot.value)) await slot.value.release(0);
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

  /**
   * How many turns wait; none when the thread's tables are gone (erased while a run was ending): every caller starts
   * this without waiting for it, so it must not reject.
   */
  #waiting(): number {
    try {
      return this.#deps.queue.count();
    } catch (error) {
      console.error(JSON.stringify({ level: "error", message: "queue unreadable", error: String(error) }));
      return 0;
    }
  }

  /** Tells every receiver each queued run's position, when it is new or changed. */
  announce(): void {
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

  /** Places a queued turn's user message (below the thread's leaf as it is now, for a plain send) and starts it. */
  #startNext(next: QueuedTurnRecord, slot: RunSlot): boolean {
    const { entries, runs } = this.#deps.stores;
    const run = runs.get(next.runId);
    if (run === null || run.status !== "queued") {
      this.#deps.queue.remove(next.runId);
      return false;
    }
    const request = requestOfQueued(next);
    const placed = placeUserTurn(request, entries);
    if (!placed.ok) {
      this.#fail(run.id, { code: placed.code, message: placed.message });
      return false;
    }
    const started = this.#deps.storage.transactionSync((): Result<{ run: Run; userEntry: Entry }> => {
      const stored = storeUserEntry(entries, placed.value);
      if (!stored.ok) return stored;
      const userEntry = stored.value;
      const attached = runs.placeUserEntry(run.id, {
        userEntryId: userEntry.id,
        parentEntryId: userEntry.parentId,
        versionId: this.#deps.bindings.at(userEntry).versionId,
      });
      if (!attached.ok) return attached;
      this.#deps.queue.remove(run.id);
      return ok({ run: attached.value, userEntry });
    });
    if (!started.ok) {
      this.#fail(run.id, { code: started.code, message: started.message });
      return false;
    }
    if (placed.value.existingUser === undefined) {
      this.#deps.receivers.send({ type: "entry", entry: toWireEntry(started.value.userEntry) });
    }
    this.announce();
    this.#deps.start(started.value.run, started.value.userEntry, request.subject, slot, request.meta);
    return true;
  }

  /**
   * In handoff, every queued turn's message enters the tree as a held send would, in queue order, and its run ends
   * `aborted` (reason `handoff`) without a model call: the person answering sees every message, none is lost.
   */
  #holdAll(): void {
    const { entries, runs } = this.#deps.stores;
    for (let next = this.#deps.queue.first(); next !== null; next = this.#deps.queue.first()) {
      const run = runs.get(next.runId);
      if (run === null || run.status !== "queued") {
        this.#deps.queue.remove(next.runId);
        continue;
      }
      const placed = placeUserTurn(requestOfQueued(next), entries);
      if (!placed.ok) {
        this.#fail(run.id, { code: placed.code, message: placed.message });
        continue;
      }
      const held = this.#deps.storage.transactionSync((): Result<{ run: Run; userEntry: Entry }> => {
        const stored = storeUserEntry(entries, placed.value);
        if (!stored.ok) return stored;
        const attached = runs.placeUserEntry(run.id, {
          userEntryId: stored.value.id,
          parentEntryId: stored.value.parentId,
        });
        if (!attached.ok) return attached;
        return ok({ run: attached.value, userEntry: stored.value });
      });
      if (!held.ok) {
        this.#fail(run.id, { code: held.code, message: held.message });
        continue;
      }
      if (placed.value.existingUser === undefined) {
        this.#deps.receivers.send({ type: "entry", entry: toWireEntry(held.value.userEntry) });
      }
      this.#deps.seal(held.value.run, "", { cause: "handoff" });
    }
    this.announce();
  }

  /** A queued turn that cannot start ends `failed` with why; nothing of it enters the tree. */
  #fail(runId: string, error: { code: ErrorCode; message: string }): void {
    const run = this.#deps.stores.runs.get(runId);
    if (run === null || run.status !== "queued") {
      this.#deps.queue.remove(runId);
      return;
    }
    this.#deps.seal(run, "", { cause: "fail", error });
  }
}
