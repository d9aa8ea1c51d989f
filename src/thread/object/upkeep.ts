// The thread object's upkeep, run by its scheduler and after changes: the D1 projection, event forwarding, retention,
// the zero-retention purge, the attachments both let go, queued turns that must wake, and idle sockets
// (docs/architecture.md#layers).
import { tenantQuota } from "../../auth/tenant-quota";
import { zeroRetentionIdleMinutes } from "../../control/artifact";
import { WS_CLOSE_IDLE } from "../../shared/errors";
import { LIMITS } from "../../shared/protocol";
import { shorterAge, threadRetentionOverrides } from "../../storage/d1/session-retention";
import { projectionReadDb, projectionTargets } from "../../storage/d1/shards";
import { clearThreadContext } from "../../storage/d1/thread-registry";
import { drainOutbox } from "../../storage/projection/projection-drain";
import { reconcileProjection } from "../../storage/projection/projection-reconcile";
import { attachmentsReleased, attachmentsToRelease } from "../../storage/thread/attachment-release";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import { purgeIdleText } from "../../storage/thread/zero-retention";
import type { ThreadRuntime } from "../conversation";
import { forwardThreadEvents } from "./event-forwarding";
import type { SocketWatch } from "./socket-watch";
import type { ThreadGate } from "./thread-gate";
import type { ThreadSettings } from "./thread-settings";
import type { ThreadSockets } from "./thread-sockets";

/** The object's methods its scheduler calls back by name. */
export type UpkeepCallback =
  | "drainOutbox"
  | "forwardEvents"
  | "purgeIdleText"
  | "releaseAttachments"
  | "resumeQueuedRuns"
  | "expireActions"
  | "sweepIdleConnections";

export interface UpkeepDeps {
  storage: DurableObjectStorage;
  env: Env;
  settings: Readonly<ThreadSettings>;
  gate: ThreadGate;
  sockets: ThreadSockets;
  watch: SocketWatch;
  /**
   * Asks the projection window for another drain: at once when its window has passed (after the drain in flight), else
   * at the window's end with its alarm armed.
   */
  drainSoon: () => Promise<void>;
  /** Schedules one of the object's callbacks in whole seconds; idempotent ones replace an earlier schedule. */
  schedule: (seconds: number, callback: UpkeepCallback, idempotent: boolean) => Promise<void>;
}

export class ThreadUpkeep {
  readonly #deps: UpkeepDeps;

  constructor(deps: UpkeepDeps) {
    this.#deps = deps;
  }

