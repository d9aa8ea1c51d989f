// The live stream: a streaming run's deltas, buffered and packed into chunk rows, and the frames its receivers get.
import type { ServerFrame } from "../shared/protocol";
import type { EntryStore } from "../storage/entry-store";
import type { RunChunkStore } from "../storage/run-chunk-store";
import type { Run } from "../storage/run-store";
import { type Peer, toWireEntry } from "./frames";
import type { RequestMeta } from "./request-meta";
import type { RunStores } from "./run-stores";

/** Deltas packed into one stored chunk row (resume reads them back). */
export const DELTAS_PER_CHUNK = 10;

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
  /** Every delta so far, in order: the reply the run is sealed with when the model ends. */
  text = "";
  readonly done: Promise<Run>;
  readonly #resolveDone: (run: Run) => void;
  readonly #send: (frame: ServerFrame) => void;
  readonly #now: () => number;
  /** Seq of the last delta produced. */
  #seq = 0;
  /** Seq of the last delta persisted in a chunk row. */
  #flushedSeq = 0;
  /** Deltas produced but not yet persisted. */
  #pending: string[] = [];

  constructor(input: {
    runId: string;
    stores: RunStores;
    subject: string | null;
    meta?: RequestMeta;
    now: () => number;
    send: (frame: ServerFrame) => void;
  }) {
    this.runId = input.runId;
    this.stores = input.stores;
    this.subject = input.subject;
    this.meta = input.meta;
    this.#now = input.now;
    this.#send = input.send;
    let resolveDone!: (run: Run) => void;
    this.done = new Promise<Run>((resolve) => {
      resolveDone = resolve;
    });
    this.#resolveDone = resolveDone;
  }

  /** One model delta: numbered, sent to every receiver, and packed into a chunk row every DELTAS_PER_CHUNK. */
  push(delta: string): void {
    if (delta.length === 0) return;
    this.firstDeltaAt ??= this.#now();
    this.text += delta;
    this.#seq += 1;
    this.#pending.push(delta);
    this.#send({ type: "delta", runId: this.runId, seq: this.#seq, text: delta });
    if (this.#pending.length >= DELTAS_PER_CHUNK) this.#flush();
  }

  /** Frames a (re)connecting peer missed after `afterSeq`: stored deltas, then the ones still buffered. */
  catchUpFrames(afterSeq: number): ServerFrame[] {
    const runId = this.runId;
    const frames: ServerFrame[] = [{ type: "run", runId, status: "running" }];
    for (const delta of this.stores.chunks.after(runId, afterSeq)) {
      frames.push({ type: "delta", runId, seq: delta.seq, text: delta.text });
    }
    this.#pending.forEach((text, i) => {
      const seq = this.#flushedSeq + i + 1;
      if (seq > afterSeq) frames.push({ type: "delta", runId, seq, text });
    });
    return frames;
  }

  /** The reply as far as it is known after a crash: what is stored plus what is still buffered. */
  textSoFar(): string {
    return persistedText(this.stores.chunks, this.runId) + this.#pending.join("");
  }

  /** Resolves `done` for everyone waiting on the run's end. */
  finish(final: Run): void {
    this.#resolveDone(final);
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    const stored = this.stores.chunks.append(this.runId, this.#flushedSeq + 1, this.#pending);
    if (stored.ok) {
      this.#flushedSeq = stored.value.lastSeq;
      this.#pending = [];
    }
  }
}
