// An open socket lives only while what admitted it still stands: the thread re-reads its tenant's and agent's status,
// the `sk_` keys that minted its sockets' tokens and its visitor's revocation when a socket connects, every
// SOCKET_STANDING_RECHECK_MS while sockets stay open (its socket alarm), before every token refresh and when asked (a
// disable or revocation fans out), and closes the sockets that no longer stand with 4403. The same read marks the
// thread active, so a tenant's disconnect can find it (docs/security.md, "Open sockets and refreshes").
import { GATE_STALE_IF_ERROR_MS } from "../../auth/gate-agent-cache";
import { standingRefusal } from "../../auth/launch-standing";
import {
  activityMark,
  SOCKET_ACTIVITY_REFRESH_MS,
  SOCKET_STANDING_RECHECK_MS,
} from "../../auth/socket-activity";
import { visitorHash } from "../../auth/visitor-revocation";
import { fail, ok, type Result } from "../../errors";
import { readSocketStanding, type SocketStanding } from "../../storage/d1/socket-standing";
import type { ThreadClaims } from "../contract";
import { closeCode } from "./frame-dispatch";

/**
 * When this thread last marked itself active and last read its standing successfully (epoch ms; the second is what a
 * refresh relies on while D1 is down). Kept on the open sockets themselves, which outlive hibernation: a row would
 * cost a write per check, and with no socket open neither matters (the next socket's connect reads and marks).
 */
export interface WatchStamps {
  markedAt?: number;
  standingAt?: number;
}

/** An open socket as the watch sees it. */
export interface WatchedSocket {
  claims: ThreadClaims;
  close: (code: number, reason: string) => void;
}

export interface SocketWatchDeps {
  db: D1Database;
  /** Keys the visitor revocation hash (DO_NAME_KEY). */
  env: Env;
  now: () => number;
  /** Every open socket of the thread. */
  sockets: () => Iterable<WatchedSocket>;
  /** Closes every socket of the thread with this code. */
  closeAll: (code: number, reason: string) => void;
  /** Stamps every open socket / reads the latest stamps they carry. */
  stamp: (stamps: WatchStamps) => void;
  stamps: () => WatchStamps;
}

type Thread = { tenantId: string; agentId: string; threadId: string };

/** Why a socket with these claims no longer stands, or null while it does. */
export type Verdict = (claims: ThreadClaims) => string | null;

export class SocketWatch {
  readonly #deps: SocketWatchDeps;

  constructor(deps: SocketWatchDeps) {
    this.#deps = deps;
  }

  /**
   * A socket was accepted: mark and check now. The socket is registered before the mark is written, so a
   * disconnect that reads the mark finds the socket, and one that read before it is seen here as the status.
   */
  async connected(thread: Thread): Promise<void> {
    await this.#check(thread, true);
  }

  /** When the open sockets' standing is next due a read (epoch ms): SOCKET_STANDING_RECHECK_MS after the last one. */
  dueAt(): number {
    const { standingAt } = this.#deps.stamps();
    return standingAt === undefined ? this.#deps.now() : standingAt + SOCKET_STANDING_RECHECK_MS;
  }

  /**
   * The socket alarm found sockets still open and their check due: check, and renew the mark once the last one is
   * half a refresh old (so a check a little early still renews it). False when D1 could not be read.
   */
  async swept(thread: Thread): Promise<boolean> {
    const { markedAt } = this.#deps.stamps();
    const mark = markedAt === undefined || this.#deps.now() - markedAt >= SOCKET_ACTIVITY_REFRESH_MS / 2;
    return (await this.#check(thread, mark)) !== null;
  }

  /** A disable or revocation elsewhere asked this thread to look again; false when D1 could not be read. */
  async recheck(thread: Thread): Promise<boolean> {
    return (await this.#check(thread, false)) !== null;
  }

  /**
   * Before a refresh signs a token for `claims`: every socket is checked (those that no longer stand close 4403,
   * this one included) → forbidden. D1 unreachable: the last successful read stands in for a while (nothing can be
   * disabled or revoked while D1 cannot be written), else upstream_unavailable.
   */
  async admitsRefresh(thread: Thread, claims: ThreadClaims): Promise<Result<null>> {
    const verdict = await this.#check(thread, false);
    if (verdict === null) {
      const readAt = this.#deps.stamps().standingAt;
      return readAt !== undefined && this.#deps.now() - readAt < GATE_STALE_IF_ERROR_MS
        ? ok(null)
        : fail("upstream_unavailable", "The token cannot be renewed right now; try again.");
    }
    const refused = verdict(claims);
    return refused === null ? ok(null) : fail("forbidden", `This socket's access ended: ${refused}.`);
  }

  /** The operator disabled the tenant: every socket goes (the caller checked the thread's address). */
  closeAll(): void {
    this.#deps.closeAll(closeCode("forbidden"), "tenant disabled");
  }

  /** Reads the standing (marking first when asked) and closes what no longer stands; null when D1 failed. */
  async #check(thread: Thread, mark: boolean): Promise<Verdict | null> {
    const now = this.#deps.now();
    const sockets = [...this.#deps.sockets()];
    try {
      const hashes = new Map<string, string>();
      for (const { claims } of sockets) {
        if (claims.subjectKind === "visitor" && !hashes.has(claims.sub))
          hashes.set(claims.sub, await visitorHash(this.#deps.env, claims.tenantId, claims.sub));
      }
      const apiKeyIds = [...new Set(sockets.flatMap(({ claims }) => claims.apiKeyId ?? []))];
      const standing = await readSocketStanding(this.#deps.db, {
        ...thread,
        apiKeyIds,
        visitorHashes: [...hashes.values()],
        now: new Date(now).toISOString(),
        ...(mark ? { mark: activityMark(now) } : {}),
      });
      this.#deps.stamp(mark ? { markedAt: now, standingAt: now } : { standingAt: now });
      const verdict = verdictOf(standing, hashes);
      for (const socket of sockets) {
        const refused = verdict(socket.claims);
        if (refused !== null) socket.close(closeCode("forbidden"), refused);
      }
      return verdict;
    } catch (error) {
      // Unread (and unmarked), so the socket alarm tries again soon (src/thread/object/upkeep.ts).
      console.error(
        JSON.stringify({ level: "error", message: "socket standing read failed", error: String(error) }),
      );
      return null;
    }
  }
}

/** The rule thread HTTP applies too, so a socket and a request agree (docs/security.md, "Launch tokens over HTTP"). */
function verdictOf(standing: SocketStanding, hashes: ReadonlyMap<string, string>): Verdict {
  return (claims) =>
    standingRefusal(standing, claims, claims.subjectKind === "visitor" ? hashes.get(claims.sub) : undefined);
}
