// One thread's conversation engine: the surface the thread object uses, over the run lifecycle and its stores.
import type { RunQuota } from "../../auth/run-quota";
import type { DeploymentStore } from "../../control/deployment-store";
import { presentationOf } from "../../control/presentation";
import { fail, ok, type Result } from "../../errors";
import type { ApprovalDecision, ServerFrame } from "../../shared/protocol";
import type { ApprovalView, ToolAnswer } from "../../shared/thread-api";
import { readThreadContext } from "../../storage/thread/context-store";
import type { EntryStore } from "../../storage/thread/entry-store";
import { FeedbackStore } from "../../storage/thread/feedback-store";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import { QueuedTurnStore } from "../../storage/thread/queued-turn-store";
import type { Run, RunStore } from "../../storage/thread/run-store";
import { applyThreadRetention, type RetentionPolicy } from "../../storage/thread/thread-retention";
import type { FeedbackReply, UpgradeReply } from "../contract";
import type { Peer, TurnRequest, UpgradeBy } from "../run";
import {
  type AttachmentBytes,
  approvalView,
  attachmentReader,
  type DeciderKind,
  openRunStores,
  PromptHistory,
  queuedFrame,
  RunLifecycle,
  type RunStores,
  recordHandoffRequest,
  runArtifact,
  StreamReceivers,
  settledFrames,
  type ThreadLimits,
  type TurnAccepted,
  threadLimits,
  toWireEntry,
  VersionBindings,
} from "../run";
import { type FeedbackInput, giveFeedback } from "./feedback";
import { Handoff, type HeldTurn } from "./handoff";
import { resolveAttachments } from "./send-attachments";
import { appendVersionChange, loadVersion, offeredVersion } from "./upgrade";

export type { TurnAccepted, TurnRequest } from "../run";
export { DELTAS_PER_CHUNK, type ThreadLimits, threadLimits } from "../run";
export type { HeldTurn } from "./handoff";

export interface RuntimeDeps {
  storage: DurableObjectStorage;
  env: Env;
  binding: ThreadBinding;
  now: () => number;
  /** Peers that finished `hello` and receive the live stream. */
  peers: () => Iterable<Peer>;
  /** Keeps the object in memory while a model streams. */
  keepAliveWhile: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Runs after a turn is sealed, still inside the keep-alive (the D1 projection drain). */
  afterTurn: () => Promise<void>;
  /** Outbound fetch for tool webhooks (tests pass a fake). */
  fetch?: typeof fetch;
  /** The tenant's run quotas: a slot per run, with the run's tokens counted when it ends. */
  quota: RunQuota;
  /** A turn was queued behind a run: the object must wake to run it even if it dies first. */
  onQueued?: () => void;
  /** A run waits for a person: wake the object at `atMs`, when its first pending action expires. */
  armExpiry?: (atMs: number) => void;
  /** The control plane: versions an upgrade moves to, and the active release an offer comes from. */
  store?: () => DeploymentStore;
}

export class ThreadRuntime {
  readonly #deps: RuntimeDeps;
  readonly #stores: RunStores;
  readonly #receivers: StreamReceivers;
  readonly #history: PromptHistory;
  readonly #lifecycle: RunLifecycle;
  readonly #handoff: Handoff;
  readonly #feedback: FeedbackStore;
  readonly #versions: VersionBindings;
  /** The version offered to the visitor (`ready.upgrade`) for the leaf version it was computed at. */
  #offer: { at: number; version: number | null } | null = null;

