// The object's open sockets: their remembered state, the ready peers a stream goes to, and answering a frame.
import type { Connection } from "agents";
import { LIMITS, type ServerFrame } from "../shared/protocol";
import type { ThreadClaims } from "./claims";
import { type ConnectionState, connectionState } from "./connection-state";
import { spendFrame } from "./frame-budget";
import { closeCode, type FrameOutcome } from "./frame-dispatch";
import { encodeFrame, type Peer } from "./frames";
import type { RequestMeta } from "./request-meta";

export class ThreadSockets {
  readonly #connections: () => Iterable<Connection>;
  readonly #now: () => number;
  /** Sockets that finished `hello`, rebuilt from the connections after a socket connects, gets ready or closes. */
  #readyCache: Peer[] | null = null;

  constructor(connections: () => Iterable<Connection>, now: () => number) {
    this.#connections = connections;
    this.#now = now;
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

  closed(): void {
    this.#readyCache = null;
  }

  count(): number {
    return [...this.#connections()].length;
  }

  closeAll(code: number, reason: string): void {
    for (const connection of this.#connections()) connection.close(code, reason);
  }

  /** Each socket with its state; a socket without readable state is skipped. */
  *withState(): Iterable<[Connection, ConnectionState]> {
    for (const connection of this.#connections()) {
      const state = connectionState(connection);
      if (state !== null) yield [connection, state];
    }
  }

  /**
   * Counts one frame of any kind against the socket's budget and as activity, in one state write; a socket past its
   * budget is closed 4429 and gets `null`.
   */
  spend(connection: Connection, state: ConnectionState): ConnectionState | null {
    const now = this.#now();
    const frames = spendFrame(state.frames, now);
    if (frames === null) {
      connection.close(closeCode("rate_limited"), "rate_limited");
      return null;
    }
    const next: ConnectionState = { ...state, frames, lastActive: now };
    connection.setState(next);
    return next;
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
