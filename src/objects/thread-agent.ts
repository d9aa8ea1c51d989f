// The one generic thread Durable Object: lifecycle, the gate and dispatch, hardened against client-driven SDK features.
// What each RPC method does for its caller is documented on its contract, `ThreadObject` (src/thread/contract/).
import { Agent, type Connection, type ConnectionContext, type WSMessage } from "agents";
import type { AttachmentPolicy } from "../control/artifact";
import { fail, ok, type Result, type RpcResult, refusal } from "../errors";
import { eventSubscriptionsOf } from "../events/subscriptions";
import { deploymentStoreOf } from "../http/store";
import { WS_CLOSE_CODE } from "../shared/errors";
import type { AttachmentRef, WireEntry } from "../shared/protocol";
import type { HumanMessageRequest } from "../shared/sessions-api";
import type { ApprovalDecisionBody, ApprovalView, ToolAnswer, ToolResultBody } from "../shared/thread-api";
import { projectionBacklog } from "../storage/projection/outbox";
import type { ThreadContext } from "../storage/thread/context-store";
import { unforwardedEventCount } from "../storage/thread/thread-events";
import { writeTombstone } from "../storage/thread/thread-owner";
import { migrateThreadSchema } from "../storage/thread/thread-schema";
import {
  CLAIMS_HEADER,
  type EntriesPage,
  type EntriesQuery,
  type EvalOutcome,
  type FeedbackBody,
  type FeedbackReply,
  type HandoffView,
  type MessageReply,
  type PostMessage,
  type PreviewPin,
  parseRequestMeta,
  parseThreadClaims,
  REQUEST_META_HEADER,
  type RunInputView,
  readRequestMeta,
  refusalResponse,
  type ThreadAddress,
  type ThreadClaims,
  type ThreadInfo,
  type ThreadObject,
  threadAddressSchema,
  type UpgradeReply,
} from "../thread/contract";
import {
  addAttachment,
  admitUpload,
  attachmentRules,
  cancelRun,
  changeHandoff,
  entriesPage,
  evalOutcome,
  exportThread,
  findAttachment,
  listAttachments,
  postHumanMessage,
  postMessage,
  rateEntry,
  runInput,
  type ThreadRuntime,
  threadInfo,
  upgradeThread,
} from "../thread/conversation";
import {
  assembleThread,
  closeCode,
  frameTooLarge,
  onlyProtocolFrames,
  streamingFetch,
  THREAD_SETTINGS,
  type ThreadParts,
  type ThreadSettings,
} from "../thread/object";

const unauthenticated = () => fail("unauthenticated", "Authentication required.");

/**
 * Public members are the API: the Worker's RPC calls (`ThreadObject`: each checks the caller's claims or address
 * against the stored binding first), the SDK's hooks, and the scheduler's callbacks. Everything else is `#private`.
 */
export class ThreadAgent extends Agent<Env> implements ThreadObject {
  // Never tell a client the object's name or class.
  static override options = { sendIdentityOnConnect: false };

  readonly #settings: Readonly<ThreadSettings>;
  readonly #parts: ThreadParts;

  /** The runtime constructs with `(ctx, env)`; only a test-only subclass passes other settings. */
  constructor(ctx: DurableObjectState, env: Env, settings: Readonly<ThreadSettings> = THREAD_SETTINGS) {
    super(ctx, env);
    this.#settings = settings;
    this.#parts = assembleThread({
      ctx,
      env,
      settings,
      connections: () => this.getConnections(),
      schedule: async (seconds, callback, idempotent) => {
        await this.schedule(seconds, callback, undefined, idempotent ? { idempotent: true } : undefined);
      },
      scheduleDaily: () => void this.scheduleEvery(86_400, "dailyMaintenance"),
      keepAlive: () => this.keepAlive(),
      drain: () => this.drainOutbox(),
      vanish: () => this.#vanish(),
      store: () => deploymentStoreOf(env),
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

  /** After an eviction (the keep-alive alarm wakes the object): project what D1 has yet to learn. */
  override async onStart(): Promise<void> {
    const runtime = await this.#parts.gate.stored();
    if (runtime !== null && projectionBacklog(this.ctx.storage) > 0) await this.drainOutbox();
    else if (runtime !== null && unforwardedEventCount(this.ctx.storage) > 0) await this.forwardEvents();
  }

  // --- RPC for the thread's own visitor or user (claims) ---

  async threadInfo(claims: ThreadClaims): Promise<RpcResult<ThreadInfo>> {
    return this.#launch(claims, (runtime) => ok(threadInfo(runtime)));
  }

  async threadEntries(claims: ThreadClaims, query: EntriesQuery): Promise<RpcResult<EntriesPage>> {
    return this.#launch(claims, (runtime) => entriesPage(runtime, query));
  }

  /** `meta` names the Worker request (`RequestMeta`). */
  async postMessage(
    claims: ThreadClaims,
    message: PostMessage,
    meta?: unknown,
  ): Promise<RpcResult<{ created: boolean; reply: MessageReply }>> {
    return this.#launch(claims, (runtime) =>
      postMessage(runtime, claims.sub, message, readRequestMeta(meta)),
    );
  }

