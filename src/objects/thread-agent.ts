// The one generic thread Durable Object: lifecycle, the gate and dispatch, hardened against client-driven SDK features.
import { Agent, type Connection, type ConnectionContext, type WSMessage } from "agents";
import { tenantRunQuota } from "../auth/run-quota";
import { zeroRetentionIdleMinutes } from "../control/artifact";
import { digestOf } from "../control/canonical-json";
import { fail, ok, type Result, type RpcResult, refusal } from "../errors";
import { eventBody, MAX_EVENTS_PER_ACCEPT, tenantEvents } from "../events/tenant-events";
import { WS_CLOSE_CODE, WS_CLOSE_IDLE } from "../shared/errors";
import type { WireEntry } from "../shared/protocol";
import { LIMITS } from "../shared/protocol";
import {
  type HumanMessageRequest,
  handoffRequest,
  humanMessageRequest,
  upgradeRequest,
} from "../shared/sessions-api";
import { D1DeploymentStore } from "../storage/d1/d1-deployment-store";
import { shorterAge, threadRetentionOverrides } from "../storage/d1/session-retention";
import { projectionReadDb, projectionTargets } from "../storage/d1/shards";
import { clearThreadContext } from "../storage/d1/thread-registry";
import { projectionBacklog } from "../storage/projection/outbox";
import { backoffMs, drainOutbox } from "../storage/projection/projection-drain";
import { ProjectionWindow, projectionWindowMs } from "../storage/projection/projection-lane";
import { reconcileProjection } from "../storage/projection/projection-reconcile";
import {
  adoptThreadContext,
  readThreadContext,
  type ThreadContext,
  threadContextSchema,
} from "../storage/thread/context-store";
import type { ThreadBinding } from "../storage/thread/pin-store";
import {
  forwardedEventSeq,
  markEventsForwarded,
  threadEventsAfter,
  unforwardedEventCount,
} from "../storage/thread/thread-events";
import { exportThreadStream } from "../storage/thread/thread-export";
import { deleteMeta, readMetaInteger, writeMeta } from "../storage/thread/thread-meta";
import { writeTombstone } from "../storage/thread/thread-owner";
import { migrateThreadSchema } from "../storage/thread/thread-schema";
import { purgeIdleText } from "../storage/thread/zero-retention";
import {
  CLAIMS_HEADER,
  type EntriesPage,
  type EntriesQuery,
  type FeedbackBody,
  type FeedbackReply,
  feedbackBodySchema,
  type HandoffView,
  type MessageReply,
  type PostMessage,
  type PreviewPin,
  parseRequestMeta,
  parseThreadClaims,
  postMessageSchema,
  REQUEST_META_HEADER,
  type RunInputView,
  readRequestMeta,
  refusalResponse,
  type ThreadAddress,
  type ThreadClaims,
  type ThreadInfo,
  type ThreadObject,
  type UpgradeReply,
} from "../thread/contract";
import {
  cancelRun,
  entriesPage,
  sendRequest,
  settledReply,
  ThreadRuntime,
  threadInfo,
} from "../thread/conversation";
import {
  closeCode,
  connectionState,
  dispatchFrame,
  dispatchTurn,
  dispatchUpgrade,
  type FrameOutcome,
  frameTooLarge,
  isTurnFrame,
  keepAliveIfLong,
  onlyProtocolFrames,
  parseClientMessage,
  refreshedToken,
  SocketWatch,
  streamingFetch,
  THREAD_SETTINGS,
  ThreadGate,
  type ThreadSettings,
  ThreadSockets,
} from "../thread/object";
import { rebuildRunInput, toWireEntry } from "../thread/run";

const FORWARD_FAILURES_KEY = "events_forward_failures";

/** Zero retention: an event's free text (a feedback comment, a handoff reason) never leaves the thread. */
function withoutText(data: Record<string, unknown>): Record<string, unknown> {
  const { comment: _comment, reason: _reason, ...rest } = data;
  return rest;
}

const unauthenticated = () => fail("unauthenticated", "Authentication required.");

/**
 * Public members are the API: the Worker's RPC calls (each checks the caller's claims or address against the
 * stored binding first), the SDK's hooks, and the scheduler's callbacks. Everything else is `#private`.
 */
