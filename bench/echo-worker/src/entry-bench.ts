// B3: the product's entry store (src/storage/thread/entry-store.ts) in a Durable Object of its own, timed from inside the
// object so the figures are storage work only. Its baselines run in the same object: plain INSERTs for appends, and
// "list every entry and walk parents in memory" for branch reads.
import { DurableObject } from "cloudflare:workers";
import { EntryStore } from "../../../src/storage/thread/entry-store";
import { migrateThreadSchema } from "../../../src/storage/thread/thread-schema";
import type { BenchEnv } from "./bench-env";

export interface TreeShape {
  /** Entries on the first conversation line. */
  trunk: number;
  /** Branches started below a random trunk entry (a regenerate or an edit). */
  forks: number;
  /** Entries on each fork. */
  forkLength: number;
  seed: number;
}

/**
 * Timers in workerd tick in whole milliseconds, so latencies are means over batches of consecutive operations
 * (`APPEND_BATCH` appends, `reps` reads), each batch one sample.
 */
export const APPEND_BATCH = 100;

export interface BuildResult {
  entries: number;
  /** Mean milliseconds per EntryStore.append, one sample per batch of APPEND_BATCH. */
  appendMs: number[];
  appendTotalMs: number;
  /** Mean milliseconds per plain INSERT (own transaction) into a bare table in the same object, per batch. */
  rawInsertMs: number[];
  rawInsertTotalMs: number;
  newestLeafDepth: number;
}

export interface ReadResult {
  branchDepth: number;
  /** Newest leaf found and its whole branch read through EntryStore.branch (pages of 1,000). */
  branchFullMs: number[];
  /** Newest leaf found and the first page (50 entries, what `history` returns by default). */
  branchPageMs: number[];
  /** Baseline: every entry listed through EntryStore.all, newest leaf found and parents walked in memory. */
  listWalkMs: number[];
  /** Diagnostic: the branch's recursive CTE alone (rows fetched, not decoded into entries). */
  branchSqlOnlyMs: number[];
}

