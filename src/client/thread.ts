// A thread connection over the `agent.v1` WebSocket for Node 22+ and browsers: hello (and resume) after every
// reconnect, typed server frames, backoff that honours terminal close codes, token refresh through a callback, and the
// approvals and client tools a run waits for.
import type {
  ApprovalDecision,
  AttachmentRef,
  ClientFrame,
  FeedbackRating,
  ServerFrame,
  WireEntry,
} from "../shared/protocol";
import {
  type ApprovalRequest,
  PendingActions,
  runToolHandler,
  type ToolAnswer,
  type ToolCallRequest,
  type ToolHandler,
  toolResultFrame,
} from "./thread-actions";
import { downloadAttachment, lend, type UploadOptions, uploadAttachment } from "./thread-attachments";
import {
  afterClose,
  BEARER_PREFIX,
  type ConnectionStatus,
  type FrameOf,
  type HistoryFrame,
  type Listener,
  type LiveRun,
  PROTOCOL,
  PROTOCOL_VERSION,
  type ReadyFrame,
  randomId,
  type SendInput,
  type SocketConstructor,
  type SocketLike,
  type StatusListener,
  sendFrame,
  ThreadClosedError,
  type ThreadConnectionOptions,
  type ThreadLaunch,
} from "./thread-options";

export type { ApprovalRequest, ToolAnswer, ToolCallRequest, ToolHandler } from "./thread-actions";

const OPEN = 1;
const TOKEN_CLOSE = 4401;
const REFRESH_BEFORE_MS = 30_000;

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
  readonly #actions = new PendingActions();
  #toolHandler: ToolHandler | null = null;
  #approvalListeners = new Set<(request: ApprovalRequest) => void>();

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
  /** Approvals the thread's runs wait for now, as far as this connection has heard (docs/tools.md#approvals). */
  get pendingApprovals(): ApprovalRequest[] {
    return this.#actions.approvals;
  }
  /** Client tool calls waiting for an answer that this connection has not answered. */
  get pendingToolRequests(): ToolCallRequest[] {
    return this.#actions.tools;
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

  /**
   * Runs the thread's client tools (docs/tools.md#client-tools): each `tool_request` is answered with a `tool_result`
   * carrying what `handler` returned (`undefined` as `null`), or `error` with the message of what it threw. Calls
   * already pending are run at once. A call is run once per connection, however often a reconnect replays it. One
   * handler per connection (a second replaces the first); the returned function removes it.
   */
  onToolRequest(handler: ToolHandler): () => void {
    this.#toolHandler = handler;
    for (const request of this.#actions.tools) this.#runTool(request);
    return () => {
      if (this.#toolHandler === handler) this.#toolHandler = null;
    };
  }

  /**
   * Each approval a run waits for (a `requires_action` run's `actions`), once per connection: decide it with
   * `approve` or `deny`. Approvals already pending are announced at once.
   */
  onApprovalRequest(listener: (request: ApprovalRequest) => void): () => void {
    this.#approvalListeners.add(listener);
    for (const request of this.#actions.approvals) listener(request);
    return () => this.#approvalListeners.delete(listener);
  }

  /**
   * Decides a pending approval (a denial's `reason` reaches the model); a refusal (already decided, expired, not the
   * user's to decide) comes back as an `error` frame. `approve` and `deny` say the same.
   */
  decide(approvalId: string, decision: ApprovalDecision, reason?: string): void {
    this.#write({ type: "approval", approvalId, decision, ...(reason !== undefined ? { reason } : {}) });
  }
  approve(approvalId: string, reason?: string): void {
    this.decide(approvalId, "approve", reason);
  }
  deny(approvalId: string, reason?: string): void {
    this.decide(approvalId, "deny", reason);
  }

  /** Answers a client tool call by hand (without `onToolRequest`); false when this connection already answered it. */
  sendToolResult(toolCallId: string, answer: ToolAnswer): boolean {
    if (!this.#actions.takeCall(toolCallId)) return false;
    this.#write(toolResultFrame(toolCallId, answer));
    return true;
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

  /** A new user message (with files from `uploadAttachment`); returns its `clientMessageId`. */
  send(input: SendInput): string {
    const frame = sendFrame(input);
    this.#unacked.set(frame.clientMessageId, frame);
    this.#write(frame);
    return frame.clientMessageId;
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
  /** Uploads a file to this thread: its ref, to `send` (docs/client.md#attachments); `downloadAttachment` reads one. */
  async uploadAttachment(file: Blob, options: UploadOptions = {}): Promise<AttachmentRef> {
    return uploadAttachment(lend(await this.#freshLaunch(), this.#options), file, options);
  }
  async downloadAttachment(id: string, options: { signal?: AbortSignal } = {}): Promise<Blob> {
    return downloadAttachment(lend(await this.#freshLaunch(), this.#options), id, options);
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

  #runTool(request: ToolCallRequest): void {
    const handler = this.#toolHandler;
    if (handler === null || !this.#actions.take(request.runId, request.toolCallId)) return;
    void runToolHandler(handler, request).then((answer) => {
      if (this.#closedBy === null) this.#write(toolResultFrame(request.toolCallId, answer));
    });
  }

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
  /** The launch, renewed first (a promise, else at once) when its token is about to expire or two opens failed. */
  #freshLaunch(): ThreadLaunch | Promise<ThreadLaunch> {
    const refresh = this.#options.refreshLaunch;
    const expiresAt = this.#launch.expiresAt !== undefined ? Date.parse(this.#launch.expiresAt) : Number.NaN;
    if (refresh === undefined || !(expiresAt - Date.now() < REFRESH_BEFORE_MS || this.#failedOpens >= 2))
      return this.#launch;
    return refresh(this.#launch).then((launch) => {
      [this.#launch, this.#failedOpens] = [launch, 0];
      return launch;
    });
  }
  async #openWithFreshToken(): Promise<void> {
    const fresh = this.#freshLaunch();
    if (fresh instanceof Promise) await fresh;
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
        if (
          (frame.status === "running" || frame.status === "requires_action") &&
          this.#live?.runId !== frame.runId
        ) {
          this.#live = { runId: frame.runId, lastSeq: 0, text: "" };
        } else if (
          frame.status !== "running" &&
          frame.status !== "queued" &&
          // A run waiting for a decision or a client's answer goes on later: a reconnect resumes it.
          frame.status !== "requires_action" &&
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
    const fresh = this.#actions.observe(frame);
    for (const listener of this.#listeners) listener(frame);
    for (const request of fresh.approvals) for (const listener of this.#approvalListeners) listener(request);
    for (const request of fresh.tools) this.#runTool(request);
  }

  #closed(code: number, reason: string): void {
    if (this.#closedBy !== null) return;
    const next = afterClose(code, this.#attempt, this.#options);
    if (next === "stop") {
      this.#stop(new ThreadClosedError(code, reason), { code, reason });
      return;
    }
    if (next === "idle") {
      // The thread goes on; the next command (or `connect()`) opens a new socket and resumes.
      this.#attempt = 0;
      this.#setStatus("idle", { code, reason });
      return;
    }
    this.#setStatus("reconnecting", { code, reason });
    if (next.refresh) this.#failedOpens = 2; // refresh before the next attempt
    const delay = next.delayMs;
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
