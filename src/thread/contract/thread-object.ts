// The thread object as the Worker calls it: every RPC method and its fetch paths. `ThreadAgent` implements it, and
// every caller reaches the object through `threadStub` (docs/architecture.md#layers).
import type { AttachmentPolicy } from "../../control/artifact";
import type { RpcResult } from "../../errors";
import type { AttachmentRef, WireEntry } from "../../shared/protocol";
import type { HumanMessageRequest } from "../../shared/sessions-api";
import type { ApprovalDecisionBody, ApprovalView, ToolAnswer, ToolResultBody } from "../../shared/thread-api";
import type { ThreadContext } from "../../storage/thread/context-store";
import type { ThreadAddress, ThreadClaims } from "./claims";
import type {
  EntriesPage,
  EntriesQuery,
  EvalOutcome,
  FeedbackBody,
  FeedbackReply,
  HandoffView,
  MessageReply,
  PostMessage,
  PreviewPin,
  RunInputView,
  ThreadInfo,
  UpgradeReply,
} from "./shapes";

/**
 * Methods taking claims act for a visitor or user (the claims are checked against the thread's owner and pin);
 * methods taking an address act for the tenant or the platform and answer null for a thread never bound. Arguments
 * are parsed again inside: this is the object's own boundary.
 */
export interface ThreadObject extends Rpc.DurableObjectBranded {
  /** `/ws` (the WebSocket upgrade) and `/messages` answered as SSE, with the claims in `CLAIMS_HEADER`. */
  fetch(request: Request): Promise<Response>;

  // For the thread's own visitor or user.
  /** `GET /v1/threads/:threadId`: the pinned agent and the thread's times and leaf. */
  threadInfo(claims: ThreadClaims): Promise<RpcResult<ThreadInfo>>;
  /** `GET /v1/threads/:threadId/entries`: a page of one branch. */
  threadEntries(claims: ThreadClaims, query: EntriesQuery): Promise<RpcResult<EntriesPage>>;
  /**
   * `POST …/messages` as JSON: the turn once settled; `created` is false for a retried clientMessageId. `meta` names
   * the Worker request (`RequestMeta`).
   */
  postMessage(
    claims: ThreadClaims,
    message: PostMessage,
    meta?: unknown,
  ): Promise<RpcResult<{ created: boolean; reply: MessageReply }>>;
  /** `POST …/runs/:runId/cancel`. */
  cancelRun(claims: ThreadClaims, runId: string): Promise<RpcResult<{ runId: string; status: "cancelling" }>>;
  /** `POST …/entries/:entryId/feedback`: the subject's rating of an assistant entry, latest wins. */
  giveFeedback(claims: ThreadClaims, entryId: string, body: FeedbackBody): Promise<RpcResult<FeedbackReply>>;
  /** `POST …/approvals/:approvalId`: the thread's user decides an approval (docs/tools.md#approvals). */
  decideApproval(
    claims: ThreadClaims,
    approvalId: string,
    body: ApprovalDecisionBody,
  ): Promise<RpcResult<ApprovalView>>;
  /** `POST …/tool-results`: a client tool's answer (refused with its issues when its output is not valid). */
  answerToolRequest(claims: ThreadClaims, body: ToolResultBody): Promise<RpcResult<ToolAnswer>>;
  /**
   * `POST …/attachments`, before the body is read: the current version's attachment rules (null: attachments are
   * off) and how many files the thread holds.
   */
  attachmentRules(
    claims: ThreadClaims,
  ): Promise<RpcResult<{ policy: AttachmentPolicy | null; count: number }>>;
  /**
   * `POST …/attachments`, before the body is read: spends one frame of the visitor's budget and one of the thread's
   * sends per minute (429 past either), then answers as `attachmentRules`.
   */
  startUpload(claims: ThreadClaims): Promise<RpcResult<{ policy: AttachmentPolicy | null; count: number }>>;
  /** `POST …/attachments`, once the bytes are stored: records the upload (type and per-thread count checked again). */
  addAttachment(claims: ThreadClaims, ref: AttachmentRef): Promise<RpcResult<AttachmentRef>>;
  /** `GET …/attachments/:id` for the thread's own visitor or user; null when the thread has no such attachment. */
  attachmentOf(claims: ThreadClaims, id: string): Promise<RpcResult<AttachmentRef | null>>;

