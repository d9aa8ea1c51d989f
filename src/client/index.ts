// `agent-threads/client`: what a tenant's code imports to talk to threads.
export * from "./ai-transport";
export * from "./thread";
