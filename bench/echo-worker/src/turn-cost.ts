// B4: what one turn costs — Durable Object SQLite rows written, and the D1 projection's batches, statements and rows —
// measured by driving the product's ThreadRuntime (src/thread/conversation/thread-runtime.ts) with the local model over a metered
// storage, then draining the outbox into a metered D1 (src/storage/projection/projection-drain.ts) after each turn, as the
// thread object does. Same code paths as the thread object, without sockets.
import { DurableObject } from "cloudflare:workers";
import type { Artifact } from "../../../src/control/artifact";
import { insertThread } from "../../../src/storage/d1/thread-registry";
import { drainOutbox } from "../../../src/storage/projection/projection-drain";
import { ProjectionWindow } from "../../../src/storage/projection/projection-lane";
import type { ThreadBinding } from "../../../src/storage/thread/pin-store";
import { migrateThreadSchema } from "../../../src/storage/thread/thread-schema";
import { ThreadRuntime } from "../../../src/thread/conversation/thread-runtime";
import type { BenchEnv } from "./bench-env";
import { D1Meter, type D1Tally } from "./d1-meter";
import { StorageMeter, type StorageTally } from "./instrumented-storage";

export interface TurnCostSample {
  /** The turn itself: user entry, run, streamed chunks, reply. */
  turn: StorageTally;
  /** The outbox drain after it: DO rows (outbox deletes, meta) and the D1 batch. */
  drainDo: StorageTally;
  d1: D1Tally;
  /** Outbox rows the drain projected. */
  drained: number;
  /** Wall times in workerd's whole milliseconds: accept → first delta, accept → sealed, and the drain. */
  firstDeltaMs: number | null;
  turnMs: number;
  drainMs: number;
}

export interface TurnCostResult {
  turns: TurnCostSample[];
  deltasPerTurn: number;
  /** Present when the run drained through a projection window instead of after every turn. */
  coalesced?: CoalescedCost;
}

/** A run of turns back to back with the drains coalesced by the product's projection window. */
export interface CoalescedCost {
  windowMs: number;
  turns: number;
  drains: number;
  /** Every DO row the turns and their drains wrote (stream-chunk rows apart), and the D1 round trips. */
  turn: StorageTally;
  d1: D1Tally;
}

/** Stream-chunk rows (resume log) are reported apart from the rows a turn keeps. */
export const CHUNK_TABLE = "run_chunks";

export class TurnCost extends DurableObject<BenchEnv> {
  constructor(ctx: DurableObjectState, env: BenchEnv) {
    super(ctx, env);
    migrateThreadSchema(ctx.storage);
  }

