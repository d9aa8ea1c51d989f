// The conversation over a bound thread: turns, handoff, feedback, upgrades and the commands both the sockets and the
// Worker's RPC calls run. What the thread object uses of it.
export {
  addAttachment,
  admitUpload,
  attachmentRules,
  findAttachment,
  listAttachments,
} from "./attachments";
export type { HeldTurn } from "./handoff";
export { changeHandoff, exportThread, postHumanMessage, runInput, upgradeThread } from "./tenant-commands";
export {
  cancelRun,
  entriesPage,
  helloFrames,
  postMessage,
  rateEntry,
  retriedFrames,
  sendRequest,
  threadInfo,
} from "./thread-commands";
export { ThreadRuntime, type TurnRequest } from "./thread-runtime";
