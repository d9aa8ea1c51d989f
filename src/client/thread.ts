// A thread connection over the `agent.v1` WebSocket for Node 22+ and browsers: hello (and resume) after every
// reconnect, typed server frames, backoff that honours terminal close codes, and token refresh through a callback.
import type {
  ClientFrame,
  FeedbackRating,
  MultitaskStrategy,
  ServerFrame,
  WireEntry,
} from "../shared/protocol";

const PROTOCOL = "agent.v1";
const PROTOCOL_VERSION = 1;
const BEARER_PREFIX = "bearer.";
const OPEN = 1;

/** What `POST /v1/agent-sessions` answers that a connection needs (the whole response fits). */
export interface ThreadLaunch {
  token: string;
  threadId: string;
  websocketUrl: string;
  expiresAt?: string;
}

/** The part of a WebSocket a connection uses: the browser's, Node 22's global one, or the `ws` package's. */
export interface SocketLike {
  readonly readyState: number;
  readonly protocol: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

/** Node's (undici) WebSocket also takes `{protocols, headers}`; browsers only a protocol list. */
export type SocketConstructor = new (
  url: string,
  protocols: string[] | { protocols: string[]; headers: Record<string, string> },
) => SocketLike;

export interface ThreadConnectionOptions {
  launch: ThreadLaunch;
  /**
   * A new launch for the same thread (your backend's `POST /v1/agent-sessions` with the thread id). Called when the
   * server closes with 4401, when the token is about to expire before a reconnect, and after two reconnects in a row
   * failed before the socket opened (a refused upgrade is invisible to a browser).
   */
  refreshLaunch?: (current: ThreadLaunch) => Promise<ThreadLaunch>;
  /** Defaults to `globalThis.WebSocket` (browsers, Node 22+). */
  WebSocket?: SocketConstructor;
  /** Node only: the `Origin` header a public agent checks (a browser always sends its page's own). */
  origin?: string;
  /** Reconnect delays: `initialMs` doubling up to `maxMs`, with jitter. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** A run to resume on the first `hello` (kept from an earlier page, with the last delta's `seq` it showed). */
  resume?: { runId: string; afterSeq: number };
}

export type ConnectionStatus = "idle" | "connecting" | "open" | "reconnecting" | "closed";

export type FrameOf<T extends ServerFrame["type"]> = Extract<ServerFrame, { type: T }>;
export type ReadyFrame = FrameOf<"ready">;
export type HistoryFrame = FrameOf<"history">;

/** The run being streamed: its id, the last delta's `seq` and the text so far. */
export interface LiveRun {
  runId: string;
  lastSeq: number;
  text: string;
}

/** Why a connection stopped for good: a close code the client must not retry (docs/protocol.md, Close codes). */
export class ThreadClosedError extends Error {
  constructor(
    readonly code: number,
    reason: string,
  ) {
    super(`The thread connection closed (${code}${reason ? `: ${reason}` : ""}).`);
    this.name = "ThreadClosedError";
  }
}

/** Close codes after which reconnecting cannot help: a client bug, another tenant's thread, not found. */
const TERMINAL_CLOSES = new Set([1000, 4400, 4403, 4404]);
const IDLE_CLOSE = 4408;
const TOKEN_CLOSE = 4401;
const RATE_CLOSE = 4429;
const REFRESH_BEFORE_MS = 30_000;

function randomId(): string {
  return `cm_${crypto.randomUUID().replaceAll("-", "")}`;
}

type Listener = (frame: ServerFrame) => void;
type StatusListener = (status: ConnectionStatus, close?: { code: number; reason: string }) => void;

export class ThreadConnection {
  #launch: ThreadLaunch;
  readonly #options: ThreadConnectionOptions;
  readonly #Socket: SocketConstructor;
  #socket: SocketLike | null = null;
  #status: ConnectionStatus = "idle";
  #ready: ReadyFrame | null = null;
  #live: LiveRun | null = null;
  #resume: { runId: string; afterSeq: number } | undefined;
  #attempt = 0;
  #failedOpens = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #closedBy: ThreadClosedError | null = null;
  /** Frames waiting for the socket to be ready, sent in order after `ready`. */
  #outbox: ClientFrame[] = [];
  /** Sends and edits not yet acknowledged by their user entry: sent again after a reconnect (they are idempotent). */
  #unacked = new Map<string, ClientFrame>();
  #readyWaiters: { resolve: (f: ReadyFrame) => void; reject: (e: Error) => void }[] = [];
  #historyWaiters: { resolve: (f: HistoryFrame) => void; reject: (e: Error) => void }[] = [];
  #pongWaiters: (() => void)[] = [];
  #listeners = new Set<Listener>();
  #statusListeners = new Set<StatusListener>();

