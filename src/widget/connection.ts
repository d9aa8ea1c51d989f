// One thread's WebSocket: launch, connect with the subprotocol token, resume, back off, refresh tokens, go offline.
import type { ClientFrame, ServerFrame } from "../shared/protocol";
import { backoffDelay, closeAction, rateLimitedDelay } from "./backoff";
import { BEARER_PREFIX, PROTOCOL, PROTOCOL_VERSION } from "./constants";
import { parseServerFrame } from "./frames";
import type { Launcher, LaunchReason, Session } from "./launch";
import { type WidgetError, warnOnce, widgetError } from "./widget-error";

/** Refresh a token this long before it expires, so a reconnect never presents an expired one. */
const REFRESH_BEFORE_MS = 60_000;
/** Failed upgrades in a row, with fresh tokens, before the console names the likely cause. */
const UPGRADE_FAILURES_TO_WARN = 3;

export type ConnectionState = "idle" | "connecting" | "open" | "reconnecting" | "offline" | "failed";

export interface ConnectionEvents {
  state(state: ConnectionState, error?: WidgetError): void;
  frame(frame: ServerFrame): void;
  /** The run to resume on `hello`, with the last seq already shown. */
  resume(): { runId: string; afterSeq: number } | undefined;
  /** Whether anything waits on the socket (unsent messages, a live reply): then an idle close reconnects at once. */
  busy(): boolean;
}

const TERMINAL_CLOSE_TEXT: Record<number, string> = {
  4400: "closed after invalid frames (4400).",
  4403: "refused this agent or origin (4403).",
  4404: "the thread is gone (4404).",
  4409: "refused the request (4409).",
};

export class Connection {
  #launcher: Launcher;
  readonly #events: ConnectionEvents;
  #session: Session | null = null;
  #ws: WebSocket | null = null;
  #state: ConnectionState = "idle";
  #running = false;
  #attempt = 0;
  #relaunches = 0;
  #upgradeFailures = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #refreshTimer: ReturnType<typeof setTimeout> | undefined;
  #connecting = false;

