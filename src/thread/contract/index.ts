// The Worker↔thread-object contract: the only part of src/thread/ the rest of the Worker imports (scripts/check-layers.mjs).
export {
  CLAIMS_HEADER,
  parseThreadClaims,
  readThreadClaims,
  type ThreadAddress,
  type ThreadClaims,
  threadAddressSchema,
  threadClaimsFrom,
  threadClaimsSchema,
} from "./claims";
export { refusalResponse, responseRefusal } from "./object-error";
export { threadObjectName } from "./object-name";
export {
  parseRequestMeta,
  REQUEST_META_HEADER,
  type RequestMeta,
  readRequestMeta,
  requestMetaSchema,
} from "./request-meta";
export {
  type EntriesPage,
  type EntriesQuery,
  type EvalOutcome,
  type FeedbackBody,
  type FeedbackReply,
  feedbackBodySchema,
  type HandoffView,
  type MessageReply,
  type PostMessage,
  type PreviewPin,
  postMessageSchema,
  type RunInputView,
  type ThreadInfo,
  type UpgradeReply,
} from "./shapes";
export type { ThreadObject } from "./thread-object";
export { rowAddress, threadStub, threadStubFor } from "./thread-stub";
