// A WebSocket stand-in for the typed client's connection: the test plays the server, frame by frame, and reads what
// the client sent. Every socket the client opens is kept, so a test can drop one and watch the reconnect.
import type { SocketConstructor, SocketLike, ThreadLaunch } from "../../src/client/index";
import type { ClientFrame, ServerFrame } from "../../src/shared/protocol";

export class FakeSocket implements SocketLike {
  readyState = 0;
  readonly protocol = "agent.v1";
  readonly sent: ClientFrame[] = [];
  onopen: ((event: unknown) => void) | null = null;
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onclose: ((event: { code: number; reason: string }) => void) | null = null;
  onerror: ((event: unknown) => void) | null = null;

  constructor(readonly url: string) {}

  send(data: string): void {
    const frame = JSON.parse(data) as ClientFrame;
    this.sent.push(frame);
    // The server answers a ping at once (after what it sent before, as a real socket would order them).
    if (frame.type === "ping") setTimeout(() => this.frame({ type: "pong" }), 0);
  }
  close(code = 1000, reason = ""): void {
    this.drop(code, reason);
  }

  /** The server accepts the socket: it opens (the client says hello) and answers `ready`. */
  accept(): void {
    this.readyState = 1;
    this.onopen?.({});
    this.frame({
      type: "ready",
      protocol: 1,
      threadId: "thr_1",
      leafId: null,
      agent: { name: "Agent", version: 1 },
      mode: "agent",
    });
  }
  frame(frame: ServerFrame): void {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  /** The network drops it (or the server closes it with `code`). */
  drop(code = 1006, reason = ""): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
  /** What the client sent of one frame type. */
  sentOf<T extends ClientFrame["type"]>(type: T): Extract<ClientFrame, { type: T }>[] {
    return this.sent.filter((f): f is Extract<ClientFrame, { type: T }> => f.type === type);
  }
}

/** A socket constructor for `ThreadConnection`'s `WebSocket` option, and every socket it made. */
export function fakeSockets(): { WebSocket: SocketConstructor; sockets: FakeSocket[]; last(): FakeSocket } {
  const sockets: FakeSocket[] = [];
  const WebSocket = class extends FakeSocket {
    constructor(url: string) {
      super(url);
      sockets.push(this);
    }
  } as unknown as SocketConstructor;
  return {
    WebSocket,
    sockets,
    last() {
      const socket = sockets.at(-1);
      if (socket === undefined) throw new Error("no socket was opened");
      return socket;
    },
  };
}

export const fakeLaunch: ThreadLaunch = {
  token: "token",
  threadId: "thr_1",
  websocketUrl: "ws://thread.test/v1/threads/thr_1/ws",
};
