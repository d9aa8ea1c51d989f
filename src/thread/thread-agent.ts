// The one generic thread Durable Object: lifecycle and dispatch only, hardened against client-driven SDK features.
import { Agent, type Connection, type ConnectionContext, type WSMessage } from "agents";
import { z } from "zod";
import type { ErrorCode } from "../shared/errors";
import { WS_CLOSE_CODE, WS_CLOSE_IDLE } from "../shared/errors";
import { type ClientFrame, clientFrameSchema, LIMITS, type ServerFrame } from "../shared/protocol";
import { D1DeploymentStore } from "../storage/d1/d1-deployment-store";
import { projectionBacklog } from "../storage/outbox";
import { readPin, type ThreadBinding } from "../storage/pin-store";
import { drainOutbox } from "../storage/projection-drain";
import { reconcileProjection } from "../storage/projection-reconcile";
import { exportThread } from "../storage/thread-export";
import { migrateThreadSchema } from "../storage/thread-schema";
import { bindThread, claimsMatch } from "./binding";
import { CLAIMS_HEADER, parseThreadClaims, type ThreadClaims, threadClaimsSchema } from "./claims";
import { encodeFrame, type Peer, toWireEntry } from "./frames";
import { objectError } from "./object-error";
import { handleThreadHttp } from "./thread-http";
import { ThreadRuntime } from "./thread-runtime";

const connectionStateSchema = z.object({
  claims: threadClaimsSchema,
  ready: z.boolean(),
  malformed: z.number().int(),
  lastActive: z.number(),
});
type ConnectionState = z.infer<typeof connectionStateSchema>;

const IDLE_SWEEP_SECONDS = 30;

const CLIENT_FRAME_TYPES = new Set(["hello", "send", "cancel", "regenerate", "edit", "history", "ping"]);

function onlyProtocolFrames(message: string | ArrayBuffer): string | ArrayBuffer {
  if (typeof message !== "string" || message.length > LIMITS.maxFrameBytes) return message;
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return message;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return message;
  const type = (value as { type?: unknown }).type;
  return typeof type === "string" && CLIENT_FRAME_TYPES.has(type) ? message : '{"type":"unsupported"}';
}

function closeCode(code: ErrorCode): number {
  return WS_CLOSE_CODE[code] ?? 4400;
}

export class ThreadAgent extends Agent<Env> {
  // Never tell a client the object's name or class.
  static override options = { sendIdentityOnConnect: false };

  /**
   * A turn arms the SDK's keep-alive heartbeat only once it has run this long. Idle eviction needs 70–140 s without
   * an event and the heartbeat's first beat comes after 30 s, so arming at 10 s protects a long stream exactly as
   * arming at once would, while a turn that ends sooner (nearly all of them) skips two alarm reschedules. A class
   * setting, so a test can shorten it.
   */
  static keepAliveAfterMs = 10_000;

