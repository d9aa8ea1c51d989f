// `agent-threads/client`: the typed client for the admin API, launches, the thread connection and the AI SDK transport.
export * from "./admin";
export * from "./ai-transport";
export * from "./analytics";
export * from "./http";
export * from "./launch";
export * from "./thread";
export * from "./webhooks";