  constructor(options: ThreadConnectionOptions) {
    this.#options = options;
    this.#launch = options.launch;
    this.#resume = options.resume;
    const Socket =
      options.WebSocket ?? (globalThis as unknown as { WebSocket?: SocketConstructor }).WebSocket;
    if (Socket === undefined) {
      throw new TypeError("No WebSocket: pass the `WebSocket` option (Node before 22 has no global one).");
    }
    this.#Socket = Socket;
  }

  get threadId(): string {
    return this.#launch.threadId;
  }
  get status(): ConnectionStatus {
    return this.#status;
  }
  /** The last `ready` frame (agent, presentation, mode, leaf), or null before the first. */
  get ready(): ReadyFrame | null {
    return this.#ready;
  }
  /** The run streaming now, as far as this connection has heard. */
  get liveRun(): LiveRun | null {
    return this.#live === null ? null : { ...this.#live };
  }
  /** The underlying socket (null while reconnecting): for diagnostics and tests. */
  get socket(): SocketLike | null {
    return this.#socket;
  }

  /** Every server frame, deltas without duplicates (a delta already seen before a reconnect is dropped). */
  on<T extends ServerFrame["type"]>(type: T, listener: (frame: FrameOf<T>) => void): () => void;
  on(type: "*", listener: Listener): () => void;
  on(type: string, listener: (frame: never) => void): () => void {
    const wrapped: Listener = (frame) => {
      if (type === "*" || frame.type === type) (listener as Listener)(frame);
    };
    this.#listeners.add(wrapped);
    return () => this.#listeners.delete(wrapped);
  }

  onStatus(listener: StatusListener): () => void {
    this.#statusListeners.add(listener);
    return () => this.#statusListeners.delete(listener);
  }