  #runtime: ThreadRuntime | null = null;
  /** Sockets that finished `hello`, rebuilt from the connections after a socket connects, gets ready or closes. */
  #readyCache: Peer[] | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Synchronous and idempotent: every entry point below may read the thread's tables.
    migrateThreadSchema(ctx.storage);
  }

  // No SDK protocol frames (identity, state, MCP lists) reach clients.
  override shouldSendProtocolMessages(_connection: Connection, _ctx: ConnectionContext): boolean {
    return false;
  }

  // Clients may never write agent state.
  override shouldConnectionBeReadonly(_connection: Connection, _ctx: ConnectionContext): boolean {
    return true;
  }

  override validateStateChange(_next: unknown, source: Connection | "server"): void {
    if (source !== "server") throw new Error("Thread state is written by the server only.");
  }

  /**
   * After an eviction (the keep-alive alarm wakes the object): seal any reply that was cut off, and project what
   * D1 has yet to learn.
   */
  override async onStart(): Promise<void> {
    const runtime = await this.#storedRuntime();
    if (runtime !== null && projectionBacklog(this.ctx.storage) > 0) await this.drainOutbox();
  }

  /** Scheduled (and run after every turn): projects the outbox into D1; on failure retries with backoff. */
  async drainOutbox(): Promise<void> {
    const runtime = await this.#storedRuntime();
    if (runtime === null) return;
    const outcome = await drainOutbox({
      storage: this.ctx.storage,
      db: this.env.DB,
      binding: runtime.binding,
      now: Date.now,
    });
    if (outcome.retryInMs !== undefined) {
      await this.schedule(Math.max(1, Math.ceil(outcome.retryInMs / 1000)), "drainOutbox", undefined, {
        idempotent: true,
      });
    }
  }

  /** RPC (Worker only, for `GET /v1/sessions/:id/export`): the whole thread as JSON text (`threadExportSchema`). */
  async exportThread(): Promise<string | null> {
    const runtime = await this.#storedRuntime();
    return runtime === null ? null : JSON.stringify(exportThread(this.ctx.storage, runtime.binding));
  }

  /** RPC (Worker only, for `DELETE /v1/sessions/:id`): closes every socket and erases all of the object's storage. */
  async eraseThread(): Promise<void> {
    for (const connection of this.getConnections()) connection.close(closeCode("not_found"), "thread erased");
    this.#runtime = null;
    await this.destroy();
  }

  /** Scheduled daily: retention over the thread's storage, then a reconciliation of D1 with the thread. */
  async dailyMaintenance(): Promise<void> {
    const runtime = await this.#storedRuntime();
    if (runtime === null) return;
    await this.applyRetention();
    const { missing, failed } = await reconcileProjection({
      storage: this.ctx.storage,
      db: this.env.DB,
      binding: runtime.binding,
      now: Date.now,
    });
    if (missing > 0 || failed) await this.drainOutbox();
  }

  /** Retention over the thread's own storage (the pinned policy); also called by the retention cron job. */
  async applyRetention(now: number = Date.now()): Promise<{ deletedEntries: number }> {
    const runtime = await this.#storedRuntime();
    const policy = runtime?.binding.artifact.limits?.retention;
    if (runtime === null || policy === undefined) return { deletedEntries: 0 };
    const result = runtime.applyRetention(policy, now);
    await this.drainOutbox();
    return result;
  }

  /** The gate: verified claims from the Worker, the stored binding, and the socket cap, before anything else. */
  override async fetch(request: Request): Promise<Response> {
    const claims = parseThreadClaims(request.headers.get(CLAIMS_HEADER));
    if (claims === null) return objectError("unauthenticated", "Authentication required.");
    const runtime = await this.#runtimeFor(claims);
    if (!runtime.ok) return objectError(runtime.code, runtime.message);

    const url = new URL(request.url);
    if (url.pathname === "/ws") {
      if (request.headers.get("Upgrade")?.toLowerCase() !== "websocket") {
        return objectError("bad_request", "WebSocket upgrade required.");
      }
      const open = [...this.getConnections()].length;
      if (open >= runtime.value.limits.socketsPerThread) {
        return objectError("rate_limited", "Too many open connections to this thread.", { retryAfter: 10 });
      }
      return super.fetch(request);
    }
    if (url.pathname === "/http" || url.pathname.startsWith("/http/")) {
      return handleThreadHttp(runtime.value, request, url.pathname.slice("/http".length) || "/", claims);
    }
    return objectError("not_found", "Not found.");
  }

  /**
   * Owns the wire: only `agent.v1` frame types reach the SDK's dispatch. Anything else the SDK would act on (state
   * writes, RPC, MCP) is renamed so `onMessage` answers it as an invalid frame and no SDK frame answers a client.
   */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    await this.lifecycle.webSocketMessage(ws, onlyProtocolFrames(message));
  }

  override onRequest(_request: Request): Response {
    return objectError("not_found", "Not found.");
  }

  override onConnect(connection: Connection, ctx: ConnectionContext): void {
    const claims = parseThreadClaims(ctx.request.headers.get(CLAIMS_HEADER));
    if (claims === null) {
      connection.close(closeCode("unauthenticated"), "unauthenticated");
      return;
    }
    const state: ConnectionState = { claims, ready: false, malformed: 0, lastActive: Date.now() };
    connection.setState(state);
    this.#readyCache = null;
    void this.schedule(IDLE_SWEEP_SECONDS, "sweepIdleConnections", undefined, { idempotent: true });
  }

  override async onMessage(connection: Connection, message: WSMessage): Promise<void> {
    const state = this.#state(connection);
    if (state === null) {
      connection.close(closeCode("unauthenticated"), "unauthenticated");
      return;
    }
    if (typeof message !== "string") {
      this.#malformed(connection, state, "Frames must be JSON text.");
      return;
    }
    if (new TextEncoder().encode(message).byteLength > LIMITS.maxFrameBytes) {
      connection.close(WS_CLOSE_CODE.payload_too_large ?? 1009, "frame too large");
      return;
    }
    let frame: ClientFrame;
    try {
      const parsed = clientFrameSchema.safeParse(JSON.parse(message));
      if (!parsed.success) {
        this.#malformed(connection, state, "Unknown or invalid frame.");
        return;
      }
      frame = parsed.data;
    } catch {
      this.#malformed(connection, state, "Frames must be JSON.");
      return;
    }
    const runtime = await this.#runtimeFor(state.claims);
    if (!runtime.ok) {
      connection.close(closeCode(runtime.code), runtime.code);
      return;
    }
    connection.setState({ ...state, lastActive: Date.now() });
    this.#dispatch(runtime.value, connection, state, frame);
  }

  override onClose(_connection: Connection, _code: number, _reason: string, _wasClean: boolean): void {
    this.#readyCache = null;
  }

  /** Scheduled: closes sockets idle past the agent's limit (4408); the thread itself goes on. */
  async sweepIdleConnections(at?: unknown): Promise<void> {
    // The scheduler passes its (empty) payload here; tests pass a time.
    const now = typeof at === "number" ? at : Date.now();
    let open = 0;
    for (const connection of this.getConnections()) {
      const state = this.#state(connection);
      if (state === null) continue;
      const runtime = await this.#runtimeFor(state.claims);
      const idleSeconds = runtime.ok ? runtime.value.limits.idleTimeoutSeconds : LIMITS.idleTimeoutSeconds;
      if (now - state.lastActive > idleSeconds * 1000) connection.close(WS_CLOSE_IDLE, "idle");
      else open += 1;
    }
    // Not idempotent: this run's own schedule row still exists while it executes.
    if (open > 0) await this.schedule(IDLE_SWEEP_SECONDS, "sweepIdleConnections");
  }

  #dispatch(
    runtime: ThreadRuntime,
    connection: Connection,
    state: ConnectionState,
    frame: ClientFrame,
  ): void {
    const peer = this.#peer(connection);
    switch (frame.type) {
      case "hello": {
        peer.send(runtime.readyFrame());
        const live = runtime.liveRunId();
        const resume = frame.resume ?? (live !== null ? { runId: live, afterSeq: 0 } : undefined);
        if (resume !== undefined)
          for (const f of runtime.catchUp(resume.runId, resume.afterSeq)) peer.send(f);
        connection.setState({ ...state, ready: true, lastActive: Date.now() });
        this.#readyCache = null;
        return;
      }
      case "ping":
        peer.send({ type: "pong" });
        return;
      case "send":
      case "edit":
      case "regenerate": {
        const subject = state.claims.sub;
        const accepted = runtime.accept(
          frame.type === "send"
            ? {
                kind: "send",
                subject,
                clientMessageId: frame.clientMessageId,
                text: frame.text,
                ...(frame.parentId !== undefined ? { parentId: frame.parentId } : {}),
              }
            : frame.type === "edit"
              ? {
                  kind: "edit",
                  subject,
                  entryId: frame.entryId,
                  clientMessageId: frame.clientMessageId,
                  text: frame.text,
                }
              : { kind: "regenerate", subject, entryId: frame.entryId },
        );
        if (!accepted.ok) {
          if (accepted.code === "rate_limited") {
            connection.close(closeCode("rate_limited"), "rate_limited");
            return;
          }
          peer.send({ type: "error", code: accepted.code, message: accepted.message });
          return;
        }
        if (!accepted.value.created) {
          // A retried send: tell this peer where its message already is; start nothing.
          peer.send({ type: "entry", entry: toWireEntry(accepted.value.userEntry) });
          for (const f of runtime.catchUp(accepted.value.run.id, 0)) peer.send(f);
        }
        return;
      }
      case "cancel": {
        const cancelled = runtime.cancel(frame.runId);
        if (!cancelled.ok) peer.send({ type: "error", code: cancelled.code, message: cancelled.message });
        return;
      }
      case "history": {
        const leafId = frame.leafId ?? runtime.leafId();
        if (leafId === null) {
          peer.send({ type: "history", items: [] });
          return;
        }
        const page = runtime.entries.branch(leafId, {
          ...(frame.cursor !== undefined ? { cursor: frame.cursor } : {}),
          limit: frame.limit ?? 50,
        });
        if (!page.ok) {
          peer.send({ type: "error", code: page.code, message: page.message });
          return;
        }
        peer.send({
          type: "history",
          items: page.value.items.map(toWireEntry),
          ...(page.value.nextCursor !== undefined ? { nextCursor: page.value.nextCursor } : {}),
        });
        return;
      }
    }
  }

  #malformed(connection: Connection, state: ConnectionState, message: string): void {
    const malformed = state.malformed + 1;
    if (malformed >= LIMITS.maxMalformedFrames) {
      connection.close(closeCode("bad_request"), "too many malformed frames");
      return;
    }
    connection.setState({ ...state, malformed });
    this.#peer(connection).send({ type: "error", code: "bad_request", message });
  }

  #state(connection: Connection): ConnectionState | null {
    const parsed = connectionStateSchema.safeParse(connection.state);
    return parsed.success ? parsed.data : null;
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

  /**
   * Every frame of a stream goes to these peers; reading each socket's attachment per delta cost more than the
   * rest of the broadcast, so the list is kept until a socket connects, becomes ready or closes. A socket that
   * failed without a close event yet only makes `send` throw, which `#peer` absorbs.
   */
  #readyPeers(): Iterable<Peer> {
    if (this.#readyCache === null) {
      const peers: Peer[] = [];
      for (const connection of this.getConnections()) {
        if (this.#state(connection)?.ready) peers.push(this.#peer(connection));
      }
      this.#readyCache = peers;
    }
    return this.#readyCache;
  }

  /** `keepAliveWhile`, armed only for a turn still running after `keepAliveAfterMs`. */
  async #keepAliveIfLong<T>(fn: () => Promise<T>): Promise<T> {
    let settled = false;
    let dispose: (() => void) | null = null;
    const timer = setTimeout(() => {
      void this.keepAlive().then((release) => {
        if (settled) release();
        else dispose = release;
      });
    }, ThreadAgent.keepAliveAfterMs);
    try {
      return await fn();
    } finally {
      settled = true;
      clearTimeout(timer);
      (dispose as (() => void) | null)?.();
    }
  }

  /** The runtime of an already-bound thread, created from its stored pin; null before the first binding. */
  async #storedRuntime(): Promise<ThreadRuntime | null> {
    if (this.#runtime !== null) return this.#runtime;
    const stored = await readPin(this.ctx.storage);
    if (!stored.ok || stored.binding === null) return null;
    return this.#install(stored.binding);
  }

  #install(binding: ThreadBinding): ThreadRuntime {
    if (this.#runtime === null) {
      this.#runtime = new ThreadRuntime({
        storage: this.ctx.storage,
        env: this.env,
        binding,
        now: Date.now,
        peers: () => this.#readyPeers(),
        keepAliveWhile: (fn) => this.#keepAliveIfLong(fn),
        afterTurn: () => this.drainOutbox(),
      });
      this.#runtime.recoverInterruptedRuns();
      // Idempotent: one daily schedule per thread, however often the object wakes.
      void this.scheduleEvery(86_400, "dailyMaintenance");
    }
    return this.#runtime;
  }

  async #runtimeFor(claims: ThreadClaims) {
    await this.#storedRuntime();
    if (this.#runtime !== null) {
      return claimsMatch(this.#runtime.binding, claims)
        ? { ok: true as const, value: this.#runtime }
        : {
            ok: false as const,
            code: "forbidden" as const,
            message: "This thread belongs to another agent or tenant.",
          };
    }
    const bound = await bindThread(this.ctx.storage, claims, new D1DeploymentStore(this.env.DB), Date.now);
    if (!bound.ok) return bound;
    return { ok: true as const, value: this.#install(bound.value) };
  }
}
