// Handoff (docs/protocol.md): a person of the tenant's team takes the thread over; user sends are stored and start no run.
//
// The mode lives in the thread's `meta` (durable across eviction); each change is also an `event` entry on the
// active branch, so transcripts and history show it, and a `mode` frame to every socket.
import { fail, ok, type Result } from "../../errors";
import type { ServerFrame, ThreadMode } from "../../shared/protocol";
import type { Entry, EntryStore } from "../../storage/thread/entry-store";
import {
  type HandoffState,
  heldSendEntryId,
  modeOf,
  readHandoff,
  readHandoffRequest,
  recentUserMessages,
  writeHandoff,
  writeHandoffRequest,
} from "../../storage/thread/handoff-store";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import type { RunStore } from "../../storage/thread/run-store";
import type { HandoffView } from "../contract";
import type { ThreadLimits, TurnRequest } from "../run";
import { toWireEntry } from "../run";

/** A send stored during a handoff: no run was started for it. */
export interface HeldTurn {
  held: true;
  userEntry: Entry;
  /** False when a retried `send` matched an earlier one: nothing new was stored. */
  created: boolean;
}

export interface HandoffDeps {
  storage: DurableObjectStorage;
  entries: EntryStore;
  runs: RunStore;
  binding: ThreadBinding;
  limits: () => ThreadLimits;
  now: () => number;
  /** Every socket (and stream subscriber) of the thread. */
  broadcast: (frame: ServerFrame) => void;
  /** The run streaming now, if any: its id and how to stop it. */
  liveRun: () => { runId: string; abort: (reason: string) => void } | null;
  /** Ends a run waiting for a person (its pending approvals cancelled): a person answers now. */
  endWaiting: () => void;
  /** Resolves when the run has been sealed. */
  settled: (runId: string) => Promise<unknown>;
  /** Projects what changed into D1 (in the background; it never throws). */
  project: () => void;
}

/** Entries read back to count a thread's recent user messages (20 a minute is the default rate). */
const RATE_WINDOW_ENTRIES = 200;
const heldSendKey = (clientMessageId: string): string => `handoff-send:${clientMessageId}`;
const SEND_KEY = (clientMessageId: string): string => `send:${clientMessageId}`;

export class Handoff {
  readonly #deps: HandoffDeps;
  /** The stored state, read once per object lifetime; only this class writes it. */
  #state: HandoffState | null | undefined;

  constructor(deps: HandoffDeps) {
    this.#deps = deps;
  }

  state(): HandoffState | null {
    if (this.#state === undefined) this.#state = readHandoff(this.#deps.storage);
    return this.#state;
  }

  mode(): ThreadMode {
    return modeOf(this.state());
  }

  /** The `ready` frame's fields. */
  readyFields(): { mode: ThreadMode; agentName?: string } {
    const state = this.state();
    return { mode: modeOf(state), ...(state?.agentName !== undefined ? { agentName: state.agentName } : {}) };
  }

  view(changed: boolean): HandoffView {
    const state = this.state();
    return {
      threadId: this.#deps.binding.threadId,
      mode: modeOf(state),
      ...(state?.agentName !== undefined ? { agentName: state.agentName } : {}),
      ...(state !== null ? { since: new Date(state.since).toISOString() } : {}),
      changed,
    };
  }

  /** The tenant starts a handoff. A reply still streaming is interrupted first (reason `handoff`) and sealed. */
  async start(agentName: string | undefined): Promise<Result<HandoffView>> {
    if (this.state() !== null) return ok(this.view(false));
    const live = this.#deps.liveRun();
    if (live !== null) {
      live.abort("handoff");
      await this.#deps.settled(live.runId);
    }
    this.#deps.endWaiting();
    // Read again after the wait: another start may have won.
    if (this.state() !== null) return ok(this.view(false));
    this.#enter({ ...(agentName !== undefined ? { agentName } : {}), since: this.#deps.now(), by: "tenant" });
    return ok(this.view(true));
  }

  /** The tenant hands the thread back to the model; the next user send starts a run again. */
  end(): Result<HandoffView> {
    const state = this.state();
    if (state === null) return ok(this.view(false));
    this.#change(null, "handoff_ended", state.agentName);
    return ok(this.view(true));
  }

  /** A person's reply: appended below the active leaf as `role: "human_agent"`; only while in handoff. */
  humanMessage(input: { text: string; authorName?: string }): Result<Entry> {
    const state = this.state();
    if (state === null) return fail("conflict", "The thread is not in handoff; start a handoff first.");
    const limits = this.#deps.limits();
    if (input.text.length > limits.maxMessageChars) {
      return fail("bad_request", `Messages are limited to ${limits.maxMessageChars} characters.`);
    }
    if (this.#deps.liveRun() !== null) return fail("conflict", "A reply is still being written.");
    const authorName = input.authorName ?? state.agentName;
    const parentId = this.#deps.entries.latestLeaf()?.id ?? null;
    const appended = this.#deps.entries.append({
      parentId,
      ...(parentId !== null ? { expectedParentId: parentId } : {}),
      kind: "message",
      role: "human_agent",
      body: { text: input.text, ...(authorName !== undefined ? { authorName } : {}) },
    });
    if (!appended.ok) return appended;
    this.#deps.broadcast({ type: "entry", entry: toWireEntry(appended.value.entry) });
    return ok(appended.value.entry);
  }