  constructor(launcher: Launcher, events: ConnectionEvents) {
    this.#launcher = launcher;
    this.#events = events;
    addEventListener("online", this.#online);
    addEventListener("offline", this.#offline);
  }

  get state(): ConnectionState {
    return this.#state;
  }

  get threadId(): string | undefined {
    return this.#session?.threadId;
  }

  /**
   * A launch token for the thread's HTTP API and `/v1/me/threads`: the current one, renewed first when it is about
   * to expire (an idle socket no longer renews it). Undefined before the first launch or when renewing fails.
   */
  async freshToken(): Promise<string | undefined> {
    const current = this.#session;
    if (current === null || current.expiresAt - Date.now() > REFRESH_BEFORE_MS) return current?.token;
    const result = await this.#launcher("refresh");
    if (!result.ok) return undefined;
    if (this.#session === current) this.#session = result.session;
    return result.session.token;
  }

  /** Switches how tokens are obtained (public → private after `identify`); the next connect launches anew. */
  setLauncher(launcher: Launcher): void {
    this.#launcher = launcher;
    this.restart();
  }

  /** Connects unless already connected or connecting; safe to call often. */
  start(): void {
    this.#running = true;
    if (this.#ws !== null || this.#connecting || this.#timer !== undefined) return;
    if (this.#state === "failed") this.#attempt = 0;
    if (!navigator.onLine) {
      this.#set("offline");
      return;
    }
    void this.#connect();
  }

  stop(): void {
    this.#running = false;
    clearTimeout(this.#timer);
    clearTimeout(this.#refreshTimer);
    this.#timer = this.#refreshTimer = undefined;
    this.#drop(1000);
    this.#set("idle");
  }

  /** A new thread or a new identity: forget the session and connect again. */
  restart(): void {
    const wasRunning = this.#running;
    this.stop();
    this.#session = null;
    this.#attempt = 0;
    if (wasRunning) this.start();
  }

  /** Drops the socket and connects again at once with the same token, resuming from the last seq shown. */
  reconnect(): void {
    this.#drop(1000);
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#running && !this.#connecting) void this.#connect();
  }

  destroy(): void {
    this.stop();
    removeEventListener("online", this.#online);
    removeEventListener("offline", this.#offline);
  }

  /** Sends a frame on a ready socket; false when there is none (the caller keeps it for later). */
  send(frame: ClientFrame): boolean {
    if (this.#state !== "open" || this.#ws === null) return false;
    try {
      this.#ws.send(JSON.stringify(frame));
      return true;
    } catch {
      return false;
    }
  }

  #set(state: ConnectionState, error?: WidgetError): void {
    this.#state = state;
    this.#events.state(state, error);
  }

  async #ensureSession(reason: LaunchReason): Promise<Session | null> {
    const current = this.#session;
    if (current !== null && current.expiresAt - Date.now() > REFRESH_BEFORE_MS) return current;
    const result = await this.#launcher(current === null ? reason : "refresh");
    if (!this.#running) return null;
    if (!result.ok) {
      this.#failed(result.error, result.retryAfter);
      return null;
    }
    this.#session = result.session;
    return result.session;
  }

  async #connect(): Promise<void> {
    this.#connecting = true;
    this.#set(this.#attempt === 0 && this.#state !== "reconnecting" ? "connecting" : "reconnecting");
    const session = await this.#ensureSession(this.#relaunches > 0 ? "expired" : "start");
    this.#connecting = false;
    if (session === null || !this.#running) return;
    let ws: WebSocket;
    try {
      ws = new WebSocket(session.websocketUrl, [PROTOCOL, BEARER_PREFIX + session.token]);
    } catch (error) {
      this.#failed(
        widgetError(
          "network",
          `cannot open ${session.websocketUrl} (${String(error)}); check connect-src.`,
          true,
        ),
      );
      return;
    }
    this.#ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      const resume = this.#events.resume();
      ws.send(
        JSON.stringify({
          type: "hello",
          protocol: PROTOCOL_VERSION,
          ...(resume ? { resume } : {}),
        } satisfies ClientFrame),
      );
    };
    ws.onmessage = (event) => {
      if (ws !== this.#ws) return;
      const frame = parseServerFrame(event.data);
      if (frame === null) return;
      if (frame.type === "token") {
        this.#session = { ...session, ...frame, expiresAt: Date.parse(frame.expiresAt) };
        this.#scheduleRefresh();
      }
      if (frame.type === "ready") {
        this.#attempt = this.#relaunches = this.#upgradeFailures = 0;
        this.#set("open");
        this.#scheduleRefresh();
      }
      this.#events.frame(frame);
    };
    ws.onclose = (event) => {
      if (ws !== this.#ws) return;
      this.#ws = null;
      this.#closed(event.code, opened, session);
    };
  }

  #closed(code: number, opened: boolean, session: Session): void {
    clearTimeout(this.#refreshTimer);
    if (!this.#running) return;
    if (!navigator.onLine) {
      this.#set("offline");
      return;
    }
    if (!opened) {
      // A refused upgrade (expired token, origin, socket cap) reaches a page as a bare 1006: launch again next time,
      // which turns a refusal into a readable answer.
      this.#session = null;
      if (++this.#upgradeFailures === UPGRADE_FAILURES_TO_WARN) {
        warnOnce(
          `the WebSocket to ${new URL(session.websocketUrl).origin} keeps failing before it opens; ` +
            "check connect-src in your Content-Security-Policy.",
        );
      }
    }
    switch (closeAction(code)) {
      case "relaunch":
        this.#session = null;
        if (++this.#relaunches > 2) {
          this.#failed(widgetError("auth_failed", "the service keeps refusing fresh tokens (4401)."));
          return;
        }
        this.#schedule(0);
        return;
      case "idle":
        this.#set("idle");
        if (this.#events.busy()) this.start();
        return;
      case "rate_limited":
        this.#schedule(
          rateLimitedDelay(this.#attempt++),
          widgetError("rate_limited", "too many messages on this thread (4429); retrying.", true),
        );
        return;
      case "stop":
        this.#failed(
          widgetError("server_error", TERMINAL_CLOSE_TEXT[code] ?? `the connection was closed (${code}).`),
        );
        return;
      case "reconnect":
        this.#schedule(backoffDelay(this.#attempt++));
        return;
    }
  }

  #failed(error: WidgetError, retryAfter?: number): void {
    if (!error.retryable) {
      this.#running = false;
      this.#set("failed", error);
      return;
    }
    if (!navigator.onLine) {
      this.#set("offline");
      return;
    }
    const delay =
      error.code === "rate_limited"
        ? rateLimitedDelay(this.#attempt++, retryAfter)
        : backoffDelay(this.#attempt++);
    this.#schedule(delay, error);
  }

  #schedule(delay: number, error?: WidgetError): void {
    clearTimeout(this.#timer);
    this.#set("reconnecting", error);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#running) void this.#connect();
    }, delay);
  }

  /** Renews the token while connected, so the next reconnect needs no launch round-trip and never an expired one. */
  #scheduleRefresh(): void {
    clearTimeout(this.#refreshTimer);
    const session = this.#session;
    if (session === null) return;
    const wait = Math.max(5_000, session.expiresAt - Date.now() - REFRESH_BEFORE_MS);
    // The thread signs the new token itself (`token` frame): no launch, no quota, no D1 write.
    this.#refreshTimer = setTimeout(() => this.send({ type: "refresh" }), wait);
  }

  #drop(code: number): void {
    const ws = this.#ws;
    this.#ws = null;
    if (ws !== null) {
      ws.onopen = ws.onmessage = ws.onclose = null;
      try {
        ws.close(code);
      } catch {}
    }
  }

  #online = (): void => {
    if (!this.#running || this.#state === "open" || this.#state === "failed") return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#attempt = 0;
    this.start();
  };

  #offline = (): void => {
    if (!this.#running) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#drop(1000);
    this.#set("offline");
  };
}
