// What a thread connection is given and tells: its launch, the WebSocket it uses, its options and statuses, the run
// it streams, what a close code makes it do next, and the error that ends it for good.
import type { AttachmentRef, ClientFrame, MultitaskStrategy, ServerFrame } from "../shared/protocol";
import type { FetchLike } from "./http";

// The protocol's names, repeated here so that the client bundle imports no zod (src/shared/protocol.ts has them too).
export const PROTOCOL = "agent.v1";
export const PROTOCOL_VERSION = 1;
export const BEARER_PREFIX = "bearer.";

/** What `send` takes: the text, where it goes in the tree, and files uploaded with `uploadAttachment` (refs or ids). */
export interface SendInput {
  text: string;
  parentId?: string;
  multitask?: MultitaskStrategy;
  clientMessageId?: string;
  attachments?: (AttachmentRef | string)[];
}

export function sendFrame(input: SendInput): Extract<ClientFrame, { type: "send" }> {
  const attachments = input.attachments?.map((a) => (typeof a === "string" ? a : a.id));
  return {
    type: "send",
    clientMessageId: input.clientMessageId ?? randomId(),
    text: input.text,
    ...(input.parentId !== undefined ? { parentId: input.parentId } : {}),
    ...(input.multitask !== undefined ? { multitask: input.multitask } : {}),
    ...(attachments !== undefined && attachments.length > 0 ? { attachments } : {}),
  };
}

/** A new `clientMessageId`. */
export function randomId(): string {
  return `cm_${crypto.randomUUID().replaceAll("-", "")}`;
}

/** What `POST /v1/agent-sessions` answers that a connection needs (the whole response fits). */
export interface ThreadLaunch {
  token: string;
  threadId: string;
  websocketUrl: string;
  expiresAt?: string;
}

/** The part of a WebSocket a connection uses: the browser's, Node 22's global one, or the `ws` package's. */
export interface SocketLike {
  readonly readyState: number;
  readonly protocol: string;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}

/** Node's (undici) WebSocket also takes `{protocols, headers}`; browsers only a protocol list. */
export type SocketConstructor = new (
  url: string,
  protocols: string[] | { protocols: string[]; headers: Record<string, string> },
) => SocketLike;

export interface ThreadConnectionOptions {
  launch: ThreadLaunch;
  /**
   * A new launch for the same thread (your backend's `POST /v1/agent-sessions` with the thread id). Called when the
   * server closes with 4401, when the token is about to expire before a reconnect, and after two reconnects in a row
   * failed before the socket opened (a refused upgrade is invisible to a browser).
   */
  refreshLaunch?: (current: ThreadLaunch) => Promise<ThreadLaunch>;
  /** Defaults to `globalThis.WebSocket` (browsers, Node 22+). */
  WebSocket?: SocketConstructor;
  /** For attachment uploads and downloads (docs/client.md#attachments); defaults to the global `fetch`. */
  fetch?: FetchLike;
  /** Node only: the `Origin` header a public agent checks (a browser always sends its page's own). */
  origin?: string;
  /** Reconnect delays: `initialMs` doubling up to `maxMs`, with jitter. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** A run to resume on the first `hello` (kept from an earlier page, with the last delta's `seq` it showed). */
  resume?: { runId: string; afterSeq: number };
}

export type ConnectionStatus = "idle" | "connecting" | "open" | "reconnecting" | "closed";

export type Listener = (frame: ServerFrame) => void;
export type StatusListener = (status: ConnectionStatus, close?: { code: number; reason: string }) => void;

export type FrameOf<T extends ServerFrame["type"]> = Extract<ServerFrame, { type: T }>;
export type ReadyFrame = FrameOf<"ready">;
export type HistoryFrame = FrameOf<"history">;

/** The run being streamed: its id, the last delta's `seq` and the text so far. */
export interface LiveRun {
  runId: string;
  lastSeq: number;
  text: string;
}

/** Why a connection stopped for good: a close code the client must not retry (docs/protocol.md, Close codes). */
export class ThreadClosedError extends Error {
  constructor(
    readonly code: number,
    reason: string,
  ) {
    super(`The thread connection closed (${code}${reason ? `: ${reason}` : ""}).`);
    this.name = "ThreadClosedError";
  }
}

/** Close codes after which reconnecting cannot help: a client bug, another tenant's thread, not found. */
const TERMINAL_CLOSES = new Set([1000, 4400, 4403, 4404]);
const IDLE_CLOSE = 4408;
const TOKEN_CLOSE = 4401;
const RATE_CLOSE = 4429;

/**
 * What a connection does after its socket closed with `code` (docs/protocol.md, Close codes): stop for good, wait
 * idle for the next command, or reconnect after a backoff delay (refreshing the launch first after a 4401).
 */
export function afterClose(
  code: number,
  attempt: number,
  options: Pick<ThreadConnectionOptions, "backoff" | "refreshLaunch">,
): "stop" | "idle" | { delayMs: number; refresh: boolean } {
  if (TERMINAL_CLOSES.has(code)) return "stop";
  if (code === IDLE_CLOSE) return "idle";
  if (code === TOKEN_CLOSE && options.refreshLaunch === undefined) return "stop";
  const { initialMs = 250, maxMs = 10_000 } = options.backoff ?? {};
  const base = Math.min(maxMs, initialMs * 2 ** attempt);
  const delayMs = (code === RATE_CLOSE ? Math.max(base, 5_000) : base) * (0.8 + Math.random() * 0.4);
  return { delayMs, refresh: code === TOKEN_CLOSE };
}
