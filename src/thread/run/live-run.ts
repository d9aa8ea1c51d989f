// The live stream: a streaming run's deltas, made durable in chunk rows before they are sent, and the frames its
// receivers get.
import type { ServerFrame } from "../../shared/protocol";
import type { Entry, EntryStore } from "../../storage/thread/entry-store";
import type { RunChunkStore } from "../../storage/thread/run-chunk-store";
import type { Run } from "../../storage/thread/run-store";
import type { UsageTotals } from "../../storage/thread/usage-store";
import type { RequestMeta } from "../contract";
import { type Peer, toWireEntry } from "./frames";
import type { RunStores } from "./run-stores";

/** Deltas packed into one stored chunk row (resume reads them back); the open row is rewritten as it fills. */
export const DELTAS_PER_CHUNK = 10;

/** Runs `flush` once the current event-loop turn is over: deltas produced in the same turn share one write. */
export type FlushScheduler = (flush: () => void) => void;

const afterThisTurn: FlushScheduler = (flush) => {
  setTimeout(flush, 0);
};

/** Everyone who hears a thread's frames: the `hello`-ed peers and any extra subscriber (an SSE response). */
export class StreamReceivers {
  readonly #peers: () => Iterable<Peer>;
  readonly #subscribers = new Set<Peer>();

  constructor(peers: () => Iterable<Peer>) {
    this.#peers = peers;
  }

  subscribe(peer: Peer): () => void {
    this.#subscribers.add(peer);
    return () => this.#subscribers.delete(peer);
  }

