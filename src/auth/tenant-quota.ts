// Exact per-tenant quotas (for example launches per UTC day), counted in one small Durable Object per tenant.
import { DurableObject } from "cloudflare:workers";
import { countQuotaUse, createQuotaCounters, quotaUsed } from "../storage/quota-counters";

export interface QuotaDecision {
  ok: boolean;
  used: number;
  limit: number;
  /** Seconds until the window resets; set when refused. */
  retryAfterSeconds?: number;
}

/** One unit to take from `kind`, whose daily limit is `limit`. */
export interface QuotaCharge {
  kind: string;
  limit: number;
}

export type ChargesDecision =
  | { ok: true }
  | { ok: false; kind: string; used: number; limit: number; retryAfterSeconds: number };

function utcDay(now: number): { day: string; secondsLeft: number } {
  const date = new Date(now);
  const next = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
  return { day: date.toISOString().slice(0, 10), secondsLeft: Math.ceil((next - now) / 1000) };
}

export class TenantQuota extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    createQuotaCounters(ctx.storage.sql);
  }

  /** Consumes one unit of `kind` for today if the limit allows; a refusal consumes nothing. */
  async consume(kind: string, limit: number): Promise<QuotaDecision> {
    const { day, secondsLeft } = utcDay(Date.now());
    const used = quotaUsed(this.ctx.storage.sql, kind, day);
    if (used >= limit) return { ok: false, used, limit, retryAfterSeconds: secondsLeft };
    countQuotaUse(this.ctx.storage.sql, kind, day);
    return { ok: true, used: used + 1, limit };
  }

  /** Consumes one unit of every charge for today if each limit allows, else none; a refusal names the kind refused. */
  async consumeAll(charges: readonly QuotaCharge[]): Promise<ChargesDecision> {
    const { day, secondsLeft } = utcDay(Date.now());
    const sql = this.ctx.storage.sql;
    // No await between the reads and the writes: the object runs this as one step, so no launch slips between them.
    for (const { kind, limit } of charges) {
      const used = quotaUsed(sql, kind, day);
      if (used >= limit) return { ok: false, kind, used, limit, retryAfterSeconds: secondsLeft };
    }
    for (const { kind } of charges) countQuotaUse(sql, kind, day);
    return { ok: true };
  }

  async usage(kind: string): Promise<number> {
    const { day } = utcDay(Date.now());
    return quotaUsed(this.ctx.storage.sql, kind, day);
  }
}

export function tenantQuota(env: Env, tenantId: string) {
  return env.QUOTA.get(env.QUOTA.idFromName(tenantId));
}
