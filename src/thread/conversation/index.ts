// The conversation over a bound thread: turns, handoff, feedback, upgrades and the commands both the sockets and the
// Worker's RPC calls run. What the thread object uses of it.
export {
  cancelRun,
  entriesPage,
  helloFrames,
  retriedFrames,
  sendRequest,
  settledReply,
  threadInfo,
} from "./thread-commands";
export { type HeldTurn, ThreadRuntime, type TurnRequest } from "./thread-runtime";
