// Which D1 database holds a tenant's projection: the one resolver every read and write of the projected tables uses.
//
// The control plane (`DB`) keeps the map (`tenant_shards`, migration 0016): a tenant is placed once, by the hash of
// its id over the shards' cumulative weights (`shard_weights`), and stays there until an operator moves it
// (src/jobs/shard-moves.ts). Shard `DB` is the control plane's own database, so a deployment with one database
// needs nothing else. Every shard has the same migrations; in a shard other than `DB` the `threads` table is a mirror
// of its tenants' registry rows, which the projection's guard and the analytics triggers read.
import { z } from "zod";

/** The D1 bindings that can hold projections, shard `DB` first. A new shard is a binding here and in wrangler.toml. */
export const SHARDS = ["DB", "DB_SHARD_1"] as const;
export type ShardName = (typeof SHARDS)[number];

export function isShardName(value: string): value is ShardName {
  return (SHARDS as readonly string[]).includes(value);
}

export function shardDb(env: Env, shard: ShardName): D1Database {
  return env[shard];
}

export const SHARD_STATES = ["active", "moving", "frozen", "draining"] as const;
export type ShardState = (typeof SHARD_STATES)[number];

export interface TenantShard {
  tenantId: string;
  /** Where reads go (while draining: the new shard). */
  shard: ShardName;
  state: ShardState;
  /** While moving or frozen: the shard the tenant is moving to. */
  movingTo: ShardName | null;
  /** While draining: the shard being emptied. */
  movingFrom: ShardName | null;
  cursor: string | null;
  stepAt: string;
  createdAt: string;
  movedAt: string | null;
}

const shardName = z
  .string()
  .refine(isShardName)
  .transform((s) => s as ShardName);
const tenantShardRow = z
  .object({
    tenant_id: z.string(),
    shard: shardName,
    state: z.enum(SHARD_STATES),
    moving_to: shardName.nullable(),
    moving_from: shardName.nullable(),
    cursor: z.string().nullable(),
    step_at: z.string(),
    created_at: z.string(),
    moved_at: z.string().nullable(),
  })
  .transform(
    (r): TenantShard => ({
      tenantId: r.tenant_id,
      shard: r.shard,
      state: r.state,
      movingTo: r.moving_to,
      movingFrom: r.moving_from,
      cursor: r.cursor,
      stepAt: r.step_at,
      createdAt: r.created_at,
      movedAt: r.moved_at,
    }),
  );

export const SHARD_SQL = {
  get: `SELECT tenant_id, shard, state, moving_to, moving_from, cursor, step_at, created_at, moved_at
    FROM tenant_shards WHERE tenant_id = ?`,
  /** Shard weights are not tenant data: placement reads them all. */
  weights: "SELECT shard, weight FROM shard_weights ORDER BY shard",
  place: `INSERT INTO tenant_shards (tenant_id, shard, state, step_at, created_at) VALUES (?, ?, 'active', ?, ?)
    ON CONFLICT (tenant_id) DO NOTHING`,
  /** The registry row a shard other than `DB` mirrors (read from `DB`). */
  registryRow: `SELECT agent_id, environment, subject, subject_kind, created_at, deleted_at, preview
    FROM threads WHERE tenant_id = ? AND id = ?`,
  /** The mirror of one registry row in a shard; a tombstone stays a tombstone. */
  upsertMirror: `INSERT INTO threads (tenant_id, id, agent_id, environment, subject, subject_kind, created_at,
      deleted_at, preview)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant_id, id) DO UPDATE SET
      deleted_at = COALESCE(threads.deleted_at, excluded.deleted_at),
      subject = CASE WHEN COALESCE(threads.deleted_at, excluded.deleted_at) IS NULL THEN excluded.subject ELSE '' END,
      preview = excluded.preview, context = NULL`,
  /** Erasure's mark in a shard's mirror, written even where no projection ever created the row. */
  mirrorTombstone: `INSERT INTO threads (tenant_id, id, agent_id, environment, subject, subject_kind, created_at,
      deleted_at)
    VALUES (?, ?, '', 'development', '', 'visitor', ?, ?)
    ON CONFLICT (tenant_id, id) DO UPDATE SET
      deleted_at = COALESCE(threads.deleted_at, excluded.deleted_at), subject = '', context = NULL`,
} as const;

