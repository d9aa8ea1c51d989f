// The scheduled retention pass over D1: each due session loses messages past its agent's policy, once a day.
//
// The thread objects apply the same policy to their own storage on their own daily schedule, and their drain then
// deletes from D1 exactly what they deleted. This job makes D1 honour the policy even for threads that sleep, and
// asks each thread it pruned to apply the policy too, at the thread's own clock: that is later than `now`, so the
// thread deletes at least what D1 lost here, and its drain then deletes from D1 anything more it deleted.

import { type DueSession, dueSessions, pruneSession, tenantsPage } from "../storage/d1/session-retention";
import { shardDb, tenantShard, writeShardsOf } from "../storage/d1/shards";
import { threadStub } from "../thread/contract";

const DAY_MS = 86_400_000;
const TENANT_PAGE = 100;
/** Sessions per run: the cron fires every few minutes, so a backlog drains over several runs. */
export const DEFAULT_SESSION_BUDGET = 500;

export interface RetentionRun {
  sessions: number;
  deletedMessages: number;
  /** Sessions that lost messages; each of their thread objects was asked to apply the policy too. */
  affected: DueSession[];
  /** Thread objects that could not be reached or refused (their own daily schedule applies the policy later). */
  unreachable: number;
}

/** Runs one pass at `now` (epoch ms), passed explicitly so tests control the clock. */
export async function runRetentionJob(
  env: Env,
  now: number,
  options: { sessionBudget?: number } = {},
): Promise<RetentionRun> {
  let budget = options.sessionBudget ?? DEFAULT_SESSION_BUDGET;
  const nowIso = new Date(now).toISOString();
  const nextDueAt = new Date(now + DAY_MS).toISOString();
  const run: RetentionRun = { sessions: 0, deletedMessages: 0, affected: [], unreachable: 0 };
  let after = "";
  while (budget > 0) {
    const tenants = await tenantsPage(env.DB, after, TENANT_PAGE);
    for (const tenantId of tenants) {
      if (budget <= 0) break;
      // The tenant's sessions are read where reads go and pruned in every shard that holds them (during a move, both).
      const placement = await tenantShard(env, tenantId);
      const due = await dueSessions(
        { shard: shardDb(env, placement.shard), control: env.DB },
        tenantId,
        nowIso,
        budget,
      );
      for (const session of due) {
        const ageCutoff =
          session.maxAgeDays === null ? null : new Date(now - session.maxAgeDays * DAY_MS).toISOString();
        const scheduled = session.maxAgeDays !== null || session.maxMessages !== null;
        let deleted = 0;
        for (const [i, shard] of writeShardsOf(placement).entries()) {
          const n = await pruneSession(shardDb(env, shard), session, {
            ageCutoff,
            nextDueAt: scheduled ? nextDueAt : null,
          });
          if (i === 0) deleted = n;
        }
        run.sessions += 1;
        run.deletedMessages += deleted;
        if (deleted > 0) run.affected.push(session);
        budget -= 1;
      }
    }
    const last = tenants[tenants.length - 1];
    if (last === undefined || tenants.length < TENANT_PAGE) break;
    after = last;
  }
  for (const session of run.affected) {
    const address = {
      tenantId: session.tenantId,
      environment: session.environment,
      agentId: session.agentId,
      threadId: session.threadId,
    };
    let error: string | null = null;
    try {
      const applied = await (await threadStub(env, address)).applyRetention(address);
      if (!applied.ok) error = `${applied.code}: ${applied.message}`;
    } catch (thrown) {
      error = String(thrown);
    }
    if (error !== null) {
      run.unreachable += 1;
      console.log(
        JSON.stringify({
          level: "warn",
          message: "retention could not reach a thread",
          tenantId: session.tenantId,
          threadId: session.threadId,
          error,
        }),
      );
    }
  }
  if (run.sessions > 0) {
    console.log(
      JSON.stringify({
        level: "info",
        message: "retention pass",
        sessions: run.sessions,
        deletedMessages: run.deletedMessages,
        unreachable: run.unreachable,
      }),
    );
  }
  return run;
}
