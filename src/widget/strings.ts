// Every text the widget shows or announces, in English; translations live in ./locales/*.json (loaded on demand), and
// hosts override any of them (`data-strings` JSON or option).

export const DEFAULT_STRINGS = {
  title: "",
  open: "Open chat",
  close: "Close chat",
  newConversation: "Start a new conversation",
  inputLabel: "Message",
  placeholder: "Write a message…",
  send: "Send message",
  stop: "Stop the reply",
  greeting: "Hi! How can I help you today?",
  suggestions: "Suggested questions",
  you: "You",
  agent: "Assistant",
  online: "Online",
  connecting: "Connecting…",
  reconnecting: "Reconnecting…",
  offline: "Offline: messages are sent when you are back",
  paused: "Online",
  unavailable: "Unavailable",
  waiting: "Waiting to send",
  replyStarted: "{agent} is replying…",
  replyFinished: "{agent}: {text}",
  replyFailed: "The reply could not be finished.",
  replyStopped: "Stopped.",
  newMessages: "New messages",
  retry: "Try again",
  tooLong: "Messages are limited to {max} characters.",
  errorOrigin: "This website is not allowed to use this chat.",
  errorAgent: "This chat is not available right now.",
  errorAuth: "We could not sign you in to the chat.",
  errorRateLimited: "Too many requests. Trying again shortly…",
  errorNetwork: "Cannot reach the chat service. Retrying…",
  errorConfig: "This chat is not set up correctly.",
  errorGeneric: "Something went wrong. Please try again.",
  errorMessage: "That message could not be sent: {reason}",
  retryReply: "Retry this reply",
  editMessage: "Edit your message",
  editLabel: "Edit message",
  save: "Save",
  cancel: "Cancel",
  goodReply: "Good reply",
  badReply: "Bad reply",
  feedbackThanks: "Thanks for your feedback.",
  pastConversations: "Past conversations",
  pastLoading: "Loading…",
  pastEmpty: "No past conversations yet.",
  pastFailed: "Your conversations could not be loaded.",
  untitled: "Conversation",
  person: "Support",
  handoffWaiting: "A person will reply soon.",
  handoffWith: "You're chatting with {name}",
  handoffEnded: "You're chatting with {agent} again.",
  updated: "Updated to a new version",
  approvalNeeded: "Approval needed",
  approve: "Approve",
  deny: "Deny",
  approved: "Approved",
  denied: "Denied",
};

export type Strings = typeof DEFAULT_STRINGS;
export type StringKey = keyof Strings;

/** A JSON text or an object as a plain record; anything else (or unparsable JSON) as none. */
function recordOf(raw: unknown): Record<string, unknown> | null {
  let source = raw;
  if (typeof source === "string") {
    try {
      source = JSON.parse(source);
    } catch {
      return null;
    }
  }
  return typeof source === "object" && source !== null ? (source as Record<string, unknown>) : null;
}

/**
 * English overridden by each layer in turn (a JSON text or an object; lowest first), taking only the string-valued
 * known keys: a key a translation lacks stays English, and unknown or non-string values are ignored.
 */
export function layerStrings(...layers: unknown[]): Strings {
  return layerOnto(DEFAULT_STRINGS, layers);
}

/** `layerStrings` over another table of English texts (an on-demand module's own, such as ./attach-strings.ts). */
export function layerOnto<T extends Record<string, string>>(english: T, layers: unknown[]): T {
  const out = { ...english };
  for (const layer of layers) {
    const source = recordOf(layer);
    if (source === null) continue;
    for (const key of Object.keys(out) as (keyof T)[]) {
      const value: unknown = Object.hasOwn(source, key) ? source[key as string] : undefined;
      if (typeof value === "string") out[key] = value as T[keyof T];
    }
  }
  return out;
}

/** Defaults overridden by the string-valued known keys of `raw` (a JSON text or an object); anything else is ignored. */
export function mergeStrings(raw: unknown): Strings {
  return layerStrings(raw);
}

/** Fills `{name}` placeholders; unknown names stay as written. */
export function format(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) =>
    Object.hasOwn(values, name) ? String(values[name]) : whole,
  );
}
