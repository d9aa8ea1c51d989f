// The TenantQuota object's record of socket rounds still to run (docs/security.md, "Open sockets and refreshes"): one
// row per pending round (a disabled tenant, or a recheck of one agent's or all of the tenant's threads) with its
// cursor through the tenant's active threads, and one row per thread whose ask failed and waits to be asked again.
import { z } from "zod";
import { ENVIRONMENTS, type Environment } from "../../shared/api";

export type SocketRoundKind = "disconnect" | "recheck";

/** Where a round has got to in `threads` (ordered by `active_at`, `id`): the last thread asked. */
export interface RoundCursor {
  activeAt: string;
  id: string;
}

export interface SocketRound {
  /** One round per scope: `disconnect`, `recheck` (every agent) or `recheck:<agentId>`. */
  scope: string;
  kind: SocketRoundKind;
  agentId: string | null;
  /** The oldest activity mark the round reaches. */
  since: string;
  after: RoundCursor | null;
  /** Bumped whenever the round is queued again: a batch that read an older one leaves the restart alone. */
  generation: number;
}

/** A thread to ask again: its address (the tenant is the object's) and how often it was asked already. */
export interface SocketRetry {
  kind: SocketRoundKind;
  threadId: string;
  agentId: string;
  environment: Environment;
  attempts: number;
  dueAt: number;
}

/** Idempotent, run on every start (src/storage/quota/quota-counters.ts explains why there is no migration list). */
export function createSocketRounds(sql: SqlStorage): void {
  sql.exec(
    `CREATE TABLE IF NOT EXISTS socket_rounds (
       scope TEXT PRIMARY KEY, kind TEXT NOT NULL, agent_id TEXT, since TEXT NOT NULL,
       after_active_at TEXT, after_id TEXT, generation INTEGER NOT NULL, queued_at INTEGER NOT NULL)`,
  );
  sql.exec(
    `CREATE TABLE IF NOT EXISTS socket_retries (
       kind TEXT NOT NULL, thread_id TEXT NOT NULL, agent_id TEXT NOT NULL, environment TEXT NOT NULL,
       attempts INTEGER NOT NULL, due_at INTEGER NOT NULL, PRIMARY KEY (kind, thread_id))`,
  );
}

export function roundScope(kind: SocketRoundKind, agentId: string | null): string {
  if (kind === "disconnect") return "disconnect";
  return agentId === null ? "recheck" : `recheck:${agentId}`;
}

/**
 * Queues a round, or restarts the same scope's pending round from its first thread (a thread it already asked was
 * asked before this change), reaching back to the older of the two windows: two changes, one round.
 */
export function storeSocketRound(
  sql: SqlStorage,
  round: { kind: SocketRoundKind; agentId: string | null; since: string; now: number },
): void {
  sql.exec(
    `INSERT INTO socket_rounds (scope, kind, agent_id, since, after_active_at, after_id, generation, queued_at)
     VALUES (?, ?, ?, ?, NULL, NULL, 1, ?)
     ON CONFLICT (scope) DO UPDATE SET since = MIN(since, excluded.since), after_active_at = NULL,
       after_id = NULL, generation = generation + 1`,
    roundScope(round.kind, round.agentId),
    round.kind,
    round.agentId,
    round.since,
    round.now,
  );
}

const roundRow = z.object({
  scope: z.string(),
  kind: z.enum(["disconnect", "recheck"]),
  agent_id: z.string().nullable(),
  since: z.string(),
  after_active_at: z.string().nullable(),
  after_id: z.string().nullable(),
  generation: z.number().int(),
});

/** The round queued first, or null when none is pending. */
export function nextSocketRound(sql: SqlStorage): SocketRound | null {
  const row = sql
    .exec(
      `SELECT scope, kind, agent_id, since, after_active_at, after_id, generation
       FROM socket_rounds ORDER BY queued_at, scope LIMIT 1`,
    )
    .toArray()[0];
  if (row === undefined) return null;
  const r = roundRow.parse(row);
  return {
    scope: r.scope,
    kind: r.kind,
    agentId: r.agent_id,
    since: r.since,
    after:
      r.after_active_at !== null && r.after_id !== null
        ? { activeAt: r.after_active_at, id: r.after_id }
        : null,
    generation: r.generation,
  };
}

/** Moves the round past `after`, or (`after` null) ends it: unless it was queued again meanwhile. */
export function advanceSocketRound(sql: SqlStorage, round: SocketRound, after: RoundCursor | null): void {
  if (after === null) {
    sql.exec("DELETE FROM socket_rounds WHERE scope = ? AND generation = ?", round.scope, round.generation);
    return;
  }
  sql.exec(
    "UPDATE socket_rounds SET after_active_at = ?, after_id = ? WHERE scope = ? AND generation = ?",
    after.activeAt,
    after.id,
    round.scope,
    round.generation,
  );
}

/** Forgets every retry of `kind` (a tenant enabled again needs no disconnect). */
export function dropSocketRetries(sql: SqlStorage, kind: SocketRoundKind): void {
  sql.exec("DELETE FROM socket_retries WHERE kind = ?", kind);
}

export function anySocketRound(sql: SqlStorage): boolean {
  return sql.exec("SELECT 1 FROM socket_rounds LIMIT 1").toArray().length > 0;
}

/** Stores (or replaces) a thread's next ask. */
export function writeSocketRetry(sql: SqlStorage, retry: SocketRetry): void {
  sql.exec(
    `INSERT INTO socket_retries (kind, thread_id, agent_id, environment, attempts, due_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (kind, thread_id) DO UPDATE SET agent_id = excluded.agent_id, environment = excluded.environment,
       attempts = excluded.attempts, due_at = excluded.due_at`,
    retry.kind,
    retry.threadId,
    retry.agentId,
    retry.environment,
    retry.attempts,
    retry.dueAt,
  );
}

export function deleteSocketRetry(sql: SqlStorage, retry: Pick<SocketRetry, "kind" | "threadId">): void {
  sql.exec("DELETE FROM socket_retries WHERE kind = ? AND thread_id = ?", retry.kind, retry.threadId);
}

const retryRow = z.object({
  kind: z.enum(["disconnect", "recheck"]),
  thread_id: z.string(),
  agent_id: z.string(),
  environment: z.enum(ENVIRONMENTS),
  attempts: z.number().int(),
  due_at: z.number(),
});

/** Up to `limit` retries due at `now`, the longest waiting first. */
export function dueSocketRetries(sql: SqlStorage, now: number, limit: number): SocketRetry[] {
  return sql
    .exec(
      `SELECT kind, thread_id, agent_id, environment, attempts, due_at FROM socket_retries
       WHERE due_at <= ? ORDER BY due_at LIMIT ?`,
      now,
      limit,
    )
    .toArray()
    .map((row) => {
      const r = retryRow.parse(row);
      return {
        kind: r.kind,
        threadId: r.thread_id,
        agentId: r.agent_id,
        environment: r.environment,
        attempts: r.attempts,
        dueAt: r.due_at,
      };
    });
}

const dueRow = z.object({ due: z.number().nullable() });

/** When the next retry is due (epoch ms), or null when none waits. */
export function nextSocketRetryAt(sql: SqlStorage): number | null {
  return dueRow.parse(sql.exec("SELECT MIN(due_at) AS due FROM socket_retries").one()).due;
}