  // For a launch.
  /**
   * `POST /v1/agents/:id/draft/preview-session`: a new preview thread's owner and pin, the artifact the console
   * previews; its digest is checked again inside.
   */
  startPreview(claims: ThreadClaims, pin: PreviewPin): Promise<RpcResult<null>>;
  /**
   * A launch resuming the thread: whether the claims' subject may use it (the thread's own owner and state decide), the
   * context copy the object holds, and the version of its current leaf (null before the first bind).
   */
  vouchForLaunch(
    claims: ThreadClaims,
  ): Promise<RpcResult<{ context: ThreadContext; versionId: string | null }>>;
  /**
   * A private launch that changed the thread's context: its turns use `context` from the next one on, on sockets opened
   * before that launch too; kept only when newer than the copy held.
   */
  adoptLaunchContext(address: ThreadAddress, context: ThreadContext): Promise<RpcResult<null>>;
  /** An eval case's thread (docs/evals.md): what it did, for its expectations; null for a thread never bound. */
  evalOutcome(address: ThreadAddress): Promise<RpcResult<EvalOutcome | null>>;

  // For the tenant's admin API.
  /** `POST /v1/sessions/:id/handoff`: starts or ends a handoff; projected before it answers. */
  changeHandoff(address: ThreadAddress, request: unknown): Promise<RpcResult<HandoffView | null>>;
  /** `POST /v1/sessions/:id/upgrade`: moves the thread to another version from its leaf on; projected first. */
  upgradeThread(address: ThreadAddress, request: unknown): Promise<RpcResult<UpgradeReply | null>>;
  /** `POST /v1/sessions/:id/approvals/:approvalId`: the tenant decides an approval; null: no such thread. */
  decideApprovalAsTenant(
    address: ThreadAddress,
    approvalId: string,
    body: ApprovalDecisionBody,
  ): Promise<RpcResult<ApprovalView | null>>;
  /** `POST /v1/sessions/:id/messages`: a person's reply during a handoff. */
  postHumanMessage(
    address: ThreadAddress,
    message: HumanMessageRequest,
  ): Promise<RpcResult<WireEntry | null>>;
  /**
   * `GET /v1/sessions/:id/attachments/:id`: one attachment of this thread; null when the thread has none by that id
   * (or was never bound).
   */
  getAttachment(address: ThreadAddress, id: string): Promise<RpcResult<AttachmentRef | null>>;
  /** Every attachment of the thread, oldest first (export, console); null for a thread never bound. */
  threadAttachments(address: ThreadAddress): Promise<RpcResult<AttachmentRef[] | null>>;
  /** `GET /v1/sessions/:id/export`: the whole thread as JSON text (`threadExportSchema`), a page at a time. */
  exportThread(address: ThreadAddress): Promise<RpcResult<ReadableStream<Uint8Array> | null>>;
  /**
   * `GET /v1/sessions/:id/runs/:runId/input`: the run's audit record with the model input of call `step` (its last
   * when absent) rebuilt from storage.
   */
  runInput(address: ThreadAddress, runId: string, step?: number): Promise<RpcResult<RunInputView | null>>;
  /**
   * `DELETE /v1/sessions/:id`: closes every socket and erases all of the object's storage, leaving only a tombstone
   * (the time, no subject, no content) so that a still-valid token can never bind the thread again.
   */
  eraseThread(address: ThreadAddress): Promise<RpcResult<null>>;

  // For the platform: standing of sockets, and the retention job.
  /**
   * An agent disabled, an `sk_` key or a visitor revoked: sockets that no longer stand are closed 4403.
   * `upstream_unavailable` when D1 could not be read (nothing was closed; ask again).
   */
  recheckSockets(address: ThreadAddress): Promise<RpcResult<{ open: number }>>;
  /** An operator disabled the tenant: every socket of the thread is closed 4403. */
  closeSocketsOfDisabledTenant(address: ThreadAddress): Promise<RpcResult<{ closed: number }>>;
  /** The retention job: the pinned retention policy over the thread's storage, at the object's clock. */
  applyRetention(address: ThreadAddress): Promise<RpcResult<{ deletedEntries: number }>>;
  /**
   * The tenant's events object: the event types its endpoints subscribe to changed (change number `epoch`); the thread
   * forgets the set it holds and hands every event over until it learns the new one (docs/webhooks.md).
   */
  eventSubscriptionsChanged(address: ThreadAddress, epoch: number): Promise<RpcResult<null>>;
}
