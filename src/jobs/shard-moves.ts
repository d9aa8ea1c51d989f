// Moves a tenant's projection from one D1 shard to another, copy then switch, without losing a write under traffic.
//
// The steps (docs/scaling.md, "D1 shards"), each taken only once every cached copy of the map row and every batch in
// flight is older than the previous step (`SHARD_MOVE_GRACE_MS`):
//   moving   — every drain writes to both shards (the old one first); the job mirrors the registry rows into the new
//              shard, copies the old shard's rows in pages (version-guarded upserts), then deletes from the new shard
//              any row the old one no longer has (a delete that raced a page's copy);
//   frozen   — drains wait (their rows stay in the thread's outbox) while the analytics rollups are copied whole;
//   draining — reads and writes go to the new shard; the old one's rows are deleted in pages; then `active`.
// Driven by the scheduled job (every 5 minutes, a bounded amount of work per run); progress is in the map row, so a
// cut-off run loses nothing and the next one continues.

import { z } from "zod";
import {
  copyStatements,
  deleteKeyStatements,
  deleteTenantPage,
  existingKeys,
  messageRowids,
  mirrorPage,
  PROJECTED_TABLES,
  ROLLUP_TABLES,
  type Row,
  readKeyPage,
  readMessageWindow,
  type ShardTable,
} from "../storage/d1/shard-copy";
import {
  claimMove,
  releaseMove,
  saveProgress,
  takeStep,
  unfinishedMoves,
} from "../storage/d1/shard-move-state";
import {
  forgetTenantShard,
  readTenantShard,
  type ShardName,
  shardCacheMs,
  shardDb,
  type TenantShard,
} from "../storage/d1/shards";

const PAGE = 100;
const DELETE_PAGE = 500;
/** Message rowids looked at per page: bounds one page's scan in a shard shared with many tenants. */
const ROWID_SPAN = 5_000;
const LEASE_MS = 60_000;
/** Work per scheduled run. */
export const MOVE_BUDGET_MS = 20_000;
/** A batch the drain started can still land this long after (its timeout, src/storage/projection/projection-lane.ts). */
const IN_FLIGHT_MS = 30_000;

/** `SHARD_MOVE_GRACE_MS`; by default the map cache's age plus a batch's timeout. */
export function shardMoveGraceMs(env: Env): number {
  const raw = env.SHARD_MOVE_GRACE_MS;
  const ms = raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw);
  return Number.isFinite(ms) && ms >= 0 ? ms : shardCacheMs(env) + IN_FLIGHT_MS;
}

const cursorSchema = z.object({
  step: z.enum(["mirror", "copy", "verify", "rollup", "delete"]),
  table: z.number().int().min(0).default(0),
  after: z.array(z.unknown()).nullable().default(null),
  /** mirror: the last registry id copied. */
  afterId: z.string().default(""),
  /** copy of agent_messages: the rowid reached and the highest one to reach. */
  rowid: z.object({ at: z.number(), high: z.number() }).nullable().default(null),
  /** rollup: the target's rows are cleared before the copy. */
  cleared: z.boolean().default(false),
});
type Cursor = z.infer<typeof cursorSchema>;

function readCursor(placement: TenantShard, fallback: Cursor["step"]): Cursor {
  if (placement.cursor !== null) {
    try {
      const parsed = cursorSchema.safeParse(JSON.parse(placement.cursor));
      if (parsed.success) return parsed.data;
    } catch {
      // An unreadable cursor restarts the step: every step is idempotent.
    }
  }
  return cursorSchema.parse({ step: fallback });
}

const keyOf = (t: ShardTable, row: Row): unknown[] => t.key.map((c) => row[c]);

