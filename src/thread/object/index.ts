// The thread object's parts: the gate, its sockets and their standing, frame dispatch and the streaming fetch paths.
// The class that assembles them is src/objects/thread-agent.ts.
export { assembleThread, type ThreadParts } from "./assembly";
export { frameTooLarge, onlyProtocolFrames } from "./client-frames";
export { closeCode } from "./frame-dispatch";
export { streamingFetch } from "./streaming-fetch";
export { THREAD_SETTINGS, type ThreadSettings } from "./thread-settings";