  async run(options: { turns: number; chunks: number; windowMs?: number }): Promise<TurnCostResult> {
    const meter = new StorageMeter();
    const d1 = new D1Meter();
    d1.countSingles(this.env.DB);
    const db = d1.wrap(this.env.DB);
    const storage = meter.wrap(this.ctx.storage);
    const artifact: Artifact = {
      schemaVersion: 1,
      name: "Bench agent",
      instructions: "Echo the visitor.",
      model: { provider: "local", model: "echo", local: { chunks: options.chunks, chunkDelayMs: 0 } },
      limits: { maxSendsPerMinute: 1000 },
    };
    const binding: ThreadBinding = {
      tenantId: "ten_bench",
      environment: "development",
      agentId: "agt_bench",
      threadId: `thr_${this.ctx.id.toString().slice(0, 26)}`,
      versionId: "ver_bench",
      version: 1,
      digest: "bench",
      artifact,
      boundAt: Date.now(),
    };
    // The projection writes only for threads in the registry, as the launch route records them.
    await insertThread(this.env.DB, {
      tenantId: binding.tenantId,
      id: binding.threadId,
      agentId: binding.agentId,
      environment: binding.environment,
      subject: "bench-subject",
      subjectKind: "user",
      createdAt: new Date().toISOString(),
    });
    const turns: TurnCostSample[] = [];
    const windowMs = options.windowMs;
    let drains = 0;
    // As the thread object coalesces: the first drain at once, the rest at most once per window.
    const projection = new ProjectionWindow({
      windowMs: () => windowMs ?? 0,
      now: Date.now,
      after: (ms, fn) => {
        const timer = setTimeout(fn, ms);
        return () => clearTimeout(timer);
      },
      drain: async () => {
        const drained = await drainOutbox({ storage, db, binding, now: Date.now });
        if (drained.drained > 0) drains += 1;
        if (drained.failed) drainFailures += 1;
      },
      arm: async () => {},
    });
    let afterTurnDone: (() => void) | null = null;
    let drainFailures = 0;
    let turnStart = 0;
    let firstDeltaAt: number | null = null;
    // A listening peer, as a connected socket would be: it notes when the first delta of the turn is sent.
    const peer = {
      id: "bench-peer",
      send: (frame: { type: string }) => {
        if (frame.type === "delta" && firstDeltaAt === null) firstDeltaAt = performance.now();
      },
    };
    const runtime = new ThreadRuntime({
      storage,
      // For a `local` model the runtime reads only plain vars (ENVIRONMENT, PUBLIC_HOSTS), which the bench Worker
      // declares as the product does; it has none of the product's other bindings.
      env: this.env as unknown as Env,
      binding,
      now: Date.now,
      peers: () => [peer],
      keepAliveWhile: (fn) => fn(),
      // No tenant quota in the bench: every run gets a slot that counts nothing.
      quota: { acquire: async () => ({ ok: true, value: { release: async () => {} } }) },
      // After every sealed turn: project the outbox into D1 (coalesced when a window is given).
      afterTurn: async () => {
        if (windowMs !== undefined) {
          afterTurnDone?.();
          await projection.request();
          return;
        }
        try {
          const turn = meter.take();
          d1.take();
          const sealedAt = performance.now();
          const drained = await drainOutbox({ storage, db, binding, now: Date.now });
          if (drained.failed) drainFailures += 1;
          turns.push({
            turn,
            drainDo: meter.take(),
            d1: d1.take(),
            drained: drained.drained,
            firstDeltaMs: firstDeltaAt === null ? null : firstDeltaAt - turnStart,
            turnMs: sealedAt - turnStart,
            drainMs: performance.now() - sealedAt,
          });
        } finally {
          afterTurnDone?.();
        }
      },
    });
    meter.take();
    d1.take();
    for (let i = 0; i < options.turns; i += 1) {
      const projected = new Promise<void>((resolve) => {
        afterTurnDone = resolve;
      });
      turnStart = performance.now();
      firstDeltaAt = null;
      const accepted = await runtime.accept({
        kind: "send",
        clientMessageId: `bench_turn_${i}_${Date.now()}`,
        text: `Turn ${i}`,
        subject: "bench-subject",
      });
      if (!accepted.ok) throw new Error(`turn ${i} refused: ${accepted.code} ${accepted.message}`);
      const run = await runtime.settled(accepted.value.run.id);
      if (run?.status !== "succeeded") {
        throw new Error(`turn ${i} ended ${run?.status ?? "unknown"}: ${JSON.stringify(run?.error ?? null)}`);
      }
      await projected;
    }
    if (windowMs !== undefined) {
      // Every turn's drain has started by now; one more request waits for the last window to close.
      await projection.request();
      if (drainFailures > 0) throw new Error(`${drainFailures} projection batches failed`);
      return {
        turns: [],
        deltasPerTurn: options.chunks,
        coalesced: { windowMs, turns: options.turns, drains, turn: meter.take(), d1: d1.take() },
      };
    }
    if (drainFailures > 0) throw new Error(`${drainFailures} projection batches failed`);
    if (turns.length !== options.turns)
      throw new Error(`${options.turns - turns.length} turns were not projected`);
    return { turns, deltasPerTurn: options.chunks };
  }
}