  /** Opens the socket (if needed) and resolves with `ready`; rejects when the connection closed for good. */
  connect(): Promise<ReadyFrame> {
    if (this.#closedBy !== null) return Promise.reject(this.#closedBy);
    if (this.#status === "open" && this.#ready !== null) return Promise.resolve(this.#ready);
    const waiting = new Promise<ReadyFrame>((resolve, reject) =>
      this.#readyWaiters.push({ resolve, reject }),
    );
    if (this.#status === "idle") this.#open();
    return waiting;
  }

  /** Resolves once every frame the server sent before now has been received (a `ping` round trip). */
  async sync(): Promise<void> {
    await this.connect();
    const pong = new Promise<void>((resolve) => this.#pongWaiters.push(resolve));
    this.#write({ type: "ping" });
    await pong;
  }

  /** A new user message; returns its `clientMessageId` (the one given, or a new one). */
  send(input: {
    text: string;
    parentId?: string;
    multitask?: MultitaskStrategy;
    clientMessageId?: string;
  }): string {
    const clientMessageId = input.clientMessageId ?? randomId();
    const frame: ClientFrame = {
      type: "send",
      clientMessageId,
      text: input.text,
      ...(input.parentId !== undefined ? { parentId: input.parentId } : {}),
      ...(input.multitask !== undefined ? { multitask: input.multitask } : {}),
    };
    this.#unacked.set(clientMessageId, frame);
    this.#write(frame);
    return clientMessageId;
  }

  /** A new user message beside the user entry `entryId` (a fork); returns its `clientMessageId`. */
  edit(entryId: string, text: string, clientMessageId = randomId()): string {
    const frame: ClientFrame = { type: "edit", entryId, text, clientMessageId };
    this.#unacked.set(clientMessageId, frame);
    this.#write(frame);
    return clientMessageId;
  }

  /** A new reply to the user message of `entryId` (an assistant or user entry): a sibling branch. */
  regenerate(entryId: string): void {
    this.#write({ type: "regenerate", entryId });
  }

  cancel(runId: string): void {
    this.#write({ type: "cancel", runId });
  }

  feedback(entryId: string, rating: FeedbackRating | null, comment?: string): void {
    this.#write({ type: "feedback", entryId, rating, ...(comment !== undefined ? { comment } : {}) });
  }

  /** One page of a branch, root → leaf (default: the current leaf). */
  history(query: { leafId?: string; cursor?: string; limit?: number } = {}): Promise<HistoryFrame> {
    const answer = new Promise<HistoryFrame>((resolve, reject) =>
      this.#historyWaiters.push({ resolve, reject }),
    );
    this.#write({ type: "history", ...query });
    return answer;
  }

  /** Every entry of a branch, root → leaf, following the cursor. */
  async branch(leafId?: string): Promise<WireEntry[]> {
    const items: WireEntry[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.history({
        limit: 200,
        ...(leafId !== undefined ? { leafId } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
      });
      items.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return items;
  }

  /** Closes for good (code 1000); pending answers reject. */
  close(): void {
    this.#stop(new ThreadClosedError(1000, "closed by the client"));
    const socket = this.#socket;
    this.#socket = null;
    if (socket !== null) {
      socket.onclose = null;
      socket.close(1000, "bye");
    }
  }

  // ---- internals ----

  #write(frame: ClientFrame): void {
    if (this.#closedBy !== null) throw this.#closedBy;
    if (this.#status === "open" && this.#socket?.readyState === OPEN) {
      this.#socket.send(JSON.stringify(frame));
      return;
    }
    if (frame.type !== "send" && frame.type !== "edit") this.#outbox.push(frame);
    if (this.#status === "idle") this.#open();
  }

  #setStatus(status: ConnectionStatus, close?: { code: number; reason: string }): void {
    this.#status = status;
    for (const listener of this.#statusListeners) listener(status, close);
  }

  #open(): void {
    this.#setStatus(this.#attempt === 0 ? "connecting" : "reconnecting");
    void this.#openWithFreshToken().catch((error: unknown) => {
      this.#stop(
        new ThreadClosedError(
          TOKEN_CLOSE,
          error instanceof Error ? error.message : "refreshing the launch failed",
        ),
      );
    });
  }

  async #openWithFreshToken(): Promise<void> {
    const refresh = this.#options.refreshLaunch;
    const expiresAt = this.#launch.expiresAt !== undefined ? Date.parse(this.#launch.expiresAt) : Number.NaN;
    if (refresh !== undefined && (expiresAt - Date.now() < REFRESH_BEFORE_MS || this.#failedOpens >= 2)) {
      this.#launch = await refresh(this.#launch);
      this.#failedOpens = 0;
    }
    if (this.#closedBy !== null) return;
    const protocols = [PROTOCOL, BEARER_PREFIX + this.#launch.token];
    const origin = this.#options.origin;
    const socket = new this.#Socket(
      this.#launch.websocketUrl,
      origin !== undefined ? { protocols, headers: { Origin: origin } } : protocols,
    );
    this.#socket = socket;
    let opened = false;
    socket.onopen = () => {
      opened = true;
      const resume =
        this.#live !== null ? { runId: this.#live.runId, afterSeq: this.#live.lastSeq } : this.#resume;
      this.#resume = undefined;
      socket.send(
        JSON.stringify({
          type: "hello",
          protocol: PROTOCOL_VERSION,
          ...(resume !== undefined ? { resume } : {}),
        }),
      );
    };
    socket.onmessage = (event) => {
      if (this.#socket !== socket) return;
      let frame: ServerFrame;
      try {
        frame = JSON.parse(String(event.data)) as ServerFrame;
      } catch {
        return;
      }
      this.#receive(frame, socket);
    };
    socket.onerror = () => {};
    socket.onclose = (event) => {
      if (this.#socket !== socket) return;
      this.#socket = null;
      if (!opened) this.#failedOpens += 1;
      this.#closed(event.code, event.reason);
    };
  }

  #receive(frame: ServerFrame, socket: SocketLike): void {
    switch (frame.type) {
      case "ready":
        this.#ready = frame;
        this.#attempt = 0;
        this.#failedOpens = 0;
        this.#setStatus("open");
        for (const pending of this.#unacked.values()) socket.send(JSON.stringify(pending));
        for (const pending of this.#outbox.splice(0)) socket.send(JSON.stringify(pending));
        for (const waiter of this.#readyWaiters.splice(0)) waiter.resolve(frame);
        break;
      case "run":
        if (frame.status === "running" && this.#live?.runId !== frame.runId) {
          this.#live = { runId: frame.runId, lastSeq: 0, text: "" };
        } else if (
          frame.status !== "running" &&
          frame.status !== "queued" &&
          this.#live?.runId === frame.runId
        ) {
          this.#live = null;
        }
        break;
      case "delta": {
        if (this.#live?.runId !== frame.runId) this.#live = { runId: frame.runId, lastSeq: 0, text: "" };
        const live = this.#live;
        if (frame.seq <= live.lastSeq) return; // already seen before a reconnect
        live.lastSeq = frame.seq;
        live.text += frame.text;
        break;
      }
      case "entry":
        if (frame.entry.clientMessageId !== undefined) this.#unacked.delete(frame.entry.clientMessageId);
        break;
      case "history":
        this.#historyWaiters.shift()?.resolve(frame);
        break;
      case "pong":
        this.#pongWaiters.shift()?.();
        break;
      case "error": {
        // Frames are answered in order: a refusal answers the oldest turn still waiting, else a history request.
        const oldest = this.#unacked.keys().next();
        if (!oldest.done) this.#unacked.delete(oldest.value);
        else if (frame.code !== "quota_exceeded")
          this.#historyWaiters.shift()?.reject(new Error(frame.message));
        break;
      }
      default:
        break;
    }
    for (const listener of this.#listeners) listener(frame);
  }

  #closed(code: number, reason: string): void {
    if (this.#closedBy !== null) return;
    if (TERMINAL_CLOSES.has(code)) {
      this.#stop(new ThreadClosedError(code, reason), { code, reason });
      return;
    }
    if (code === IDLE_CLOSE) {
      // The thread goes on; the next command (or `connect()`) opens a new socket and resumes.
      this.#attempt = 0;
      this.#setStatus("idle", { code, reason });
      return;
    }
    this.#setStatus("reconnecting", { code, reason });
    if (code === TOKEN_CLOSE) {
      if (this.#options.refreshLaunch === undefined) {
        this.#stop(new ThreadClosedError(code, reason), { code, reason });
        return;
      }
      this.#failedOpens = 2; // refresh before the next attempt
    }
    const { initialMs = 250, maxMs = 10_000 } = this.#options.backoff ?? {};
    const base = Math.min(maxMs, initialMs * 2 ** this.#attempt);
    const delay = (code === RATE_CLOSE ? Math.max(base, 5_000) : base) * (0.8 + Math.random() * 0.4);
    this.#attempt += 1;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      if (this.#closedBy === null) this.#open();
    }, delay);
  }

  #stop(error: ThreadClosedError, close?: { code: number; reason: string }): void {
    if (this.#closedBy !== null) return;
    this.#closedBy = error;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#setStatus("closed", close ?? { code: error.code, reason: error.message });
    for (const waiter of this.#readyWaiters.splice(0)) waiter.reject(error);
    for (const waiter of this.#historyWaiters.splice(0)) waiter.reject(error);
    for (const wake of this.#pongWaiters.splice(0)) wake();
  }
}