interface StepContext {
  env: Env;
  placement: TenantShard;
  lease: string;
  now: () => number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** One page of work of the current step; false when the lease was lost (another runner goes on). */
async function stepOnce(ctx: StepContext): Promise<boolean> {
  const { env, placement, lease } = ctx;
  const control = env.DB;
  const tenantId = placement.tenantId;
  const save = (cursor: Partial<Cursor> & { step: Cursor["step"] }) =>
    saveProgress(control, tenantId, lease, cursorSchema.parse(cursor));

  if (placement.state === "moving" && placement.movingTo !== null) {
    const source = shardDb(env, placement.shard);
    const target = shardDb(env, placement.movingTo);
    const cursor = readCursor(placement, "mirror");
    if (cursor.step === "mirror") {
      if (placement.movingTo === "DB") return save({ step: "copy" });
      const page = await mirrorPage(control, target, tenantId, cursor.afterId, PAGE);
      if (page.statements.length > 0) await target.batch(page.statements);
      return page.statements.length < PAGE || page.last === null
        ? save({ step: "copy" })
        : save({ step: "mirror", afterId: page.last });
    }
    if (cursor.step === "copy") {
      const t = PROJECTED_TABLES[cursor.table];
      if (t === undefined) return save({ step: "verify" });
      const next = () => save({ step: "copy", table: cursor.table + 1 });
      if (t.table === "agent_messages") {
        let window = cursor.rowid;
        if (window === null) {
          const bounds = await messageRowids(source, tenantId);
          if (bounds === null) return next();
          window = { at: bounds.low - 1, high: bounds.high };
        }
        const until = Math.min(window.at + ROWID_SPAN, window.high);
        const page = await readMessageWindow(source, tenantId, { after: window.at, until }, PAGE);
        if (page.rows.length > 0) await target.batch(copyStatements(target, t, page.rows));
        const at = page.rows.length === PAGE && page.last !== null ? page.last : until;
        return at >= window.high
          ? next()
          : save({ step: "copy", table: cursor.table, rowid: { at, high: window.high } });
      }
      const rows = await readKeyPage(source, t, tenantId, cursor.after, PAGE);
      if (rows.length > 0) await target.batch(copyStatements(target, t, rows));
      const last = rows.at(-1);
      return rows.length < PAGE || last === undefined
        ? next()
        : save({ step: "copy", table: cursor.table, after: keyOf(t, last) });
    }
    if (cursor.step === "verify") {
      const t = PROJECTED_TABLES[cursor.table];
      if (t === undefined) return takeStep(control, "freeze", tenantId, lease, iso(ctx.now()));
      const rows = await readKeyPage(target, t, tenantId, cursor.after, PAGE, "key");
      const keys = rows.map((r) => keyOf(t, r));
      const held = await existingKeys(source, t, tenantId, keys);
      const gone = keys.filter((k) => !held.has(JSON.stringify(k)));
      if (gone.length > 0) await target.batch(deleteKeyStatements(target, t, tenantId, gone));
      const last = keys.at(-1);
      return rows.length < PAGE || last === undefined
        ? save({ step: "verify", table: cursor.table + 1 })
        : save({ step: "verify", table: cursor.table, after: last });
    }
  }

  if (placement.state === "frozen" && placement.movingTo !== null) {
    const source = shardDb(env, placement.shard);
    const target = shardDb(env, placement.movingTo);
    const cursor = readCursor(placement, "rollup");
    const t = ROLLUP_TABLES[cursor.table];
    if (t === undefined) return takeStep(control, "switchOver", tenantId, lease, iso(ctx.now()));
    if (!cursor.cleared) {
      // The target's rollup was built by its triggers from copies and double writes: replaced by the source's.
      const n = await deleteTenantPage(target, t.table, tenantId, DELETE_PAGE);
      return save({ step: "rollup", table: cursor.table, cleared: n < DELETE_PAGE });
    }
    const rows = await readKeyPage(source, t, tenantId, cursor.after, PAGE);
    if (rows.length > 0) await target.batch(copyStatements(target, t, rows));
    const last = rows.at(-1);
    return rows.length < PAGE || last === undefined
      ? save({ step: "rollup", table: cursor.table + 1 })
      : save({ step: "rollup", table: cursor.table, cleared: true, after: keyOf(t, last) });
  }

  if (placement.state === "draining" && placement.movingFrom !== null) {
    const old = placement.movingFrom;
    const tables = drainTables(old);
    const cursor = readCursor(placement, "delete");
    const table = tables[cursor.table];
    if (table === undefined) return takeStep(control, "finish", tenantId, lease, iso(ctx.now()));
    const n = await deleteTenantPage(shardDb(env, old), table, tenantId, DELETE_PAGE);
    return save({ step: "delete", table: n < DELETE_PAGE ? cursor.table + 1 : cursor.table });
  }
  return false;
}

/** What the old shard loses: every projected table and rollup, and its registry mirror unless it is `DB` itself. */
function drainTables(old: ShardName): string[] {
  return [
    ...PROJECTED_TABLES.map((t) => t.table),
    ...ROLLUP_TABLES.map((t) => t.table),
    ...(old === "DB" ? [] : ["threads"]),
  ];
}

/**
 * Advances one tenant's move until it is done, has to wait for the grace period, `deadline` (epoch ms) passes or
 * `maxSteps` pages of work are done.
 * Returns the map row as it is afterwards (null for an unknown tenant).
 */
export async function advanceMove(
  env: Env,
  tenantId: string,
  options: { deadline: number; now?: () => number; maxSteps?: number },
): Promise<TenantShard | null> {
  const now = options.now ?? Date.now;
  const control = env.DB;
  const lease = await claimMove(control, tenantId, iso(now()), iso(now() + LEASE_MS));
  if (lease === null) return readTenantShard(control, tenantId);
  const grace = shardMoveGraceMs(env);
  let steps = 0;
  try {
    while (now() < options.deadline && steps < (options.maxSteps ?? Number.POSITIVE_INFINITY)) {
      const placement = await readTenantShard(control, tenantId);
      if (placement === null || placement.state === "active") break;
      if (Date.parse(placement.stepAt) + grace > now()) break;
      const went = await stepOnce({ env, placement, lease, now });
      steps += 1;
      forgetTenantShard(tenantId);
      if (!went) break;
    }
  } finally {
    await releaseMove(control, tenantId, lease);
  }
  return readTenantShard(control, tenantId);
}

/** The scheduled pass: advances every unfinished move, oldest step first, within one run's budget. */
export async function runShardMoves(env: Env, options: { budgetMs?: number } = {}): Promise<number> {
  const deadline = Date.now() + (options.budgetMs ?? MOVE_BUDGET_MS);
  const tenants = await unfinishedMoves(env.DB, 20);
  for (const tenantId of tenants) {
    if (Date.now() >= deadline) break;
    try {
      const after = await advanceMove(env, tenantId, { deadline });
      console.log(
        JSON.stringify({
          level: "info",
          message: "shard move",
          tenantId,
          state: after?.state ?? null,
          shard: after?.shard ?? null,
        }),
      );
    } catch (error) {
      console.log(
        JSON.stringify({
          level: "warn",
          message: "shard move step failed; retried next run",
          tenantId,
          error: String(error),
        }),
      );
    }
  }
  return tenants.length;
}