export interface ShardWeight {
  shard: string;
  weight: number;
}

/** FNV-1a over the id's UTF-8 bytes: stable across runtimes and releases, which placement needs. */
export function tenantHash(tenantId: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(tenantId)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * The shard a new tenant goes to: the hash of its id, modulo the total weight, falls in one shard's interval of the
 * cumulative weights (shards in name order). Unknown shards and weight 0 take no one; no weight at all means `DB`.
 */
export function placeByWeight(tenantId: string, weights: readonly ShardWeight[]): ShardName {
  const usable = weights
    .filter((w): w is { shard: ShardName; weight: number } => isShardName(w.shard) && w.weight > 0)
    .sort((a, b) => (a.shard < b.shard ? -1 : a.shard > b.shard ? 1 : 0));
  const total = usable.reduce((sum, w) => sum + w.weight, 0);
  if (total === 0) return "DB";
  let point = tenantHash(tenantId) % total;
  for (const w of usable) {
    if (point < w.weight) return w.shard;
    point -= w.weight;
  }
  return "DB";
}

export async function readTenantShard(control: D1Database, tenantId: string): Promise<TenantShard | null> {
  const row = await control.prepare(SHARD_SQL.get).bind(tenantId).first();
  return row === null ? null : tenantShardRow.parse(row);
}

const weightRow = z.object({ shard: z.string(), weight: z.number().int() });

/** Records the tenant's shard if it has none (by weight), and returns its row. Idempotent and race-free. */
export async function placeTenant(control: D1Database, tenantId: string, at: string): Promise<TenantShard> {
  const existing = await readTenantShard(control, tenantId);
  if (existing !== null) return existing;
  const { results } = await control.prepare(SHARD_SQL.weights).all();
  const shard = placeByWeight(
    tenantId,
    results.map((r) => weightRow.parse(r)),
  );
  await control.prepare(SHARD_SQL.place).bind(tenantId, shard, at, at).run();
  const placed = await readTenantShard(control, tenantId);
  if (placed === null) throw new Error("The tenant's shard row vanished after placement.");
  return placed;
}

const DEFAULT_CACHE_MS = 30_000;
const CACHE_LIMIT = 10_000;
const cache = new Map<string, { value: TenantShard; until: number }>();

/** `SHARD_MAP_CACHE_MS`: how long an isolate trusts its copy of a tenant's row (0: never). */
export function shardCacheMs(env: Env): number {
  const raw = env.SHARD_MAP_CACHE_MS;
  const ms = raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw);
  return Number.isFinite(ms) && ms >= 0 ? ms : DEFAULT_CACHE_MS;
}

/** The tenant's row, from this isolate's cache while younger than `SHARD_MAP_CACHE_MS`; placed at first use. */
export async function tenantShard(env: Env, tenantId: string, now = Date.now()): Promise<TenantShard> {
  const cached = cache.get(tenantId);
  if (cached !== undefined && cached.until > now) return cached.value;
  const value = await placeTenant(env.DB, tenantId, new Date(now).toISOString());
  const ttl = shardCacheMs(env);
  if (ttl > 0) {
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value ?? "");
    cache.set(tenantId, { value, until: now + ttl });
  }
  return value;
}

/** Drops this isolate's copy after a change made here (other isolates wait out the cache age). */
export function forgetTenantShard(tenantId: string): void {
  cache.delete(tenantId);
}

/** Where writes other than the drain go (erasure, retention): every shard that holds or is receiving the tenant. */
export function writeShardsOf(placement: TenantShard): ShardName[] {
  if ((placement.state === "moving" || placement.state === "frozen") && placement.movingTo !== null) {
    return [placement.shard, placement.movingTo];
  }
  return [placement.shard];
}