/** A small seeded PRNG so every run builds the same tree. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function body(n: number): { text: string } {
  return {
    text: `Message ${n}: a sentence or two of conversation, about as long as a typical chat turn is.`,
  };
}

export class EntryBench extends DurableObject<BenchEnv> {
  readonly #store: EntryStore;

  constructor(ctx: DurableObjectState, env: BenchEnv) {
    super(ctx, env);
    migrateThreadSchema(ctx.storage);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS bench_raw (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, parent_id TEXT, body_json TEXT NOT NULL)",
    );
    this.#store = new EntryStore(ctx.storage, { now: Date.now });
  }

  build(shape: TreeShape): BuildResult {
    const random = mulberry32(shape.seed);
    const appendMs: number[] = [];
    let n = 0;
    let batchStart = performance.now();
    const append = (parentId: string | null): string => {
      const result = this.#store.append({
        parentId,
        kind: "message",
        role: n % 2 === 0 ? "user" : "assistant",
        body: body(n),
        ...(n % 2 === 0 ? { idempotencyKey: `cm_${n}` } : {}),
      });
      n += 1;
      if (n % APPEND_BATCH === 0) {
        const now = performance.now();
        appendMs.push((now - batchStart) / APPEND_BATCH);
        batchStart = now;
      }
      if (!result.ok) throw new Error(`append failed: ${result.code} ${result.message}`);
      return result.value.entry.id;
    };

    const start = performance.now();
    const trunk: string[] = [];
    let parent: string | null = null;
    for (let i = 0; i < shape.trunk; i += 1) {
      parent = append(parent);
      trunk.push(parent);
    }
    let newestLeafDepth = shape.trunk;
    for (let f = 0; f < shape.forks; f += 1) {
      const at = Math.floor(random() * trunk.length);
      parent = trunk[at] ?? null;
      for (let i = 0; i < shape.forkLength; i += 1) parent = append(parent);
      newestLeafDepth = at + 1 + shape.forkLength;
    }
    const appendTotalMs = performance.now() - start;

    const rawInsertMs: number[] = [];
    const rawStart = performance.now();
    let rawBatchStart = rawStart;
    let previous: string | null = null;
    for (let i = 0; i < n; i += 1) {
      const id = crypto.randomUUID();
      this.ctx.storage.transactionSync(() => {
        this.ctx.storage.sql.exec(
          "INSERT INTO bench_raw (id, parent_id, body_json) VALUES (?, ?, ?)",
          id,
          previous,
          JSON.stringify(body(i)),
        );
      });
      previous = id;
      if ((i + 1) % APPEND_BATCH === 0) {
        const now = performance.now();
        rawInsertMs.push((now - rawBatchStart) / APPEND_BATCH);
        rawBatchStart = now;
      }
    }
    const rawInsertTotalMs = performance.now() - rawStart;
    return { entries: n, appendMs, appendTotalMs, rawInsertMs, rawInsertTotalMs, newestLeafDepth };
  }

  read(options: { iterations: number; walkEvery: number; reps: number }): ReadResult {
    const branchFullMs: number[] = [];
    const branchPageMs: number[] = [];
    const listWalkMs: number[] = [];
    const branchSqlOnlyMs: number[] = [];
    let branchDepth = this.#readBranch();
    const timed = (reps: number, fn: () => void): number => {
      const t0 = performance.now();
      for (let r = 0; r < reps; r += 1) fn();
      return (performance.now() - t0) / reps;
    };
    for (let i = 0; i < options.iterations; i += 1) {
      branchFullMs.push(
        timed(options.reps, () => {
          branchDepth = this.#readBranch();
        }),
      );
      branchPageMs.push(
        timed(options.reps, () => {
          const leaf = this.#store.latestLeaf();
          if (leaf === null) throw new Error("empty thread");
          const page = this.#store.branch(leaf.id, { limit: 50 });
          if (!page.ok || page.value.items.length === 0) throw new Error("branch page failed");
        }),
      );
      const leaf = this.#store.latestLeaf();
      if (leaf === null) throw new Error("empty thread");
      branchSqlOnlyMs.push(
        timed(options.reps, () => {
          const rows = this.#branchRowsOnly(leaf.id);
          if (rows !== branchDepth) throw new Error(`CTE found ${rows} entries, branch ${branchDepth}`);
        }),
      );
      if (i % options.walkEvery === 0) {
        // One list-and-walk takes tens of milliseconds: a single run is well above the timer's resolution.
        listWalkMs.push(
          timed(1, () => {
            const walked = this.#listAndWalk();
            if (walked !== branchDepth)
              throw new Error(`list-and-walk found ${walked}, branch ${branchDepth}`);
          }),
        );
      }
    }
    return { branchDepth, branchFullMs, branchPageMs, listWalkMs, branchSqlOnlyMs };
  }

  /** The same walk EntryStore.branch runs, with the rows left undecoded: separates SQL time from decoding time. */
  #branchRowsOnly(leafId: string): number {
    return this.ctx.storage.sql
      .exec(
        `WITH RECURSIVE path(seq, parent_id) AS (
           SELECT seq, parent_id FROM entries WHERE id = ? AND seq > ?
           UNION ALL
           SELECT e.seq, e.parent_id FROM entries e JOIN path p ON e.id = p.parent_id WHERE e.seq > ?
         )
         SELECT seq, id, parent_id, kind, role, run_id, created_at, body_json FROM entries
         WHERE seq IN (SELECT seq FROM path) ORDER BY seq LIMIT ?`,
        leafId,
        0,
        0,
        Number.MAX_SAFE_INTEGER,
      )
      .toArray().length;
  }

  #readBranch(): number {
    const leaf = this.#store.latestLeaf();
    if (leaf === null) throw new Error("empty thread");
    let count = 0;
    let cursor: string | undefined;
    do {
      const page = this.#store.branch(leaf.id, { limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
      if (!page.ok) throw new Error(`branch failed: ${page.message}`);
      count += page.value.items.length;
      cursor = page.value.nextCursor;
    } while (cursor !== undefined);
    return count;
  }

  #listAndWalk(): number {
    const byId = new Map<string, { parentId: string | null; seq: number }>();
    const parents = new Set<string>();
    let afterSeq = 0;
    for (;;) {
      const page = this.#store.all({ afterSeq, limit: 1000 });
      if (page.length === 0) break;
      for (const entry of page) {
        byId.set(entry.id, { parentId: entry.parentId, seq: entry.seq });
        if (entry.parentId !== null) parents.add(entry.parentId);
      }
      afterSeq = page[page.length - 1]?.seq ?? afterSeq;
    }
    let leafId: string | null = null;
    let leafSeq = -1;
    for (const [id, entry] of byId) {
      if (!parents.has(id) && entry.seq > leafSeq) {
        leafId = id;
        leafSeq = entry.seq;
      }
    }
    const path: string[] = [];
    for (let id = leafId; id !== null; id = byId.get(id)?.parentId ?? null) path.push(id);
    return path.reverse().length;
  }
}