  /** Projects the outbox into D1 and forwards events, side by side; on failure each retries with backoff. */
  async drainOutbox(): Promise<void> {
    const runtime = await this.#deps.gate.stored();
    if (runtime === null) return;
    const { storage, env, settings } = this.#deps;
    // Every change drains: under zero retention it also arms the purge that follows the last activity.
    await this.armIdlePurge(runtime.binding);
    // Side by side: events go to the tenant's events object, not D1, so neither consumer waits for the other.
    const [, outcome] = await Promise.all([
      this.forwardEventsOf(runtime.binding),
      drainOutbox({
        storage,
        db: env.DB,
        targets: () => projectionTargets(env, storage, runtime.binding),
        binding: runtime.binding,
        now: settings.now,
      }),
    ]);
    // Entries committed while this drain ran (or more than a batch waiting) go with the window's next drain, which
    // follows this one without an alarm of ours; what waits for a backoff or a due time waits for the alarm.
    if (outcome.retryInMs === 0) {
      this.#deps.drainSoon().catch((error: unknown) => {
        console.warn(JSON.stringify({ msg: "follow-up drain failed", error: String(error) }));
      });
    } else if (outcome.retryInMs !== undefined) {
      await this.#deps.schedule(Math.max(1, Math.ceil(outcome.retryInMs / 1000)), "drainOutbox", true);
    }
  }

  /** Under zero retention, the purge that follows the last activity (docs/privacy.md). */
  async armIdlePurge(binding: ThreadBinding): Promise<void> {
    const idleMinutes = zeroRetentionIdleMinutes(binding.artifact);
    if (idleMinutes !== null) await this.#deps.schedule(idleMinutes * 60, "purgeIdleText", true);
  }

  async forwardEvents(): Promise<void> {
    const runtime = await this.#deps.gate.stored();
    if (runtime !== null) await this.forwardEventsOf(runtime.binding);
  }

  forwardEventsOf(binding: ThreadBinding): Promise<void> {
    const { storage, env, settings } = this.#deps;
    return forwardThreadEvents(
      {
        storage,
        env,
        now: settings.now,
        retryIn: (seconds) => this.#deps.schedule(seconds, "forwardEvents", true),
      },
      binding,
    );
  }

  /**
   * Under zero retention (docs/privacy.md): once the thread has been idle for the artifact's `idleMinutes`, all of its
   * entry text and tool payloads are blanked; while it is active (or a run is live) it looks again later.
   */
  async purgeIdleText(): Promise<void> {
    const runtime = await this.#deps.gate.stored();
    if (runtime === null) return;
    const idleMinutes = zeroRetentionIdleMinutes(runtime.binding.artifact);
    if (idleMinutes === null) return;
    const outcome = purgeIdleText(this.#deps.storage, idleMinutes, this.#deps.settings.now());
    if ("retryInMs" in outcome) {
      // Not idempotent: this run's own schedule row still exists while it executes.
      await this.#deps.schedule(Math.max(1, Math.ceil(outcome.retryInMs / 1000)), "purgeIdleText", false);
      return;
    }
    runtime.textPurged();
    await this.releaseAttachmentsOf(runtime.binding);
    // The registry's copy of the context variables goes too; if D1 cannot be reached, the purge (idempotent) runs
    // again a minute later until it can.
    try {
      await clearThreadContext(this.#deps.env.DB, runtime.binding.tenantId, runtime.binding.threadId);
    } catch (error) {
      console.error(
        JSON.stringify({ level: "error", message: "context purge deferred", error: String(error) }),
      );
      await this.#deps.schedule(60, "purgeIdleText", false);
    }
  }

  /** Daily: retention over the thread's storage, then a reconciliation of D1 with the thread. */
  async dailyMaintenance(): Promise<void> {
    const runtime = await this.#deps.gate.stored();
    if (runtime === null) return;
    const { storage, env, settings } = this.#deps;
    await this.retain(runtime);
    // A release that failed earlier and whose retry was lost with an eviction is caught up here.
    await this.releaseAttachmentsOf(runtime.binding);
    // The shard reads trust; a control plane that cannot name it fails the check like D1 itself would.
    const db = await projectionReadDb(env, runtime.binding.tenantId).catch(() => null);
    const { missing, failed } =
      db === null
        ? { missing: 0, failed: true }
        : await reconcileProjection({ storage, db, binding: runtime.binding, now: settings.now });
    if (missing > 0 || failed) await this.drainOutbox();
  }

  /**
   * The pinned version's policy with the agent's own max age when shorter, over the thread's storage; nothing while a
   * legal hold covers the thread. Both come from D1: if it cannot answer, the pass waits for the next one (a hold is
   * never risked).
   */
  async retain(runtime: ThreadRuntime | null): Promise<{ deletedEntries: number }> {
    if (runtime === null) return { deletedEntries: 0 };
    const binding = runtime.binding;
    let overrides: { held: boolean; agentMaxAgeDays: number | null };
    try {
      overrides = await threadRetentionOverrides(this.#deps.env.DB, binding);
    } catch (error) {
      console.warn(
        JSON.stringify({ msg: "retention deferred", threadId: binding.threadId, error: String(error) }),
      );
      return { deletedEntries: 0 };
    }
    if (overrides.held) return { deletedEntries: 0 };
    const pinned = binding.artifact.limits?.retention;
    const maxAgeDays = shorterAge(pinned?.maxAgeDays, overrides.agentMaxAgeDays);
    const policy = {
      ...(maxAgeDays !== null ? { maxAgeDays } : {}),
      ...(pinned?.maxMessagesPerThread !== undefined
        ? { maxMessagesPerThread: pinned.maxMessagesPerThread }
        : {}),
    };
    if (policy.maxAgeDays === undefined && policy.maxMessagesPerThread === undefined)
      return { deletedEntries: 0 };
    const result = runtime.applyRetention(policy, this.#deps.settings.now());
    await this.releaseAttachmentsOf(binding);
    await this.drainOutbox();
    return result;
  }

  async releaseAttachments(): Promise<void> {
    const runtime = await this.#deps.gate.stored();
    if (runtime !== null) await this.releaseAttachmentsOf(runtime.binding);
  }

  /**
   * Tells the tenant's ledger which files retention or the zero-retention purge took from this thread: it deletes the
   * objects no other live thread of the tenant uses (docs/privacy.md#attachments). The thread's rows are gone already;
   * if the ledger cannot be reached the list stays and this runs again a minute later.
   */
  async releaseAttachmentsOf(binding: ThreadBinding): Promise<void> {
    const { storage, env } = this.#deps;
    const sha256s = attachmentsToRelease(storage);
    if (sha256s.length === 0) return;
    try {
      await tenantQuota(env, binding.tenantId).releaseThreadAttachments(binding.threadId, sha256s);
      attachmentsReleased(storage, sha256s);
    } catch (error) {
      console.error(
        JSON.stringify({
          level: "error",
          message: "attachment release deferred",
          threadId: binding.threadId,
          error: String(error),
        }),
      );
      // Not idempotent: this may run inside its own scheduled callback, whose row still exists.
      await this.#deps.schedule(60, "releaseAttachments", false);
    }
  }

  /**
   * While turns wait behind a run: an object that died with a queue wakes here (its start seals the cut-off run and
   * starts the next turn); a live one just checks that the next turn is on its way.
   */
  async resumeQueuedRuns(): Promise<void> {
    const runtime = await this.#deps.gate.stored();
    if (runtime === null || !runtime.hasQueuedTurns()) return;
    runtime.resumeQueue();
    // Not idempotent: this run's own schedule row still exists while it executes.
    await this.#deps.schedule(this.#deps.settings.queueCheckSeconds, "resumeQueuedRuns", false);
  }

  /** A pending approval or client tool request reached its time: settle it by its timeout, and the run goes on. */
  async expireActions(): Promise<void> {
    const runtime = await this.#deps.gate.stored();
    runtime?.expireActions();
  }

  /**
   * The socket alarm: closes sockets idle past the agent's limit (4408), re-checks what the open ones rest on once
   * that is due (SOCKET_STANDING_RECHECK_MS, with the activity mark), and wakes again at the earliest of the next
   * idle deadline and the next check, not on a period: a thread whose sockets sit idle is woken once per check, and
   * writes nothing of its own but the alarm (docs/scaling.md, "Holding sockets open"). The thread goes on.
   */
  async sweepIdleConnections(): Promise<void> {
    const { gate, sockets, settings, watch } = this.#deps;
    const now = settings.now();
    let open = 0;
    let next = Number.POSITIVE_INFINITY;
    for (const [connection, state] of sockets.withState()) {
      const runtime = await gate.admit(state.claims);
      const idleSeconds = runtime.ok ? runtime.value.limits.idleTimeoutSeconds : LIMITS.idleTimeoutSeconds;
      const deadline = state.lastActive + idleSeconds * 1000;
      if (now > deadline) connection.close(WS_CLOSE_IDLE, "idle");
      else {
        open += 1;
        next = Math.min(next, deadline + 1);
      }
    }
    if (open === 0) return;
    const retry = now + settings.socketRetrySeconds * 1000;
    // A check due before the next wake anyway is done now rather than on a wake of its own.
    if (watch.dueAt() <= Math.min(next, retry)) {
      const runtime = await gate.stored();
      const read = runtime !== null && (await watch.swept(runtime.binding));
      next = Math.min(next, read ? watch.dueAt() : retry);
    } else next = Math.min(next, watch.dueAt());
    // Not idempotent: this run's own schedule row still exists while it executes.
    await this.#deps.schedule(Math.max(1, Math.ceil((next - now) / 1000)), "sweepIdleConnections", false);
  }
}