/** The close code a runtime reports for a close frame that carried no status. */
const NO_STATUS_RECEIVED = 1005;

export class ThreadAgent extends Agent<Env> implements ThreadObject {
  // Never tell a client the object's name or class.
  static override options = { sendIdentityOnConnect: false };

  readonly #settings: Readonly<ThreadSettings>;
  readonly #sockets: ThreadSockets;
  readonly #gate: ThreadGate;
  readonly #watch: SocketWatch;
  readonly #projection: ProjectionWindow;

  /** The runtime constructs with `(ctx, env)`; only a test-only subclass passes other settings. */
  constructor(ctx: DurableObjectState, env: Env, settings: Readonly<ThreadSettings> = THREAD_SETTINGS) {
    super(ctx, env);
    this.#settings = settings;
    this.#sockets = new ThreadSockets(() => this.getConnections(), settings.now, ctx.storage);
    this.#gate = new ThreadGate({
      storage: ctx.storage,
      db: env.DB,
      store: () => new D1DeploymentStore(env.DB),
      now: settings.now,
      unknownThread: () => this.ctx.waitUntil(this.#vanish()),
      start: (binding) => this.#start(binding),
    });
    this.#watch = new SocketWatch({
      storage: ctx.storage,
      db: env.DB,
      env,
      now: settings.now,
      sockets: () => this.#sockets.watched(),
      closeAll: (code, reason) => this.#sockets.closeAll(code, reason),
    });
    this.#projection = new ProjectionWindow({
      windowMs: () => settings.projectionWindowMs ?? projectionWindowMs(env.PROJECTION_WINDOW_MS),
      now: settings.now,
      after: settings.after,
      drain: () => this.drainOutbox(),
      // Whole seconds (the scheduler's unit), a second past the window: only an evicted object needs it.
      arm: async (ms) => {
        await this.schedule(Math.ceil(ms / 1000) + 1, "projectionDue", undefined, { idempotent: true });
      },
    });
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
    const runtime = await this.#gate.stored();
    if (runtime !== null && projectionBacklog(this.ctx.storage) > 0) await this.drainOutbox();
    else if (runtime !== null && unforwardedEventCount(this.ctx.storage) > 0) await this.forwardEvents();
  }

  /** RPC (`GET /v1/threads/:threadId`): the pinned agent and the thread's times and leaf. */
  async threadInfo(claims: ThreadClaims): Promise<RpcResult<ThreadInfo>> {
    return this.#launch(claims, (runtime) => ok(threadInfo(runtime)));
  }

  /** RPC (`GET /v1/threads/:threadId/entries`): a page of one branch. */
  async threadEntries(claims: ThreadClaims, query: EntriesQuery): Promise<RpcResult<EntriesPage>> {
    return this.#launch(claims, (runtime) => entriesPage(runtime, query));
  }

  /**
   * RPC (`POST …/messages`, JSON): the turn once settled; `created` is false for a retried clientMessageId. `meta`
   * names the Worker request (`RequestMeta`).
   */
  async postMessage(
    claims: ThreadClaims,
    message: PostMessage,
    meta?: unknown,
  ): Promise<RpcResult<{ created: boolean; reply: MessageReply }>> {
    return this.#launch(claims, async (runtime) => {
      // Parsed by the Worker already; parsed again because this is the object's own boundary.
      const parsed = postMessageSchema.safeParse(message);
      if (!parsed.success) return fail("bad_request", "Request body is invalid.");
      const accepted = await runtime.submit(sendRequest(claims.sub, parsed.data, readRequestMeta(meta)));
      return accepted.ok ? ok(await settledReply(runtime, accepted.value)) : accepted;
    });
  }

  /** RPC (`POST …/runs/:runId/cancel`). */
  async cancelRun(
    claims: ThreadClaims,
    runId: string,
  ): Promise<RpcResult<{ runId: string; status: "cancelling" }>> {
    return this.#launch(claims, (runtime) => cancelRun(runtime, runId));
  }

  /** RPC (`POST …/entries/:entryId/feedback`): the subject's rating of an assistant entry, latest wins. */
  async giveFeedback(
    claims: ThreadClaims,
    entryId: string,
    body: FeedbackBody,
  ): Promise<RpcResult<FeedbackReply>> {
    return this.#launch(claims, (runtime) => {
      // Parsed by the Worker already; parsed again because this is the object's own boundary.
      const parsed = feedbackBodySchema.safeParse(body);
      if (!parsed.success || typeof entryId !== "string")
        return fail("bad_request", "Request body is invalid.");
      return runtime.giveFeedback(claims.sub, {
        entryId,
        rating: parsed.data.rating,
        ...(parsed.data.comment !== undefined ? { comment: parsed.data.comment } : {}),
      });
    });
  }

  /**
   * RPC (`POST /v1/sessions/:id/handoff`): starts or ends a handoff; null for a thread never bound. Projected before
   * it answers, so the tenant's session list shows the new mode.
   */
  async changeHandoff(address: ThreadAddress, request: unknown): Promise<RpcResult<HandoffView | null>> {
    const runtime = await this.#gate.addressed(address);
    if (!runtime.ok) return runtime;
    if (runtime.value === null) return ok(null);
    const parsed = handoffRequest.safeParse(request);
    if (!parsed.success) return refusal(fail("bad_request", "Request body is invalid."));
    const handoff = runtime.value.handoff;
    const changed =
      parsed.data.action === "start" ? await handoff.start(parsed.data.agentName) : handoff.end();
    if (changed.ok && changed.value.changed) await this.drainOutbox();
    return changed.ok ? changed : refusal(changed);
  }

  /**
   * RPC (`POST /v1/sessions/:id/upgrade`): moves the thread to another version of its agent from its leaf on; null
   * for a thread never bound. Projected before it answers, so the session views show the new version.
   */
  async upgradeThread(address: ThreadAddress, request: unknown): Promise<RpcResult<UpgradeReply | null>> {
    const runtime = await this.#gate.addressed(address);
    if (!runtime.ok) return runtime;
    if (runtime.value === null) return ok(null);
    const parsed = upgradeRequest.safeParse(request);
    if (!parsed.success) return refusal(fail("bad_request", "Request body is invalid."));
    const upgraded = await runtime.value.upgrade(parsed.data.version, "tenant");
    if (!upgraded.ok) return refusal(upgraded);
    await this.drainOutbox();
    return upgraded;
  }

  /** RPC (`POST /v1/sessions/:id/messages`): a person's reply during a handoff; null for a thread never bound. */
  async postHumanMessage(
    address: ThreadAddress,
    message: HumanMessageRequest,
  ): Promise<RpcResult<WireEntry | null>> {
    const runtime = await this.#gate.addressed(address);
    if (!runtime.ok) return runtime;
    if (runtime.value === null) return ok(null);
    const parsed = humanMessageRequest.safeParse(message);
    if (!parsed.success) return refusal(fail("bad_request", "Request body is invalid."));
    const appended = runtime.value.handoff.humanMessage(parsed.data);
    if (!appended.ok) return refusal(appended);
    await this.drainOutbox();
    return ok(toWireEntry(appended.value));
  }

  /**
   * RPC (a private launch that changed the thread's context): the thread's turns use `context` from the next one on,
   * on sockets opened before that launch too. Kept even before the thread is bound, and only when newer than the copy
   * held, so a late delivery never undoes a later launch.
   */
  async adoptLaunchContext(address: ThreadAddress, context: ThreadContext): Promise<RpcResult<null>> {
    const runtime = await this.#gate.addressed(address);
    if (!runtime.ok) return runtime;
    // Built by the Worker; parsed again because this is the object's own boundary.
    const parsed = threadContextSchema.safeParse(context);
    if (!parsed.success) return refusal(fail("bad_request", "The context is invalid."));
    adoptThreadContext(this.ctx.storage, parsed.data);
    return ok(null);
  }

  /**
   * RPC (`GET /v1/sessions/:id/export`): the whole thread as a stream of JSON text (`threadExportSchema`), produced
   * a page at a time as the Worker reads it, or null for a thread never bound.
   */
  async exportThread(address: ThreadAddress): Promise<RpcResult<ReadableStream<Uint8Array> | null>> {
    const runtime = await this.#gate.addressed(address);
    if (!runtime.ok) return runtime;
    if (runtime.value === null) return ok(null);
    // Zero retention (docs/privacy.md): the thread keeps no content worth exporting, so export refuses rather than answer a
    // document whose text comes and goes with the thread's idleness (docs/privacy.md).
    if (zeroRetentionIdleMinutes(runtime.value.binding.artifact) !== null) {
      return refusal(
        fail("conflict", "This agent keeps no conversation content (zero retention): nothing to export."),
      );
    }
    return ok(exportThreadStream(this.ctx.storage, runtime.value.binding));
  }

  /**
   * RPC (`GET /v1/sessions/:id/runs/:runId/input`): the run's audit record with its model input rebuilt from this
   * object's storage, or null for a thread never bound.
   */
  async runInput(address: ThreadAddress, runId: string): Promise<RpcResult<RunInputView | null>> {
    const runtime = await this.#gate.addressed(address);
    if (!runtime.ok) return runtime;
    if (runtime.value === null) return ok(null);
    const rebuilt = await rebuildRunInput(this.ctx.storage, runtime.value.versions, runId);
    return rebuilt.ok ? rebuilt : refusal(rebuilt);
  }

  /**
   * RPC (`DELETE /v1/sessions/:id`): closes every socket and erases all of the object's storage, leaving only a
   * tombstone (the time, no subject, no content) so that a still-valid token can never bind the thread again.
   */
  async eraseThread(address: ThreadAddress): Promise<RpcResult<null>> {
    const runtime = await this.#gate.addressed(address);
    if (!runtime.ok) return runtime;
    this.#sockets.forget();
    this.#sockets.closeAll(closeCode("not_found"), "thread erased");
    this.#gate.forget();
    await this.destroy();
    // Written in the same turn as `destroy()` returns, before the reset it scheduled; flushed before answering.
    writeTombstone(this.ctx.storage, this.#settings.now());
    await this.ctx.storage.sync();
    return ok(null);
  }

  /** RPC (a fresh launch): the new thread's owner is the launch's subject, recorded before its token is handed out. */
  async claimThread(claims: ThreadClaims): Promise<RpcResult<null>> {
    const claimed = this.#gate.claim(claims);
    return claimed.ok ? claimed : refusal(claimed);
  }

  /**
   * RPC (`POST /v1/agents/:id/draft/preview-session`): a new preview thread's owner and pin, the artifact the console
   * previews; its digest is checked here again, as every pin is on load.
   */
  async startPreview(claims: ThreadClaims, pin: PreviewPin): Promise<RpcResult<null>> {
    if ((await digestOf(pin.artifact)) !== pin.digest) {
      return refusal(fail("internal", "The previewed artifact failed its digest check."));
    }
    const started = await this.#gate.claimPreview(claims, pin);
    return started.ok ? ok(null) : refusal(started);
  }

  /** RPC (a fresh launch whose registry write failed after its claim): the never-used object keeps nothing. */
  async abandonThread(claims: ThreadClaims): Promise<RpcResult<null>> {
    if (!(await this.#gate.abandonable(claims))) return refusal(unauthenticated());
    this.ctx.waitUntil(this.#vanish());
    return ok(null);
  }

  /**
   * RPC (a launch resuming this thread with `threadId`): whether the claims' subject may use it (the thread's own
   * owner and state decide), the context copy the object holds, and the version of its current leaf — the pin until an
   * upgrade (null before the first bind): the launch's presentation is that version's.
   */
  async vouchForLaunch(
    claims: ThreadClaims,
  ): Promise<RpcResult<{ context: ThreadContext; versionId: string | null }>> {
    const vouched = await this.#gate.vouch(claims);
    if (!vouched.ok) return refusal(vouched);
    const runtime = await this.#gate.stored();
    return ok({
      context: readThreadContext(this.ctx.storage),
      versionId: runtime === null ? null : runtime.current().versionId,
    });
  }

  /**
   * RPC (an agent disabled, an `sk_` key or a visitor revoked): the thread re-reads what its sockets rest on and closes
   * those that no longer stand with 4403.
   */
  async recheckSockets(address: ThreadAddress): Promise<RpcResult<{ open: number }>> {
    const runtime = await this.#gate.addressed(address);
    if (!runtime.ok) return runtime;
    if (runtime.value !== null && this.#sockets.count() > 0) await this.#watch.recheck(runtime.value.binding);
    return ok({ open: this.#sockets.count() });
  }

  /** RPC (an operator disabled the tenant): closes every socket of the thread with 4403. */
  async closeSocketsOfDisabledTenant(address: ThreadAddress): Promise<RpcResult<{ closed: number }>> {
    const runtime = await this.#gate.addressed(address);
    if (!runtime.ok) return runtime;
    const closed = this.#sockets.count();
    this.#watch.closeAll();
    return ok({ closed });
  }

  /** RPC (the retention cron): the pinned retention policy over the thread's storage, at the object's clock. */
  async applyRetention(address: ThreadAddress): Promise<RpcResult<{ deletedEntries: number }>> {
    const runtime = await this.#gate.addressed(address);
    return runtime.ok ? ok(await this.#retain(runtime.value)) : runtime;
  }

  /** Scheduled, and run by the projection window after turns: projects the outbox into D1; on failure retries with backoff. */
  async drainOutbox(): Promise<void> {
    const runtime = await this.#gate.stored();
    if (runtime === null) return;
    // Every change drains: under zero retention it also arms the purge that follows the last activity.
    const idleMinutes = zeroRetentionIdleMinutes(runtime.binding.artifact);
    if (idleMinutes !== null) {
      await this.schedule(idleMinutes * 60, "purgeIdleText", undefined, { idempotent: true });
    }
    // Side by side: events go to the tenant's events object, not D1, so neither consumer waits for the other.
    const [, outcome] = await Promise.all([
      this.#forwardEvents(runtime.binding),
      drainOutbox({
        storage: this.ctx.storage,
        db: this.env.DB,
        targets: () => projectionTargets(this.env, this.ctx.storage, runtime.binding),
        binding: runtime.binding,
        now: this.#settings.now,
      }),
    ]);
    if (outcome.retryInMs !== undefined) {
      await this.schedule(Math.max(1, Math.ceil(outcome.retryInMs / 1000)), "drainOutbox", undefined, {
        idempotent: true,
      });
    }
  }

  /**
   * Scheduled when a drain is put off to the end of the projection window: after an eviction inside the window, the
   * alarm wakes the object (its start drains) and this drains whatever is still waiting.
   */
  async projectionDue(): Promise<void> {
    await this.drainOutbox();
  }

  /** Scheduled (and run with every drain): hands the thread's events to its tenant's events object. */
  async forwardEvents(): Promise<void> {
    const runtime = await this.#gate.stored();
    if (runtime !== null) await this.#forwardEvents(runtime.binding);
  }

  /**
   * Scheduled under zero retention (docs/privacy.md): once the thread has been idle for the artifact's `idleMinutes`, all of
   * its entry text and tool payloads are blanked; while it is active (or a run is live) it looks again later.
   */
  async purgeIdleText(): Promise<void> {
    const runtime = await this.#gate.stored();
    if (runtime === null) return;
    const idleMinutes = zeroRetentionIdleMinutes(runtime.binding.artifact);
    if (idleMinutes === null) return;
    const outcome = purgeIdleText(this.ctx.storage, idleMinutes, this.#settings.now());
    if ("retryInMs" in outcome) {
      // Not idempotent: this run's own schedule row still exists while it executes.
      await this.schedule(Math.max(1, Math.ceil(outcome.retryInMs / 1000)), "purgeIdleText");
      return;
    }
    runtime.textPurged();
    // The registry's copy of the context variables goes too; if D1 cannot be reached, the purge (idempotent) runs
    // again a minute later until it can.
    try {
      await clearThreadContext(this.env.DB, runtime.binding.tenantId, runtime.binding.threadId);
    } catch (error) {
      console.error(
        JSON.stringify({ level: "error", message: "context purge deferred", error: String(error) }),
      );
      await this.schedule(60, "purgeIdleText");
    }
  }

  /** Scheduled daily: retention over the thread's storage, then a reconciliation of D1 with the thread. */
  async dailyMaintenance(): Promise<void> {
    const runtime = await this.#gate.stored();
    if (runtime === null) return;
    await this.#retain(runtime);
    // The shard reads trust; a control plane that cannot name it fails the check like D1 itself would.
    const db = await projectionReadDb(this.env, runtime.binding.tenantId).catch(() => null);
    const { missing, failed } =
      db === null
        ? { missing: 0, failed: true }
        : await reconcileProjection({
            storage: this.ctx.storage,
            db,
            binding: runtime.binding,
            now: this.#settings.now,
          });
    if (missing > 0 || failed) await this.drainOutbox();
  }

  /**
   * Scheduled while turns wait behind a run: an object that died with a queue wakes here (its start seals the cut-off
   * run and starts the next turn); a live one just checks that the next turn is on its way.
   */
  async resumeQueuedRuns(): Promise<void> {
    const runtime = await this.#gate.stored();
    if (runtime === null || !runtime.hasQueuedTurns()) return;
    runtime.resumeQueue();
    // Not idempotent: this run's own schedule row still exists while it executes.
    await this.schedule(this.#settings.queueCheckSeconds, "resumeQueuedRuns");
  }

  /** Scheduled: closes sockets idle past the agent's limit (4408); the thread itself goes on. */
  async sweepIdleConnections(): Promise<void> {
    const now = this.#settings.now();
    let open = 0;
    for (const [connection, state] of this.#sockets.withState()) {
      const runtime = await this.#gate.admit(state.claims);
      const idleSeconds = runtime.ok ? runtime.value.limits.idleTimeoutSeconds : LIMITS.idleTimeoutSeconds;
      if (now - state.lastActive > idleSeconds * 1000) connection.close(WS_CLOSE_IDLE, "idle");
      else open += 1;
    }
    // Not idempotent: this run's own schedule row still exists while it executes.
    if (open > 0) await this.schedule(this.#settings.idleSweepSeconds, "sweepIdleConnections");
    const runtime = open > 0 ? await this.#gate.stored() : null;
    if (runtime !== null) await this.#watch.swept(runtime.binding);
  }

  /** Only the streaming paths: the WebSocket upgrade (`/ws`) and a message answered as SSE (`/messages`). */
  override async fetch(request: Request): Promise<Response> {
    const claims = parseThreadClaims(request.headers.get(CLAIMS_HEADER));
    if (claims === null) return refusalResponse(unauthenticated());
    const runtime = await this.#gate.admit(claims);
    if (!runtime.ok) return refusalResponse(runtime);

    return streamingFetch(request, {
      runtime: runtime.value,
      claims,
      meta: parseRequestMeta(request.headers.get(REQUEST_META_HEADER)),
      openSockets: this.#sockets.count(),
      upgrade: () => super.fetch(request),
    });
  }

  /**
   * Owns the wire: a frame over the limit closes the socket (1009) before anything reads it, and only `agent.v1`
   * frame types reach the SDK's dispatch.
   */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (frameTooLarge(message)) {
      ws.close(WS_CLOSE_CODE.payload_too_large ?? 1009, "frame too large");
      return;
    }
    await this.lifecycle.webSocketMessage(ws, onlyProtocolFrames(message));
  }

  override onRequest(_request: Request): Response {
    return refusalResponse(fail("not_found", "Not found."));
  }

  override onConnect(connection: Connection, ctx: ConnectionContext): void {
    const claims = parseThreadClaims(ctx.request.headers.get(CLAIMS_HEADER));
    if (claims === null) {
      connection.close(closeCode("unauthenticated"), "unauthenticated");
      return;
    }
    this.#sockets.opened(connection, claims, parseRequestMeta(ctx.request.headers.get(REQUEST_META_HEADER)));
    void this.schedule(this.#settings.idleSweepSeconds, "sweepIdleConnections", undefined, {
      idempotent: true,
    });
    this.ctx.waitUntil(this.#watch.connected(claims));
  }

  override async onMessage(connection: Connection, message: WSMessage): Promise<void> {
    const state = connectionState(connection);
    if (state === null) {
      connection.close(closeCode("unauthenticated"), "unauthenticated");
      return;
    }
    // Every frame counts against the socket's budget before it is even parsed, pings and malformed ones included.
    const spent = this.#sockets.spend(connection, state);
    if (spent === null) return;
    const parsed = parseClientMessage(message);
    if (parsed.kind === "too_large") {
      connection.close(WS_CLOSE_CODE.payload_too_large ?? 1009, "frame too large");
      return;
    }
    if (parsed.kind === "malformed") {
      this.#sockets.malformed(connection, spent, parsed.message);
      return;
    }
    const runtime = await this.#gate.admit(spent.claims);
    if (!runtime.ok) {
      connection.close(closeCode(runtime.code), runtime.code);
      return;
    }
    const frame = parsed.frame;
    // `ready` carries the upgrade offer, read (and cached) before the synchronous part of hello.
    if (frame.type === "hello") await runtime.value.refreshOffer();
    // A turn waits for the tenant's quota, an upgrade for its version, a refresh for its signature; every other frame
    // is answered synchronously (hello's catch-up needs it).
    const outcome = isTurnFrame(frame)
      ? await dispatchTurn(runtime.value, frame, spent.claims.sub, spent.meta)
      : frame.type === "upgrade"
        ? await dispatchUpgrade(runtime.value, frame)
        : frame.type === "refresh"
          ? await this.#refresh(runtime.value, spent.claims)
          : dispatchFrame(runtime.value, frame, spent.claims.sub);
    // Read again: frames that arrived while this one waited (for the gate or the quota) spent from the same budget.
    this.#sockets.deliver(connection, connectionState(connection) ?? spent, outcome);
  }

  override onClose(connection: Connection, code: number, _reason: string, _wasClean: boolean): void {
    // A close frame without a status arrives as 1005, which the SDK does not answer: the client would wait out its
    // own timeout and report 1006. Answer it with a normal close (docs/protocol.md#close-codes).
    if (code === NO_STATUS_RECEIVED) {
      try {
        connection.close(1000, "");
      } catch {
        // Already closed: nothing is owed.
      }
    }
    this.#sockets.closed();
  }

  /**
   * A token refresh re-checks what a launch checks (tenant, agent, the minting `sk_` key, the visitor) before it
   * signs: a socket that no longer stands was just closed 4403 and gets no token (docs/security.md).
   */
  async #refresh(runtime: ThreadRuntime, claims: ThreadClaims): Promise<FrameOutcome> {
    const standing = await this.#watch.admitsRefresh(runtime.binding, claims);
    if (!standing.ok) {
      if (standing.code === "forbidden") return { frames: [] };
      return { frames: [{ type: "error", code: standing.code, message: standing.message }] };
    }
    const held = readThreadContext(this.ctx.storage).version;
    const preview = runtime.binding.preview !== undefined;
    return { frames: [await refreshedToken(this.env, claims, held, preview)] };
  }

  /** A thread never launched was named by crossed claims: once refused, the object keeps no storage at all. */
  async #vanish(): Promise<void> {
    this.#gate.forget();
    await this.destroy();
  }

  /**
   * The pinned version's policy with the agent's own max age when shorter, over the thread's storage; nothing while a
   * legal hold covers the thread. Both come from D1: if it cannot answer, the pass waits for the next one (a hold is
   * never risked).
   */
  async #retain(runtime: ThreadRuntime | null): Promise<{ deletedEntries: number }> {
    if (runtime === null) return { deletedEntries: 0 };
    const binding = runtime.binding;
    let overrides: { held: boolean; agentMaxAgeDays: number | null };
    try {
      overrides = await threadRetentionOverrides(this.env.DB, binding);
    } catch (error) {
      console.warn(
        JSON.stringify({ msg: "retention deferred", threadId: binding.threadId, error: String(error) }),
      );
      return { deletedEntries: 0 };
    }
    if (overrides.held) return { deletedEntries: 0 };
    const pinned = binding.artifact.limits?.retention;
    const maxAgeDays = shorterAge(pinned?.maxAgeDays, overrides.agentMaxAgeDays);
    const policy = {
      ...(maxAgeDays !== null ? { maxAgeDays } : {}),
      ...(pinned?.maxMessagesPerThread !== undefined
        ? { maxMessagesPerThread: pinned.maxMessagesPerThread }
        : {}),
    };
    if (policy.maxAgeDays === undefined && policy.maxMessagesPerThread === undefined)
      return { deletedEntries: 0 };
    const result = runtime.applyRetention(policy, this.#settings.now());
    await this.drainOutbox();
    return result;
  }

  #start(binding: ThreadBinding): ThreadRuntime {
    const runtime = new ThreadRuntime({
      storage: this.ctx.storage,
      env: this.env,
      binding,
      now: this.#settings.now,
      peers: () => this.#sockets.readyPeers(),
      keepAliveWhile: keepAliveIfLong(() => this.keepAlive(), this.#settings),
      // At most one drain per projection window, every turn since the last one in its batch.
      afterTurn: () => this.#projection.request(),
      quota: tenantRunQuota(this.env, binding),
      store: () => new D1DeploymentStore(this.env.DB),
      onQueued: () =>
        void this.schedule(this.#settings.queueCheckSeconds, "resumeQueuedRuns", undefined, {
          idempotent: true,
        }),
    });
    runtime.recoverInterruptedRuns();
    // `thread.created` was recorded as the binding was written.
    if (unforwardedEventCount(this.ctx.storage) > 0) this.ctx.waitUntil(this.#forwardEvents(binding));
    // Idempotent: one daily schedule per thread, however often the object wakes.
    void this.scheduleEvery(86_400, "dailyMaintenance");
    return runtime;
  }

  /**
   * Sends the events not yet acknowledged, oldest first, and forgets them only once the tenant's events object has
   * stored them (at least once: a lost answer re-sends, and that object ignores ids it holds). On failure it retries
   * with backoff.
   */
  async #forwardEvents(binding: ThreadBinding): Promise<void> {
    const storage = this.ctx.storage;
    for (;;) {
      const events = threadEventsAfter(storage, forwardedEventSeq(storage), MAX_EVENTS_PER_ACCEPT);
      const last = events.at(-1);
      if (last === undefined) return;
      // A preview thread is the console's, not a session of the tenant's product: its backend hears nothing of it.
      if (binding.preview !== undefined) {
        markEventsForwarded(storage, last.seq, this.#settings.now());
        continue;
      }
      const zero = zeroRetentionIdleMinutes(binding.artifact) !== null;
      const bodies = events.map((event) =>
        eventBody({
          ...event,
          tenantId: binding.tenantId,
          data:
            typeof event.data === "object" && event.data !== null && !Array.isArray(event.data)
              ? zero
                ? withoutText(event.data)
                : event.data
              : {},
        }),
      );
      let accepted = false;
      try {
        accepted = (await tenantEvents(this.env, binding.tenantId).accept(binding.tenantId, bodies)).ok;
      } catch (error) {
        console.warn(
          JSON.stringify({ msg: "events not forwarded", threadId: binding.threadId, error: String(error) }),
        );
      }
      if (!accepted) {
        const failures = (readMetaInteger(storage, FORWARD_FAILURES_KEY) ?? 0) + 1;
        writeMeta(storage, FORWARD_FAILURES_KEY, String(failures));
        await this.schedule(Math.max(1, Math.ceil(backoffMs(failures) / 1000)), "forwardEvents", undefined, {
          idempotent: true,
        });
        return;
      }
      markEventsForwarded(storage, last.seq, this.#settings.now());
      deleteMeta(storage, FORWARD_FAILURES_KEY);
    }
  }

  /** A launch RPC: started like a fetch (`onStart` first), gated, and refused the way HTTP refuses. */
  async #launch<T>(
    claims: unknown,
    command: (runtime: ThreadRuntime) => Result<T> | Promise<Result<T>>,
  ): Promise<RpcResult<T>> {
    await this.__unsafe_ensureInitialized();
    const runtime = await this.#gate.admit(claims);
    const result = runtime.ok ? await command(runtime.value) : runtime;
    return result.ok ? result : refusal(result);
  }
}
