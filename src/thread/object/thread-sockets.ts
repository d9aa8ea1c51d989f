// The object's open sockets: their remembered state, the ready peers a stream goes to, and answering a frame.
import type { Connection } from "agents";
import { LIMITS, type ServerFrame } from "../../shared/protocol";
import { readTombstone } from "../../storage/thread/thread-owner";
import type { RequestMeta, ThreadClaims } from "../contract";
import { encodeFrame, type Peer } from "../run";
import { type ConnectionState, connectionState } from "./connection-state";
import {
  type FrameBucket,
  laterBucket,
  readStoredBudget,
  spendFrame,
  writeStoredBudget,
} from "./frame-budget";
import { closeCode, type FrameOutcome } from "./frame-dispatch";
import type { WatchedSocket, WatchStamps } from "./socket-watch";

export class ThreadSockets {
  readonly #connections: () => Iterable<Connection>;
  readonly #now: () => number;
  /** Sockets that finished `hello`, rebuilt from the connections after a socket connects, gets ready or closes. */
  #readyCache: Peer[] | null = null;
  readonly #storage: DurableObjectStorage;
  /**
   * The frame budget of the thread's visitor, shared by all of its sockets (docs/protocol.md#limits): the gate admits
   * only the owner's claims, so one budget per thread is one per (thread, visitor). Rebuilt after a wake from the
   * sockets' own snapshots and the copy stored when a socket last closed, whichever was counted last.
   */
  #budget: FrameBucket | undefined;

  constructor(connections: () => Iterable<Connection>, now: () => number, storage: DurableObjectStorage) {
    this.#connections = connections;
    this.#now = now;
    this.#storage = storage;
  }

  opened(connection: Connection, claims: ThreadClaims, meta: RequestMeta | undefined): void {
    const state: ConnectionState = {
      claims,
      ready: false,
      malformed: 0,
      lastActive: this.#now(),
      ...(meta !== undefined ? { meta } : {}),
    };
    connection.setState(state);
    this.#readyCache = null;
  }

  /** A socket closed: the budget is stored, so the visitor's next socket (after a wake too) goes on from it. */
  closed(): void {
    this.#readyCache = null;
    this.#storeBudget();
  }

  /** The thread was erased: nothing of its sockets is kept or stored again. */
  forget(): void {
    this.#budget = undefined;
  }