  send(frame: ServerFrame): void {
    for (const peer of this.#peers()) peer.send(frame);
    for (const peer of this.#subscribers) peer.send(frame);
  }
}

export function runFrame(run: Run): ServerFrame {
  return {
    type: "run",
    runId: run.id,
    status: run.status,
    ...(run.status === "failed" && run.error !== null ? { error: run.error } : {}),
    ...(run.status === "aborted" && run.abortReason !== null ? { reason: run.abortReason } : {}),
  };
}

/** What a peer needs about a run that is no longer streaming: its reply entry, if any, and its outcome. */
export function settledFrames(run: Run, entries: EntryStore): ServerFrame[] {
  const frames: ServerFrame[] = [];
  const assistant = run.assistantEntryId === null ? null : entries.get(run.assistantEntryId);
  if (assistant !== null) frames.push({ type: "entry", entry: toWireEntry(assistant) });
  frames.push(runFrame(run));
  return frames;
}

/** The reply text already packed into chunk rows. */
export function persistedText(chunks: RunChunkStore, runId: string): string {
  return chunks
    .after(runId, 0)
    .map((d) => d.text)
    .join("");
}

/**
 * A delta leaves only once it is durable (docs/protocol.md, "No text a client saw is ever lost"): it is written to its chunk row
 * first, synchronously, and the object's output gate holds every frame sent after a write until that write is
 * confirmed. So whatever any client received survives the object's death, and the sealed `interrupted` entry holds
 * it. The first delta of a run is written and sent at once; later deltas of one event-loop turn share one write.
 */
export class LiveRun {
  readonly runId: string;
  readonly controller = new AbortController();
  /** The verified subject whose message started the run (tools receive it as identity). */
  readonly subject: string | null;
  /** The Worker request that started the run, when known (its log line and the platform's host). */
  readonly meta: RequestMeta | undefined;
  /** When the first delta was produced (the clock of `now`), for the turn's log line. */
  firstDeltaAt: number | null = null;
  /** Stores for this run's writes; swapped for ones redacting every tenant secret the run resolved. */
  stores: RunStores;
  /** The run's usage totals, once it is sealed (its quota slot is given back with them). */
  usage: UsageTotals | null = null;
  /** The reply entry its seal stored (null before, or when it stored none): the next turn's history needs it. */
  reply: Entry | null = null;
  /** The run waited for a person and goes on now, from its stored steps. */
  readonly resumed: boolean;
  /** The run asked a person something in this stretch (its entries then sit between its message and its reply). */
  asked = false;
  /** Every delta so far, in order: the reply the run is sealed with when the model ends. */
  text = "";
  readonly done: Promise<Run>;
  readonly #resolveDone: (run: Run) => void;
  readonly #send: (frame: ServerFrame) => void;
  readonly #now: () => number;
  readonly #schedule: FlushScheduler;
  /** Seq of the last delta produced. */
  #seq = 0;
  /** Seq of the last delta stored (and so sent). */
  #flushedSeq = 0;
  /** Seq of the first delta in the open chunk row, and that row's deltas as stored. */
  #rowFirstSeq = 1;
  #row: string[] = [];
  /** Deltas produced but not yet stored nor sent. */
  #pending: string[] = [];
  #flushScheduled = false;
  /** Set once a write is refused (the run ended under the model): nothing more is stored or sent. */
  #closed = false;

  constructor(input: {
    runId: string;
    stores: RunStores;
    subject: string | null;
    meta?: RequestMeta;
    now: () => number;
    send: (frame: ServerFrame) => void;
    /** When coalesced deltas are written (tests pass their own); by default after the current event-loop turn. */
    schedule?: FlushScheduler;
    /** The deltas the run streamed before it waited for a person: its reply goes on after them. */
    continueAfter?: readonly { seq: number; text: string }[];
  }) {
    this.runId = input.runId;
    this.stores = input.stores;
    this.subject = input.subject;
    this.meta = input.meta;
    this.#now = input.now;
    this.#send = input.send;
    this.#schedule = input.schedule ?? afterThisTurn;
    this.resumed = input.continueAfter !== undefined;
    const before = input.continueAfter ?? [];
    if (before.length > 0) {
      this.text = before.map((d) => d.text).join("");
      this.#seq = before.at(-1)?.seq ?? 0;
      this.#flushedSeq = this.#seq;
      this.#rowFirstSeq = this.#seq + 1;
      this.firstDeltaAt = input.now();
    }
    let resolveDone!: (run: Run) => void;
    this.done = new Promise<Run>((resolve) => {
      resolveDone = resolve;
    });
    this.#resolveDone = resolveDone;
  }

  /** One model delta: numbered, then stored and sent — at once for the run's first, else with its turn's others. */
  push(delta: string): void {
    if (delta.length === 0 || this.#closed) return;
    this.firstDeltaAt ??= this.#now();
    this.text += delta;
    this.#seq += 1;
    this.#pending.push(delta);
    if (this.#seq === 1) {
      this.flush();
      return;
    }
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    this.#schedule(() => {
      this.#flushScheduled = false;
      try {
        this.flush();
      } catch (error) {
        // A write that throws (storage failing) must not escape a timer: stop sending; the run's end seals the text.
        this.#closed = true;
        console.error(
          JSON.stringify({ level: "error", message: "delta write failed", error: String(error) }),
        );
      }
    });
  }

  /**
   * Stores the pending deltas in the open chunk row (starting new rows every DELTAS_PER_CHUNK), then sends them.
   * Called before a run parks for a person too, so its continuation resumes after every stored delta (a run that ends
   * hands its rest to the seal instead: `settle`).
   */
  flush(): void {
    if (this.#pending.length === 0 || this.#closed) return;
    const sendable: string[] = [];
    let pending = this.#pending;
    this.#pending = [];
    while (pending.length > 0) {
      const room = DELTAS_PER_CHUNK - this.#row.length;
      const taken = pending.slice(0, room);
      const stored = this.stores.chunks.write(this.runId, this.#rowFirstSeq, [...this.#row, ...taken]);
      if (!stored.ok) {
        // The run ended (sealed elsewhere): what was not stored is never sent.
        this.#closed = true;
        break;
      }
      this.#row.push(...taken);
      sendable.push(...taken);
      pending = pending.slice(taken.length);
      if (this.#row.length >= DELTAS_PER_CHUNK) {
        this.#rowFirstSeq += this.#row.length;
        this.#row = [];
      }
    }
    for (const text of sendable) {
      this.#flushedSeq += 1;
      this.#send({ type: "delta", runId: this.runId, seq: this.#flushedSeq, text });
    }
  }

  /**
   * At the run's end, after its seal: the deltas not yet in a chunk row are sent without one when the seal stored their
   * text in the reply entry (`stored`) — the chunk rows would be deleted by that very seal — and are dropped, never
   * sent, when it did not. Nothing is stored or sent for this run afterwards.
   */
  settle(stored: boolean): void {
    const pending = this.#pending;
    this.#pending = [];
    const wasClosed = this.#closed;
    this.#closed = true;
    if (!stored || wasClosed) return;
    for (const text of pending) {
      this.#flushedSeq += 1;
      this.#send({ type: "delta", runId: this.runId, seq: this.#flushedSeq, text });
    }
  }

  /** Frames a (re)connecting peer missed after `afterSeq`: the stored deltas (pending ones follow when sent). */
  catchUpFrames(afterSeq: number): ServerFrame[] {
    const runId = this.runId;
    const frames: ServerFrame[] = [{ type: "run", runId, status: "running" }];
    for (const delta of this.stores.chunks.after(runId, afterSeq)) {
      frames.push({ type: "delta", runId, seq: delta.seq, text: delta.text });
    }
    return frames;
  }

  /** The reply as far as it is known after a crash: every delta produced (sent ones are all among them). */
  textSoFar(): string {
    return this.text;
  }

  /** Resolves `done` for everyone waiting on the run's end. */
  finish(final: Run): void {
    this.#resolveDone(final);
  }
}
