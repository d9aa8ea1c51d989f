// The thread object as the Worker calls it: every RPC method and its fetch paths. `ThreadAgent` implements it, and
// every caller reaches the object through `threadStub` (docs/architecture.md#the-worker-and-the-thread-object).
import type { RpcResult } from "../../errors";
import type { WireEntry } from "../../shared/protocol";
import type { HumanMessageRequest } from "../../shared/sessions-api";
import type { ThreadContext } from "../../storage/thread/context-store";
import type { ThreadAddress, ThreadClaims } from "./claims";
import type {
  EntriesPage,
  EntriesQuery,
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
  threadInfo(claims: ThreadClaims): Promise<RpcResult<ThreadInfo>>;
  threadEntries(claims: ThreadClaims, query: EntriesQuery): Promise<RpcResult<EntriesPage>>;
  postMessage(
    claims: ThreadClaims,
    message: PostMessage,
    meta?: unknown,
  ): Promise<RpcResult<{ created: boolean; reply: MessageReply }>>;
  cancelRun(claims: ThreadClaims, runId: string): Promise<RpcResult<{ runId: string; status: "cancelling" }>>;
  giveFeedback(claims: ThreadClaims, entryId: string, body: FeedbackBody): Promise<RpcResult<FeedbackReply>>;

  // For a launch.
  claimThread(claims: ThreadClaims): Promise<RpcResult<null>>;
  startPreview(claims: ThreadClaims, pin: PreviewPin): Promise<RpcResult<null>>;
  abandonThread(claims: ThreadClaims): Promise<RpcResult<null>>;
  vouchForLaunch(
    claims: ThreadClaims,
  ): Promise<RpcResult<{ context: ThreadContext; versionId: string | null }>>;
  adoptLaunchContext(address: ThreadAddress, context: ThreadContext): Promise<RpcResult<null>>;

  // For the tenant's admin API.
  changeHandoff(address: ThreadAddress, request: unknown): Promise<RpcResult<HandoffView | null>>;
  upgradeThread(address: ThreadAddress, request: unknown): Promise<RpcResult<UpgradeReply | null>>;
  postHumanMessage(
    address: ThreadAddress,
    message: HumanMessageRequest,
  ): Promise<RpcResult<WireEntry | null>>;
  exportThread(address: ThreadAddress): Promise<RpcResult<ReadableStream<Uint8Array> | null>>;
  runInput(address: ThreadAddress, runId: string): Promise<RpcResult<RunInputView | null>>;
  eraseThread(address: ThreadAddress): Promise<RpcResult<null>>;

  // For the platform: standing of sockets, and the retention job.
  recheckSockets(address: ThreadAddress): Promise<RpcResult<{ open: number }>>;
  closeSocketsOfDisabledTenant(address: ThreadAddress): Promise<RpcResult<{ closed: number }>>;
  applyRetention(address: ThreadAddress): Promise<RpcResult<{ deletedEntries: number }>>;
}