  count(): number {
    return [...this.#connections()].length;
  }

  closeAll(code: number, reason: string): void {
    for (const connection of this.#connections()) connection.close(code, reason);
  }

  /** Each open socket's claims, and how to close it: what the socket watch checks. */
  *watched(): Iterable<WatchedSocket> {
    for (const [connection, state] of this.withState()) {
      yield { claims: state.claims, close: (code, reason) => connection.close(code, reason) };
    }
  }

  /**
   * Stamps every open socket's state with the watch's last mark and standing read: kept with the sockets through
   * hibernation, so a thread with idle sockets writes no row of its own to remember them.
   */
  stamp(stamps: WatchStamps): void {
    for (const [connection, state] of this.withState()) connection.setState({ ...state, ...stamps });
  }

  /** The latest stamps any open socket carries. */
  stamps(): WatchStamps {
    let markedAt: number | undefined;
    let standingAt: number | undefined;
    for (const [, state] of this.withState()) {
      if (state.markedAt !== undefined) markedAt = Math.max(markedAt ?? 0, state.markedAt);
      if (state.standingAt !== undefined) standingAt = Math.max(standingAt ?? 0, state.standingAt);
    }
    return {
      ...(markedAt !== undefined ? { markedAt } : {}),
      ...(standingAt !== undefined ? { standingAt } : {}),
    };
  }

  /** Each socket with its state; a socket without readable state is skipped. */
  *withState(): Iterable<[Connection, ConnectionState]> {
    for (const connection of this.#connections()) {
      const state = connectionState(connection);
      if (state !== null) yield [connection, state];
    }
  }

  /**
   * Counts one frame of any kind against the visitor's budget and as the socket's activity; the socket keeps a
   * snapshot of the budget in the same state write. A socket past the budget is closed 4429 and gets `null`.
   */
  spend(connection: Connection, state: ConnectionState): ConnectionState | null {
    const now = this.#now();
    this.#budget ??= this.#rebuilt(state);
    const frames = spendFrame(this.#budget, now);
    if (frames === null) {
      // Stored now rather than when the close arrives: a reconnect must find it spent, whatever happens meanwhile.
      this.#storeBudget();
      connection.close(closeCode("rate_limited"), "rate_limited");
      return null;
    }
    this.#budget = frames;
    const next: ConnectionState = { ...state, frames, lastActive: now };
    connection.setState(next);
    return next;
  }

  /**
   * An upload over HTTP (docs/api.md, "Attachments") spends one frame of the same visitor budget, sockets or not;
   * false when none is left. The budget is stored at once, as no socket close will store it.
   */
  spendRequest(): boolean {
    const now = this.#now();
    if (this.#budget === undefined) {
      let latest = readStoredBudget(this.#storage);
      for (const [, other] of this.withState()) latest = laterBucket(latest, other.frames);
      this.#budget = latest;
    }
    const frames = spendFrame(this.#budget, now);
    if (frames === null) return false;
    this.#budget = frames;
    this.#storeBudget();
    return true;
  }

  #storeBudget(): void {
    // An erased thread keeps nothing but its tombstone.
    if (this.#budget !== undefined && readTombstone(this.#storage) === null)
      writeStoredBudget(this.#storage, this.#budget);
  }

  /** The budget as last counted: the stored copy or an open socket's snapshot; none (full) for a first socket. */
  #rebuilt(state: ConnectionState): FrameBucket | undefined {
    let latest = laterBucket(readStoredBudget(this.#storage), state.frames);
    for (const [, other] of this.withState()) latest = laterBucket(latest, other.frames);
    return latest;
  }

  /** Sends a frame's answer, then closes or marks the socket ready as the outcome says. */
  deliver(connection: Connection, state: ConnectionState, outcome: FrameOutcome): void {
    const peer = this.#peer(connection);
    for (const frame of outcome.frames) peer.send(frame);
    if (outcome.close !== undefined) connection.close(outcome.close.code, outcome.close.reason);
    if (outcome.ready) {
      connection.setState({ ...state, ready: true, lastActive: this.#now() });
      this.#readyCache = null;
    }
  }

  /** An error frame for a bad frame; repeated abuse closes the socket. */
  malformed(connection: Connection, state: ConnectionState, message: string): void {
    const malformed = state.malformed + 1;
    if (malformed >= LIMITS.maxMalformedFrames) {
      connection.close(closeCode("bad_request"), "too many malformed frames");
      return;
    }
    connection.setState({ ...state, malformed });
    this.#peer(connection).send({ type: "error", code: "bad_request", message });
  }

  /**
   * Every frame of a stream goes to these peers; reading each socket's attachment per delta cost more than the
   * rest of the broadcast, so the list is kept until a socket connects, becomes ready or closes. A socket that
   * failed without a close event yet only makes `send` throw, which `#peer` absorbs.
   */
  readyPeers(): Iterable<Peer> {
    if (this.#readyCache === null) {
      const peers: Peer[] = [];
      for (const [connection, state] of this.withState()) if (state.ready) peers.push(this.#peer(connection));
      this.#readyCache = peers;
    }
    return this.#readyCache;
  }

  #peer(connection: Connection): Peer {
    return {
      id: connection.id,
      send: (frame: ServerFrame) => {
        try {
          connection.send(encodeFrame(frame));
        } catch {
          // The socket closed between the frame being produced and sent; the client resumes by seq.
        }
      },
    };
  }
}
