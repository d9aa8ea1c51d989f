// `agent-threads/client`: the typed client for the admin API, launches, the thread connection and the AI SDK transport.
export * from "./admin";
export * from "./ai-transport";
export * from "./analytics";
export * from "./evals";
export * from "./http";
export * from "./launch";
export * from "./thread";
export {
  type ConnectionStatus,
  type FrameOf,
  type HistoryFrame,
  type LiveRun,
  type ReadyFrame,
  type SocketConstructor,
  type SocketLike,
  ThreadClosedError,
  type ThreadConnectionOptions,
  type ThreadLaunch,
} from "./thread-options";
export * from "./webhooks";
