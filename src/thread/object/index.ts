// The thread object's parts: the gate, its sockets and their standing, frame dispatch and the streaming fetch paths.
// The class that assembles them is src/objects/thread-agent.ts.
export { frameTooLarge, onlyProtocolFrames, parseClientMessage } from "./client-frames";
export { connectionState } from "./connection-state";
export {
  closeCode,
  dispatchFrame,
  dispatchTurn,
  dispatchUpgrade,
  type FrameOutcome,
  isTurnFrame,
} from "./frame-dispatch";
export { keepAliveIfLong } from "./keep-alive";
export { SocketWatch } from "./socket-watch";
export { streamingFetch } from "./streaming-fetch";
export { ThreadGate } from "./thread-gate";
export { THREAD_SETTINGS, type ThreadSettings } from "./thread-settings";
export { ThreadSockets } from "./thread-sockets";
export { refreshedToken } from "./token-refresh";