  constructor(deps: RuntimeDeps) {
    this.#deps = deps;
    this.#versions = new VersionBindings(deps.storage, deps.binding);
    this.#stores = openRunStores(deps.storage, { now: deps.now });
    this.#receivers = new StreamReceivers(deps.peers);
    this.#history = new PromptHistory(this.#stores.entries, threadLimits(deps.binding).maxContextTokens);
    this.#feedback = new FeedbackStore(deps.storage, { now: deps.now });
    this.#handoff = new Handoff({
      storage: deps.storage,
      entries: this.#stores.entries,
      runs: this.#stores.runs,
      binding: deps.binding,
      limits: () => this.limits,
      now: deps.now,
      broadcast: (frame) => this.#receivers.send(frame),
      liveRun: () => {
        const live = this.#lifecycle.live;
        return live === null ? null : { runId: live.runId, abort: (reason) => live.controller.abort(reason) };
      },
      settled: (runId) => this.#lifecycle.settled(runId),
      endWaiting: () => this.#lifecycle.waiting.endForHandoff(),
      project: () => this.#project(),
    });
    this.#lifecycle = new RunLifecycle({
      storage: deps.storage,
      env: deps.env,
      binding: deps.binding,
      versions: this.#versions,
      now: deps.now,
      keepAliveWhile: deps.keepAliveWhile,
      // A handoff the run's model asked for starts once its reply is sealed, before the projection.
      afterTurn: async () => {
        this.#handoff.applyRequested();
        await deps.afterTurn();
      },
      ...(deps.fetch !== undefined ? { fetch: deps.fetch } : {}),
      stores: this.#stores,
      receivers: this.#receivers,
      history: this.#history,
      queue: new QueuedTurnStore(deps.storage),
      acquireSlot: () => deps.quota.acquire(),
      onQueued: deps.onQueued ?? (() => {}),
      holdsTurns: () => this.#handoff.state() !== null,
      armExpiry: deps.armExpiry ?? (() => {}),
      requestHandoff: (runId) =>
        recordHandoffRequest(deps.storage, {
          binding: deps.binding,
          runId,
          reason: "An approval was not decided in time.",
          now: deps.now(),
        }),
    });
  }

  /** Retention over this thread's storage under `policy` (the remembered prompt history goes with it). */
  applyRetention(policy: RetentionPolicy, now: number): { deletedEntries: number } {
    this.#history.forget();
    return applyThreadRetention(this.#deps.storage, policy, now);
  }

  /** Zero retention blanked the thread's text: the remembered prompt history goes too. */
  textPurged(): void {
    this.#history.forget();
  }

  /** Verifies the versions the thread was upgraded to (once); every caller of the runtime awaits it first. */
  prepare(): Promise<void> {
    return this.#versions.load();
  }

  /** The pin and every version the thread was upgraded to, verified (a stored run's artifact is found here). */
  get versions(): VersionBindings {
    return this.#versions;
  }

  /** Reads this thread's attachments from its tenant's object storage (model input and its audit). */
  get attachmentBytes(): AttachmentBytes {
    return attachmentReader(this.#deps.env, this.#deps.binding.tenantId);
  }

  /** The pin: the version the thread was bound to, which claims are checked against. */
  get binding(): ThreadBinding {
    return this.#deps.binding;
  }

  /** The version in effect at the thread's leaf (the pin until an upgrade), which its next turn runs on. */
  current(): ThreadBinding {
    const bound = runArtifact(this.#versions, this.#stores.entries.latestLeaf());
    return bound.ok ? bound.value : this.#deps.binding;
  }

  get limits(): ThreadLimits {
    return threadLimits(this.current());
  }

  get entries(): EntryStore {
    return this.#stores.entries;
  }

  get runs(): RunStore {
    return this.#stores.runs;
  }

  leafId(): string | null {
    return this.#stores.entries.latestLeaf()?.id ?? null;
  }

  readyFrame(): ServerFrame {
    const current = this.current();
    const offer = this.#offer;
    const offered =
      offer !== null && offer.at === current.version && offer.version !== null ? offer.version : null;
    return {
      type: "ready",
      protocol: 1,
      threadId: this.binding.threadId,
      leafId: this.leafId(),
      agent: { name: current.artifact.name, version: current.version },
      // The leaf version's, with the greeting filled from the context of the thread's latest launch.
      presentation: presentationOf(current.artifact, readThreadContext(this.#deps.storage).variables),
      ...this.#handoff.readyFields(),
      ...(offered !== null ? { upgrade: { version: offered } } : {}),
    };
  }

  /**
   * Reads which version the active release would offer this thread now (before every `hello`, so a release just
   * activated is offered at the next connection), for `ready` to carry; only a version whose artifact says
   * `upgrades: "offer"` asks D1 at all.
   */
  async refreshOffer(): Promise<number | null> {
    const current = this.current();
    let version: number | null = null;
    // A preview thread stays on what it previews.
    const previewing = this.#deps.binding.preview !== undefined;
    if (current.artifact.upgrades === "offer" && !previewing && this.#deps.store !== undefined) {
      version = await offeredVersion(this.#deps.store(), current).catch(() => null);
    }
    this.#offer = { at: current.version, version };
    return version;
  }

  /**
   * Moves the thread to `version` from its leaf on (docs/api.md): refused with nothing stored while a reply runs or
   * waits, in handoff, or when the leaf already runs on it; a visitor may take only the version offered to it.
   */
  async upgrade(version: number, by: UpgradeBy): Promise<Result<UpgradeReply>> {
    await this.prepare();
    if (this.#deps.binding.preview !== undefined) {
      return fail("conflict", "A preview thread stays on what it previews.");
    }
    const busy = this.#checkUpgradable();
    if (!busy.ok) return busy;
    if (by === "visitor" && (await this.refreshOffer()) !== version) {
      return fail("forbidden", "That version is not offered to this thread.");
    }
    if (this.#deps.store === undefined) return fail("internal", "The control plane is unavailable.");
    const target = await loadVersion(this.#deps.store(), this.#deps.binding, version);
    if (!target.ok) return target;
    // Checked again after the awaits: a turn may have started meanwhile.
    const again = this.#checkUpgradable();
    if (!again.ok) return again;
    const leaf = this.#stores.entries.latestLeaf();
    const from = this.current();
    if (from.version === target.value.version) {
      return fail("conflict", `The thread already runs on version ${from.version}.`);
    }
    const appended = appendVersionChange(this.#deps.storage, this.#stores.entries, {
      leaf,
      from,
      to: target.value,
      by,
      now: this.#deps.now(),
    });
    if (!appended.ok) return appended;
    this.#versions.add(target.value);
    this.#offer = null;
    this.#receivers.send({ type: "entry", entry: toWireEntry(appended.value) });
    this.#project();
    return ok({
      threadId: this.binding.threadId,
      fromVersion: from.version,
      toVersion: target.value.version,
      entryId: appended.value.id,
    });
  }

  #checkUpgradable(): Result<null> {
    if (this.#handoff.state() !== null) {
      return fail("conflict", "A person is handling this thread; end the handoff before upgrading it.");
    }
    if (this.#lifecycle.live !== null || this.#stores.runs.active().length > 0) {
      return fail("conflict", "A reply is still being written; wait for it or cancel it.");
    }
    return ok(null);
  }

  /** Who answers the user now, and the tenant's commands that change it (docs/protocol.md). */
  get handoff(): Handoff {
    return this.#handoff;
  }

  get feedback(): FeedbackStore {
    return this.#feedback;
  }

  /** The verified subject's rating of an assistant entry, announced to every socket of the thread. */
  giveFeedback(subject: string, input: FeedbackInput): Result<FeedbackReply> {
    return giveFeedback(
      {
        storage: this.#deps.storage,
        entries: this.#stores.entries,
        feedback: this.#feedback,
        binding: this.#deps.binding,
        limits: () => this.limits,
        now: this.#deps.now,
        broadcast: (frame) => this.#receivers.send(frame),
        project: () => this.#project(),
      },
      subject,
      input,
    );
  }

  liveRunId(): string | null {
    return this.#lifecycle.live?.runId ?? null;
  }

  /** Adds an extra receiver of the live stream (an SSE response) until `unsubscribe`. */
  subscribe(peer: Peer): () => void {
    return this.#receivers.subscribe(peer);
  }

  /** Frames a (re)connecting peer needs to catch up on a run: missed deltas if it is live, else its outcome. */
  catchUp(runId: string, afterSeq: number): ServerFrame[] {
    const run = this.#stores.runs.get(runId);
    if (run === null) return [{ type: "error", code: "not_found", message: "Run not found." }];
    const live = this.#lifecycle.live;
    if (live !== null && live.runId === runId) return live.catchUpFrames(afterSeq);
    const position = this.#lifecycle.position(runId);
    if (position !== null) return [queuedFrame(runId, position)];
    // A run waiting for a person: the text it streamed before it stopped, then what it waits for.
    if (run.status === "requires_action") {
      return [
        ...this.#stores.chunks
          .after(runId, afterSeq)
          .map((delta) => ({ type: "delta" as const, runId, seq: delta.seq, text: delta.text })),
        ...this.#lifecycle.waiting.frames(),
      ];
    }
    return settledFrames(run, this.#stores.entries);
  }

  /** A `run` frame with its position for every turn waiting behind the live run, in order. */
  queuedFrames(): ServerFrame[] {
    return this.#lifecycle.queuedFrames();
  }

  /**
   * A user turn from a client: held without a run in handoff, else validated, stored and started within the
   * tenant's quotas. Nothing is stored when it is refused (a quota refusal included); a retried turn is answered from
   * its run or its held entry without asking the quota.
   */
  async submit(asked: TurnRequest): Promise<Result<TurnAccepted | HeldTurn>> {
    const request = resolveAttachments(this.#deps.storage, asked, () => this.current().artifact);
    if (!request.ok) return request;
    // In handoff a send is stored without a run; a send held earlier is answered from its entry.
    const held = this.#handoff.hold(request.value);
    if (held !== null) return held;
    return this.accept(request.value);
  }

  /**
   * Validates and stores a user turn, then starts its run within the tenant's quotas, or queues it behind the live
   * run (double-texting); a queued turn asks the quota when it starts. Nothing is stored when it is refused (a quota
   * refusal included); a retried turn is answered from its run without asking the quota. The run path of `submit`,
   * which every client path takes; handoff is decided there.
   */
  async accept(request: TurnRequest): Promise<Result<TurnAccepted>> {
    const screened = this.#lifecycle.screen(request);
    if (!screened.ok) return screened;
    if (screened.value.kind === "retried") return ok(screened.value.accepted);
    if (screened.value.kind === "queue") return this.#lifecycle.enqueue(request, screened.value.strategy);
    const slot = await this.#deps.quota.acquire();
    if (!slot.ok) return slot;
    // Checked again after the await: another frame may have started a run meanwhile (then this one may queue).
    const accepted = this.#lifecycle.accept(request, slot.value);
    if (!accepted.ok || !accepted.value.created || accepted.value.position !== null) {
      await slot.value.release(0);
    }
    return accepted;
  }

  /**
   * Whether turns wait behind a run, or a waiting run was answered and waits only for a slot to go on (the object's
   * scheduled check keeps waking while they do; a run still waiting for a person needs no check).
   */
  hasQueuedTurns(): boolean {
    return this.#lifecycle.queuedFrames().length > 0 || this.#lifecycle.waiting.ready();
  }

  /** Starts the next queued turn if no run is live, and continues a waiting run whose actions are all settled. */
  resumeQueue(): void {
    this.#lifecycle.resumeQueue();
    this.#lifecycle.waiting.resume();
  }

  // ---- approvals and client tools (docs/tools.md#approvals) ----

  /** A decision on one of this thread's approvals, by the thread's user or the tenant; exactly once. */
  decide(input: {
    approvalId: string;
    decision: ApprovalDecision;
    reason?: string;
    by: DeciderKind;
  }): Result<ApprovalView> {
    const decided = this.#lifecycle.waiting.decide(input);
    return decided.ok ? ok(approvalView(this.#deps.binding, decided.value)) : decided;
  }

  /** A client's answer to one of this thread's tool requests; the first valid one wins. */
  answerTool(input: { toolCallId: string; output?: unknown; error?: string }): Result<ToolAnswer> {
    return this.#lifecycle.waiting.answer(input);
  }

  /** Settles every action past its time (the object's alarm). */
  expireActions(): void {
    this.#lifecycle.waiting.expireDue();
  }

  /** A waiting run's `run` frame and its pending client tool requests, for a socket saying hello. */
  waitingFrames(): ServerFrame[] {
    return this.#lifecycle.waiting.frames();
  }

  cancel(runId: string): Result<Run> {
    return this.#lifecycle.cancel(runId);
  }

  /** Waits for a run to end (for the non-streaming HTTP API). */
  settled(runId: string): Promise<Run | null> {
    return this.#lifecycle.settled(runId);
  }

  /**
   * Seals runs left unfinished by an earlier instance of this object (an eviction or a deploy mid-stream): the
   * persisted part of the reply becomes an interrupted entry and the run ends `aborted`, never stuck `running`.
   * Queued turns keep their place and start in order.
   */
  recoverInterruptedRuns(): void {
    this.#lifecycle.recoverInterruptedRuns();
    // A handoff its model asked for, when the object died before the run's end could start it.
    this.#handoff.applyRequested();
  }

  /** A change outside a run reaches D1 the way a turn's does, kept alive until the drain settles. */
  #project(): void {
    void this.#deps.keepAliveWhile(() => this.#deps.afterTurn()).catch(() => {});
  }
}
