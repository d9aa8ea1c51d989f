// Wire constants the widget needs without importing src/shared/protocol.ts (which would bundle zod); a unit test
// keeps them equal to the protocol's own values.
export const PROTOCOL = "agent.v1";
export const PROTOCOL_VERSION = 1;
export const BEARER_PREFIX = "bearer.";
/** Mirrors `LIMITS.maxMessageChars`. */
export const MAX_MESSAGE_CHARS = 8000;
