// The thread's WebSocket side after the SDK accepted a socket: who it is, its frame budget, the gate, dispatch of each
// `agent.v1` frame, and the close it is owed (docs/protocol.md).
import type { Connection, ConnectionContext, WSMessage } from "agents";
import { WS_CLOSE_CODE } from "../../shared/errors";
import { readThreadContext } from "../../storage/thread/context-store";
import {
  CLAIMS_HEADER,
  parseRequestMeta,
  parseThreadClaims,
  REQUEST_META_HEADER,
  type ThreadClaims,
} from "../contract";
import type { ThreadRuntime } from "../conversation";
import { parseClientMessage } from "./client-frames";
import { connectionState } from "./connection-state";
import {
  closeCode,
  dispatchFrame,
  dispatchTurn,
  dispatchUpgrade,
  type FrameOutcome,
  isTurnFrame,
} from "./frame-dispatch";
import type { SocketWatch } from "./socket-watch";
import type { ThreadGate } from "./thread-gate";
import type { ThreadSockets } from "./thread-sockets";
import { refreshedToken } from "./token-refresh";

/** The close code a runtime reports for a close frame that carried no status. */
const NO_STATUS_RECEIVED = 1005;

export interface SocketHostDeps {
  storage: DurableObjectStorage;
  env: Env;
  gate: ThreadGate;
  sockets: ThreadSockets;
  watch: SocketWatch;
  /** Arms the idle sweep (idempotent) once a socket is open. */
  armIdleSweep: () => void;
  waitUntil: (promise: Promise<unknown>) => void;
}

export class SocketHost {
  readonly #deps: SocketHostDeps;

  constructor(deps: SocketHostDeps) {
    this.#deps = deps;
  }

  connected(connection: Connection, ctx: ConnectionContext): void {
    const claims = parseThreadClaims(ctx.request.headers.get(CLAIMS_HEADER));
    if (claims === null) {
      connection.close(closeCode("unauthenticated"), "unauthenticated");
      return;
    }
    this.#deps.sockets.opened(
      connection,
      claims,
      parseRequestMeta(ctx.request.headers.get(REQUEST_META_HEADER)),
    );
    this.#deps.armIdleSweep();
    this.#deps.waitUntil(this.#deps.watch.connected(claims));
  }

  async message(connection: Connection, message: WSMessage): Promise<void> {
    const { sockets, gate } = this.#deps;
    const state = connectionState(connection);
    if (state === null) {
      connection.close(closeCode("unauthenticated"), "unauthenticated");
      return;
    }
    // Every frame counts against the socket's budget before it is even parsed, pings and malformed ones included.
    const spent = sockets.spend(connection, state);
    if (spent === null) return;
    const parsed = parseClientMessage(message);
    if (parsed.kind === "too_large") {
      connection.close(WS_CLOSE_CODE.payload_too_large ?? 1009, "frame too large");
      return;
    }
    if (parsed.kind === "malformed") {
      sockets.malformed(connection, spent, parsed.message);
      return;
    }
    const runtime = await gate.admit(spent.claims);
    if (!runtime.ok) {
      connection.close(closeCode(runtime.code), runtime.code);
      return;
    }
    const frame = parsed.frame;
    // `ready` carries the upgrade offer, read (and cached) before the synchronous part of hello.
    if (frame.type === "hello") await runtime.value.refreshOffer();
    // A turn waits for the tenant's quota, an upgrade for its version, a refresh for its signature; every other frame
    // is answered synchronously (hello's catch-up needs it).
    const outcome = isTurnFrame(frame)
      ? await dispatchTurn(runtime.value, frame, spent.claims.sub, spent.meta)
      : frame.type === "upgrade"
        ? await dispatchUpgrade(runtime.value, frame)
        : frame.type === "refresh"
          ? await this.#refresh(runtime.value, spent.claims)
          : dispatchFrame(runtime.value, frame, spent.claims.sub);
    // Read again: frames that arrived while this one waited (for the gate or the quota) spent from the same budget.
    sockets.deliver(connection, connectionState(connection) ?? spent, outcome);
  }

  closed(connection: Connection, code: number): void {
    // A close frame without a status arrives as 1005, which the SDK does not answer: the client would wait out its
    // own timeout and report 1006. Answer it with a normal close (docs/protocol.md#close-codes).
    if (code === NO_STATUS_RECEIVED) {
      try {
        connection.close(1000, "");
      } catch {
        // Already closed: nothing is owed.
      }
    }
    this.#deps.sockets.closed();
  }

  /**
   * The thread re-reads what its sockets rest on and closes those that no longer stand (4403); `read` false when D1
   * could not be read (the asker tries again).
   */
  async recheck(runtime: ThreadRuntime | null): Promise<{ open: number; read: boolean }> {
    const { sockets, watch } = this.#deps;
    const read = runtime !== null && sockets.count() > 0 ? await watch.recheck(runtime.binding) : true;
    return { open: sockets.count(), read };
  }

  /**
   * A token refresh re-checks what a launch checks (tenant, agent, the minting `sk_` key, the visitor) before it
   * signs: a socket that no longer stands was just closed 4403 and gets no token (docs/security.md).
   */
  async #refresh(runtime: ThreadRuntime, claims: ThreadClaims): Promise<FrameOutcome> {
    const standing = await this.#deps.watch.admitsRefresh(runtime.binding, claims);
    if (!standing.ok) {
      if (standing.code === "forbidden") return { frames: [] };
      return { frames: [{ type: "error", code: standing.code, message: standing.message }] };
    }
    const held = readThreadContext(this.#deps.storage).version;
    const preview = runtime.binding.preview !== undefined;
    return { frames: [await refreshedToken(this.#deps.env, claims, held, preview)] };
  }
}