  async cancelRun(
    claims: ThreadClaims,
    runId: string,
  ): Promise<RpcResult<{ runId: string; status: "cancelling" }>> {
    return this.#launch(claims, (runtime) => cancelRun(runtime, runId));
  }

  async giveFeedback(
    claims: ThreadClaims,
    entryId: string,
    body: FeedbackBody,
  ): Promise<RpcResult<FeedbackReply>> {
    return this.#launch(claims, (runtime) => rateEntry(runtime, claims.sub, entryId, body));
  }

  async decideApproval(
    claims: ThreadClaims,
    approvalId: string,
    body: ApprovalDecisionBody,
  ): Promise<RpcResult<ApprovalView>> {
    return this.#launch(claims, (runtime) => runtime.decide({ approvalId, ...body, by: "user" }));
  }

  async answerToolRequest(claims: ThreadClaims, body: ToolResultBody): Promise<RpcResult<ToolAnswer>> {
    return this.#launch(claims, (runtime) => runtime.answerTool(body));
  }

  async attachmentRules(
    claims: ThreadClaims,
  ): Promise<RpcResult<{ policy: AttachmentPolicy | null; count: number }>> {
    return this.#launch(claims, (runtime) => ok(attachmentRules(this.ctx.storage, runtime)));
  }

  async startUpload(
    claims: ThreadClaims,
  ): Promise<RpcResult<{ policy: AttachmentPolicy | null; count: number }>> {
    return this.#launch(claims, (runtime) => {
      if (!this.#parts.sockets.spendRequest()) {
        return { ok: false, code: "rate_limited", message: "Too many requests; slow down.", retryAfter: 1 };
      }
      return admitUpload(this.ctx.storage, runtime, this.#settings.now());
    });
  }

  async addAttachment(claims: ThreadClaims, ref: AttachmentRef): Promise<RpcResult<AttachmentRef>> {
    return this.#launch(claims, async (runtime) => {
      const added = addAttachment(this.ctx.storage, runtime, ref, this.#settings.now());
      // An upload is activity: under zero retention it (re)arms the idle purge, even before any message.
      if (added.ok) await this.#parts.upkeep.armIdlePurge(runtime.binding);
      return added;
    });
  }

  async attachmentOf(claims: ThreadClaims, id: string): Promise<RpcResult<AttachmentRef | null>> {
    return this.#launch(claims, () => ok(findAttachment(this.ctx.storage, id)));
  }

  // --- RPC for a launch ---

  async startPreview(claims: ThreadClaims, pin: PreviewPin): Promise<RpcResult<null>> {
    const started = await this.#parts.gate.claimPreview(claims, pin);
    return started.ok ? ok(null) : refusal(started);
  }

  async vouchForLaunch(
    claims: ThreadClaims,
  ): Promise<RpcResult<{ context: ThreadContext; versionId: string | null }>> {
    const vouched = await this.#parts.gate.vouch(claims);
    return vouched.ok ? vouched : refusal(vouched);
  }

  /** Kept even before the thread is bound, and only when newer than the copy held. */
  async adoptLaunchContext(address: ThreadAddress, context: ThreadContext): Promise<RpcResult<null>> {
    const runtime = await this.#parts.gate.addressed(address);
    if (!runtime.ok) return runtime;
    const adopted = this.#parts.gate.adoptContext(context);
    return adopted.ok ? adopted : refusal(adopted);
  }

  // --- RPC for the tenant's admin API (address; null for a thread never bound) ---

  async changeHandoff(address: ThreadAddress, request: unknown): Promise<RpcResult<HandoffView | null>> {
    return this.#addressed(address, (runtime) => changeHandoff(runtime, request, () => this.drainOutbox()));
  }

  async upgradeThread(address: ThreadAddress, request: unknown): Promise<RpcResult<UpgradeReply | null>> {
    return this.#addressed(address, (runtime) => upgradeThread(runtime, request, () => this.drainOutbox()));
  }

  async decideApprovalAsTenant(
    address: ThreadAddress,
    approvalId: string,
    body: ApprovalDecisionBody,
  ): Promise<RpcResult<ApprovalView | null>> {
    return this.#addressed(address, async (runtime) => runtime.decide({ approvalId, ...body, by: "tenant" }));
  }

  async postHumanMessage(
    address: ThreadAddress,
    message: HumanMessageRequest,
  ): Promise<RpcResult<WireEntry | null>> {
    return this.#addressed(address, (runtime) =>
      postHumanMessage(runtime, message, () => this.drainOutbox()),
    );
  }

  async getAttachment(address: ThreadAddress, id: string): Promise<RpcResult<AttachmentRef | null>> {
    return this.#addressed(address, () => ok(findAttachment(this.ctx.storage, id)));
  }

  async threadAttachments(address: ThreadAddress): Promise<RpcResult<AttachmentRef[] | null>> {
    return this.#addressed(address, () => ok(listAttachments(this.ctx.storage)));
  }

  async exportThread(address: ThreadAddress): Promise<RpcResult<ReadableStream<Uint8Array> | null>> {
    return this.#addressed(address, (runtime) => exportThread(this.ctx.storage, runtime));
  }

  async evalOutcome(address: ThreadAddress): Promise<RpcResult<EvalOutcome | null>> {
    return this.#addressed(address, (runtime) => evalOutcome(this.ctx.storage, runtime));
  }

  async runInput(
    address: ThreadAddress,
    runId: string,
    step?: number,
  ): Promise<RpcResult<RunInputView | null>> {
    return this.#addressed(address, (runtime) => runInput(this.ctx.storage, runtime, runId, step));
  }

  /** Leaves only a tombstone (the time, no subject, no content), so a still-valid token never binds it again. */
  async eraseThread(address: ThreadAddress): Promise<RpcResult<null>> {
    const runtime = await this.#parts.gate.addressed(address);
    if (!runtime.ok) return runtime;
    this.#parts.sockets.forget();
    this.#parts.sockets.closeAll(closeCode("not_found"), "thread erased");
    this.#parts.gate.forget();
    await this.destroy();
    // Written in the same turn as `destroy()` returns, before the reset it scheduled; flushed before answering.
    writeTombstone(this.ctx.storage, this.#settings.now());
    await this.ctx.storage.sync();
    return ok(null);
  }

  // --- RPC for the platform ---

  async recheckSockets(address: ThreadAddress): Promise<RpcResult<{ open: number }>> {
    const runtime = await this.#parts.gate.addressed(address);
    if (!runtime.ok) return runtime;
    const { open, read } = await this.#parts.host.recheck(runtime.value);
    if (read) return ok({ open });
    return refusal(fail("upstream_unavailable", "The sockets' standing could not be read; ask again."));
  }

  async closeSocketsOfDisabledTenant(address: ThreadAddress): Promise<RpcResult<{ closed: number }>> {
    const runtime = await this.#parts.gate.addressed(address);
    if (!runtime.ok) return runtime;
    const closed = this.#parts.sockets.count();
    this.#parts.watch.closeAll();
    return ok({ closed });
  }

  async applyRetention(address: ThreadAddress): Promise<RpcResult<{ deletedEntries: number }>> {
    const runtime = await this.#parts.gate.addressed(address);
    return runtime.ok ? ok(await this.#parts.upkeep.retain(runtime.value)) : runtime;
  }

  /** Asks nothing of the thread's storage: forgetting the set only makes the thread hand everything over again. */
  async eventSubscriptionsChanged(address: ThreadAddress, epoch: number): Promise<RpcResult<null>> {
    const parsed = threadAddressSchema.safeParse(address);
    if (!parsed.success || !Number.isSafeInteger(epoch) || epoch < 0)
      return refusal(fail("bad_request", "Invalid subscription change."));
    eventSubscriptionsOf(this.ctx.storage).changed(epoch);
    return ok(null);
  }

  // --- The scheduler's callbacks (src/thread/object/upkeep.ts) ---

  /** Also run by the projection window after turns. */
  async drainOutbox(): Promise<void> {
    await this.#parts.upkeep.drainOutbox();
  }

  /** After an eviction inside the projection window: the alarm wakes the object and this drains what still waits. */
  async projectionDue(): Promise<void> {
    this.#parts.projection.alarmRan();
    await this.#parts.upkeep.drainOutbox();
  }

  async forwardEvents(): Promise<void> {
    await this.#parts.upkeep.forwardEvents();
  }

  async purgeIdleText(): Promise<void> {
    await this.#parts.upkeep.purgeIdleText();
  }

  async releaseAttachments(): Promise<void> {
    await this.#parts.upkeep.releaseAttachments();
  }

  async dailyMaintenance(): Promise<void> {
    await this.#parts.upkeep.dailyMaintenance();
  }

  async resumeQueuedRuns(): Promise<void> {
    await this.#parts.upkeep.resumeQueuedRuns();
  }

  async expireActions(): Promise<void> {
    await this.#parts.upkeep.expireActions();
  }

  async sweepIdleConnections(): Promise<void> {
    await this.#parts.upkeep.sweepIdleConnections();
  }

  // --- The wire ---

  /** Only the streaming paths: the WebSocket upgrade (`/ws`) and a message answered as SSE (`/messages`). */
  override async fetch(request: Request): Promise<Response> {
    const claims = parseThreadClaims(request.headers.get(CLAIMS_HEADER));
    if (claims === null) return refusalResponse(unauthenticated());
    const runtime = await this.#parts.gate.admit(claims);
    if (!runtime.ok) return refusalResponse(runtime);
    return streamingFetch(request, {
      runtime: runtime.value,
      claims,
      meta: parseRequestMeta(request.headers.get(REQUEST_META_HEADER)),
      openSockets: this.#parts.sockets.count(),
      upgrade: () => super.fetch(request),
    });
  }

  /** A frame over the limit closes the socket (1009) before anything reads it; only `agent.v1` frames reach the SDK. */
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
    this.#parts.host.connected(connection, ctx);
  }

  override async onMessage(connection: Connection, message: WSMessage): Promise<void> {
    await this.#parts.host.message(connection, message);
  }

  override onClose(connection: Connection, code: number, _reason: string, _wasClean: boolean): void {
    this.#parts.host.closed(connection, code);
  }

  /** A thread never launched was named by crossed claims: once refused, the object keeps no storage at all. */
  async #vanish(): Promise<void> {
    this.#parts.gate.forget();
    await this.destroy();
  }

  /** A launch RPC: started like a fetch (`onStart` first), gated, and refused the way HTTP refuses. */
  async #launch<T>(
    claims: unknown,
    command: (runtime: ThreadRuntime) => Result<T> | Promise<Result<T>>,
  ): Promise<RpcResult<T>> {
    await this.__unsafe_ensureInitialized();
    const runtime = await this.#parts.gate.admit(claims);
    const result = runtime.ok ? await command(runtime.value) : runtime;
    return result.ok ? result : refusal(result);
  }

  /** A tenant or platform RPC: the thread its address names, or null for one never bound. */
  async #addressed<T>(
    address: ThreadAddress,
    command: (runtime: ThreadRuntime) => Result<T> | Promise<Result<T>>,
  ): Promise<RpcResult<T | null>> {
    const runtime = await this.#parts.gate.addressed(address);
    if (!runtime.ok) return runtime;
    if (runtime.value === null) return ok(null);
    const result = await command(runtime.value);
    return result.ok ? result : refusal(result);
  }
}
