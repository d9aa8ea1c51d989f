// An open socket keeps its thread findable by a tenant's disconnect: the thread marks itself active in D1 when a
// socket connects and while sockets stay open, and closes every socket (4403) when the mark finds the tenant disabled.
import { markSocketActivity, SOCKET_ACTIVITY_REFRESH_MS } from "../auth/socket-activity";
import { readMetaInteger, writeMeta } from "../storage/thread-meta";
import { closeCode } from "./frame-dispatch";

/** When this thread last marked itself active (epoch ms), kept across hibernation so a wake does not re-mark. */
const MARKED_AT_KEY = "socket_activity_marked_at";

export interface TenantWatchDeps {
  storage: DurableObjectStorage;
  db: D1Database;
  now: () => number;
  /** Closes every socket of the thread with this code. */
  closeAll: (code: number, reason: string) => void;
}

export class TenantWatch {
  readonly #deps: TenantWatchDeps;

  constructor(deps: TenantWatchDeps) {
    this.#deps = deps;
  }

  /**
   * A socket was accepted: mark and check now. The socket is registered before the mark is written, so a
   * disconnect that reads the mark finds the socket, and one that read before it is seen here as the status.
   */
  connected(thread: { tenantId: string; threadId: string }): Promise<void> {
    return this.#mark(thread);
  }

  /** The idle sweep found sockets still open: mark and check once the last mark is a refresh old. */
  async swept(thread: { tenantId: string; threadId: string }): Promise<void> {
    const markedAt = readMetaInteger(this.#deps.storage, MARKED_AT_KEY);
    if (markedAt !== null && this.#deps.now() - markedAt < SOCKET_ACTIVITY_REFRESH_MS) return;
    await this.#mark(thread);
  }

  /** The operator disabled the tenant: every socket goes (the caller checked the thread's address). */
  closeAll(): void {
    this.#deps.closeAll(closeCode("forbidden"), "tenant disabled");
  }

  async #mark(thread: { tenantId: string; threadId: string }): Promise<void> {
    const now = this.#deps.now();
    try {
      const status = await markSocketActivity(this.#deps.db, thread, now);
      writeMeta(this.#deps.storage, MARKED_AT_KEY, String(now));
      if (status !== "active") this.closeAll();
    } catch (error) {
      // Unmarked, so the next sweep tries again.
      console.error(
        JSON.stringify({ level: "error", message: "socket activity mark failed", error: String(error) }),
      );
    }
  }
}
