// The thread object's parts, built once per instance and wired to each other: sockets, gate, socket watch, upkeep,
// the socket host and the projection window. The class (src/objects/thread-agent.ts) hands in what only it has.
import type { Connection } from "agents";
import { type TokenLedger, tenantRunQuota } from "../../auth/run-quota";
import type { DeploymentStore } from "../../control/deployment-store";
import { ProjectionWindow, projectionWindowMs } from "../../storage/projection/projection-lane";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import { unforwardedEventCount } from "../../storage/thread/thread-events";
import { readMeta, writeMeta } from "../../storage/thread/thread-meta";
import { tokensRecordedSince } from "../../storage/thread/usage-store";
import { ThreadRuntime } from "../conversation";
import { keepAliveIfLong } from "./keep-alive";
import { SocketHost } from "./socket-host";
import { SocketWatch } from "./socket-watch";
import { ThreadGate } from "./thread-gate";
import type { ThreadSettings } from "./thread-settings";
import { ThreadSockets } from "./thread-sockets";
import { ThreadUpkeep, type UpkeepCallback } from "./upkeep";

/** Every method of the object its scheduler calls back by name. */
export type ScheduledCallback = UpkeepCallback | "projectionDue";

/** What only the Durable Object class has: its state, the SDK's scheduler and keep-alive, and its own teardown. */
export interface ObjectHooks {
  ctx: DurableObjectState;
  env: Env;
  settings: Readonly<ThreadSettings>;
  connections: () => Iterable<Connection>;
  /** Schedules a callback in whole seconds; an idempotent one replaces an earlier schedule of it. */
  schedule: (seconds: number, callback: ScheduledCallback, idempotent: boolean) => Promise<void>;
  /** The daily maintenance schedule (idempotent: one per thread however often the object wakes). */
  scheduleDaily: () => void;
  keepAlive: () => Promise<() => void>;
  /** Drains the outbox into D1 (the object's `drainOutbox`). */
  drain: () => Promise<void>;
  /** Erases every trace of a thread never launched. */
  vanish: () => Promise<void>;
  /** The control plane (`CONTROL_PLANE`): read only to bind a new thread or offer an upgrade, never per turn. */
  store: () => DeploymentStore;
}

export interface ThreadParts {
  sockets: ThreadSockets;
  projection: ProjectionWindow;
  gate: ThreadGate;
  watch: SocketWatch;
  upkeep: ThreadUpkeep;
  host: SocketHost;
}

export function assembleThread(hooks: ObjectHooks): ThreadParts {
  const { ctx, env, settings } = hooks;
  const sockets = new ThreadSockets(hooks.connections, settings.now, ctx.storage);
  // At most one drain per projection window, every turn since the last one in its batch.
  const projection = new ProjectionWindow({
    windowMs: () => settings.projectionWindowMs ?? projectionWindowMs(env.PROJECTION_WINDOW_MS),
    now: settings.now,
    after: settings.after,
    drain: hooks.drain,
    // Whole seconds (the scheduler's unit), a second past the window: only an evicted object needs it.
    arm: (ms) => hooks.schedule(Math.ceil(ms / 1000) + 1, "projectionDue", true),
  });
  const gate: ThreadGate = new ThreadGate({
    storage: ctx.storage,
    db: env.DB,
    ownerProofKey: env.DO_NAME_KEY,
    store: hooks.store,
    now: settings.now,
    unknownThread: () => ctx.waitUntil(hooks.vanish()),
    start: (binding) => start(binding),
  });
  const watch = new SocketWatch({
    db: env.DB,
    env,
    now: settings.now,
    sockets: () => sockets.watched(),
    closeAll: (code, reason) => sockets.closeAll(code, reason),
    stamp: (stamps) => sockets.stamp(stamps),
    stamps: () => sockets.stamps(),
  });
  const upkeep = new ThreadUpkeep({
    storage: ctx.storage,
    env,
    settings,
    gate,
    sockets,
    watch,
    drainSoon: () => projection.request(),
    schedule: hooks.schedule,
  });
  const host = new SocketHost({
    storage: ctx.storage,
    env,
    gate,
    sockets,
    watch,
    armIdleSweep: () => void hooks.schedule(settings.socketRetrySeconds, "sweepIdleConnections", true),
    waitUntil: (promise) => ctx.waitUntil(promise),
  });

  /** The runtime of a binding: once per object lifetime (and again after the gate forgets it). */
  function start(binding: ThreadBinding): ThreadRuntime {
    const runtime = new ThreadRuntime({
      storage: ctx.storage,
      env,
      binding,
      now: settings.now,
      peers: () => sockets.readyPeers(),
      keepAliveWhile: keepAliveIfLong(hooks.keepAlive, settings),
      afterTurn: () => projection.request(),
      // The object's clock for the quota's windows; the lease renewals and the count's flush on real timers.
      quota: tenantRunQuota(env, binding, { now: settings.now, after: realAfter }, tokenLedger(ctx.storage)),
      store: hooks.store,
      onQueued: () => void hooks.schedule(settings.queueCheckSeconds, "resumeQueuedRuns", true),
      armExpiry: (atMs) =>
        void hooks.schedule(Math.max(1, Math.ceil((atMs - settings.now()) / 1000)), "expireActions", true),
    });
    runtime.recoverInterruptedRuns();
    // `thread.created` was recorded as the binding was written.
    if (unforwardedEventCount(ctx.storage) > 0) ctx.waitUntil(upkeep.forwardEventsOf(binding));
    hooks.scheduleDaily();
    return runtime;
  }

  return { sockets, projection, gate, watch, upkeep, host };
}

function realAfter(ms: number, fn: () => void): () => void {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
}

/** When the thread last counted tokens to its tenant's quota while holding some back (src/auth/run-quota.ts). */
const TOKENS_HELD_SINCE_KEY = "quota_tokens_held_since";

function tokenLedger(storage: DurableObjectStorage): TokenLedger {
  // The thread may have been erased meanwhile: its tables went with what it owed.
  const quietly = (fn: () => void) => {
    try {
      fn();
    } catch {}
  };
  return {
    heldSince: () => {
      const since = Number(readMeta(storage, TOKENS_HELD_SINCE_KEY) || Number.NaN);
      return Number.isSafeInteger(since) ? since : null;
    },
    hold: (since) => quietly(() => writeMeta(storage, TOKENS_HELD_SINCE_KEY, String(since))),
    // Emptied rather than deleted: once the row exists, a hold and a clear are one row written each.
    clear: () => quietly(() => writeMeta(storage, TOKENS_HELD_SINCE_KEY, "")),
    tokensSince: (since) => tokensRecordedSince(storage, since),
  };
}