  /**
   * What a turn does in handoff, decided before the run lifecycle sees it: a send is stored and starts no run (a
   * retried one answers with its entry), an edit or regenerate is a conflict; null lets the turn go on as usual.
   */
  hold(request: TurnRequest): Result<HeldTurn> | null {
    const { entries, storage } = this.#deps;
    if (request.kind === "send") {
      const earlier = heldSendEntryId(storage, heldSendKey(request.clientMessageId));
      const userEntry = earlier === null ? null : entries.get(earlier);
      // Also after the handoff ended: a send that was held never starts a run later.
      if (userEntry !== null) return ok({ held: true, userEntry, created: false });
    }
    if (this.state() === null) return null;
    if (request.kind !== "send") {
      return fail(
        "conflict",
        "A person is handling this conversation; edit and regenerate wait until they are done.",
      );
    }
    // A send accepted (with a run) before the handoff began is answered by the lifecycle from its run.
    if (this.#deps.runs.byIdempotencyKey(SEND_KEY(request.clientMessageId)) !== null) return null;
    const limits = this.#deps.limits();
    if (request.text.length > limits.maxMessageChars) {
      return fail("bad_request", `Messages are limited to ${limits.maxMessageChars} characters.`);
    }
    if (this.#deps.liveRun() !== null) {
      return fail("conflict", "A reply is still being written; wait for it or cancel it.");
    }
    const recent = recentUserMessages(storage, this.#deps.now() - 60_000, RATE_WINDOW_ENTRIES);
    if (recent >= limits.sendsPerMinute) {
      return { ok: false, code: "rate_limited", message: "Too many messages; slow down.", retryAfter: 60 };
    }
    if (typeof request.parentId === "string" && entries.get(request.parentId) === null) {
      return fail("not_found", "The entry to reply below does not exist in this thread.");
    }
    const parentId = request.parentId === undefined ? (entries.latestLeaf()?.id ?? null) : request.parentId;
    const stored = storage.transactionSync((): Result<Entry> => {
      const appended = entries.append({
        parentId,
        kind: "message",
        role: "user",
        body: { text: request.text, clientMessageId: request.clientMessageId },
        ...(request.attachments !== undefined && request.attachments.length > 0
          ? { attachments: request.attachments }
          : {}),
        // At no expected parent, so a retry finds it wherever the thread has moved since.
        idempotencyKey: heldSendKey(request.clientMessageId),
        select: true,
      });
      if (!appended.ok) return appended;
      return ok(appended.value.entry);
    });
    if (!stored.ok) return stored;
    this.#deps.broadcast({ type: "entry", entry: toWireEntry(stored.value) });
    this.#deps.project();
    return ok({ held: true, userEntry: stored.value, created: true });
  }

  /** After a run (or on wake after an eviction): a handoff the model asked for starts now. */
  applyRequested(): void {
    const request = readHandoffRequest(this.#deps.storage);
    if (request === null) return;
    const live = this.#deps.liveRun();
    if (live !== null && live.runId === request.runId) return;
    this.#deps.storage.transactionSync(() => {
      writeHandoffRequest(this.#deps.storage, null);
      if (this.state() === null) this.#enter({ since: this.#deps.now(), by: "model" });
    });
  }

  #enter(state: HandoffState): void {
    this.#change(state, "handoff_started", state.agentName);
  }

  /** Writes the mode and its event entry in one transaction, then tells every socket. */
  #change(
    state: HandoffState | null,
    event: "handoff_started" | "handoff_ended",
    agentName: string | undefined,
  ): void {
    const { storage, entries } = this.#deps;
    const entry = storage.transactionSync(() => {
      writeHandoff(storage, state);
      const parentId = entries.latestLeaf()?.id ?? null;
      const appended = entries.append({
        parentId,
        kind: "event",
        body: { event, ...(agentName !== undefined ? { agentName } : {}), by: state?.by ?? "tenant" },
      });
      return appended.ok ? appended.value.entry : null;
    });
    this.#state = state;
    if (entry !== null) this.#deps.broadcast({ type: "entry", entry: toWireEntry(entry) });
    this.#deps.broadcast({
      type: "mode",
      mode: modeOf(state),
      ...(state?.agentName !== undefined ? { agentName: state.agentName } : {}),
    });
  }
}