/** The database a tenant's projected rows are read from. */
export async function projectionReadDb(env: Env, tenantId: string): Promise<D1Database> {
  return shardDb(env, (await tenantShard(env, tenantId)).shard);
}

/** The databases a write of a tenant's projected rows goes to, the one reads trust first. */
export async function projectionWriteDbs(
  env: Env,
  tenantId: string,
): Promise<{ shard: ShardName; db: D1Database }[]> {
  return writeShardsOf(await tenantShard(env, tenantId)).map((shard) => ({ shard, db: shardDb(env, shard) }));
}

/** A thread registry row as the mirror copies it. */
export const registrySchema = z.object({
  agent_id: z.string(),
  environment: z.string(),
  subject: z.string(),
  subject_kind: z.string(),
  created_at: z.string(),
  deleted_at: z.string().nullable(),
  preview: z.number().int(),
});
type RegistryRow = z.infer<typeof registrySchema>;

/** A thread's mirror statement for a shard's batch. */
export function mirrorStatement(
  db: D1Database,
  scope: { tenantId: string; threadId: string },
  row: RegistryRow,
): D1PreparedStatement {
  return db
    .prepare(SHARD_SQL.upsertMirror)
    .bind(
      scope.tenantId,
      scope.threadId,
      row.agent_id,
      row.environment,
      row.subject,
      row.subject_kind,
      row.created_at,
      row.deleted_at,
      row.preview,
    );
}

/** Erasure's tombstone in a shard other than `DB` (the registry in `DB` has its own). */
export function mirrorTombstone(
  db: D1Database,
  scope: { tenantId: string; threadId: string },
  at: string,
): D1PreparedStatement {
  return db.prepare(SHARD_SQL.mirrorTombstone).bind(scope.tenantId, scope.threadId, at, at);
}

/** What one drain sends where. `targets` is empty while a move copies the tenant's rollups: the drain waits. */
export interface ProjectionTargets {
  targets: { shard: ShardName; db: D1Database; lead: D1PreparedStatement[] }[];
  /** Call once every target committed: this object need not send those mirrors again. */
  committed(): void;
}

/** Per thread object: its registry row (never changes but for erasure) and the shards that already have its mirror. */
const mirrors = new WeakMap<DurableObjectStorage, { row: RegistryRow | null; sent: Set<ShardName> }>();

/**
 * The drain's databases for this thread: the tenant's shard, and during a move the target too (old first, so a row
 * in the target is always in the source already). In a shard other than `DB` the batch starts with the thread's
 * registry mirror, read once per object life from `DB`, until it has committed there.
 */
export async function projectionTargets(
  env: Env,
  storage: DurableObjectStorage,
  scope: { tenantId: string; threadId: string },
): Promise<ProjectionTargets> {
  const placement = await tenantShard(env, scope.tenantId);
  const shards = placement.state === "frozen" ? [] : writeShardsOf(placement);
  let known = mirrors.get(storage);
  const needMirror = shards.filter((s) => s !== "DB" && !(known?.sent.has(s) ?? false));
  if (needMirror.length > 0 && (known === undefined || known.row === null)) {
    const raw = await env.DB.prepare(SHARD_SQL.registryRow).bind(scope.tenantId, scope.threadId).first();
    known = { row: raw === null ? null : registrySchema.parse(raw), sent: known?.sent ?? new Set() };
    mirrors.set(storage, known);
  }
  const row = known?.row ?? null;
  const targets = shards.map((shard) => {
    const db = shardDb(env, shard);
    const lead = needMirror.includes(shard) && row !== null ? [mirrorStatement(db, scope, row)] : [];
    return { shard, db, lead };
  });
  return {
    targets,
    committed() {
      if (row === null) return;
      const entry = mirrors.get(storage) ?? { row, sent: new Set<ShardName>() };
      for (const t of targets) if (t.lead.length > 0) entry.sent.add(t.shard);
      mirrors.set(storage, entry);
    },
  };
}
