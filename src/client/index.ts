// `agent-threads/client`: the typed client for the admin API, launches and (from ./thread) the thread connection.
export * from "./admin";
export * from "./http";
export * from "./launch";
