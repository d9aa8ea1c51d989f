// Exact per-tenant quotas (for example launches per UTC day), counted in one small Durable Object per tenant.
import { DurableObject } from "cloudflare:workers";

export interface QuotaDecision {
  ok: boolean;
  used: number;
  limit: number;
  /** Seconds until the window resets; set when refused. */
  retryAfterSeconds?: number;
}

function utcDay(now: number): { day: string; secondsLeft: number } {
  const date = new Date(now);
  const next = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
  return { day: date.toISOString().slice(0, 10), secondsLeft: Math.ceil((next - now) / 1000) };
}

export class TenantQuota extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS quota_counters (kind TEXT NOT NULL, day TEXT NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (kind, day))",
    );
  }

  /** Consumes one unit of `kind` for today if the limit allows; a refusal consumes nothing. */
  async consume(kind: string, limit: number, now: number = Date.now()): Promise<QuotaDecision> {
    const { day, secondsLeft } = utcDay(now);
    const row = this.ctx.storage.sql
      .exec<{ used: number }>("SELECT used FROM quota_counters WHERE kind = ? AND day = ?", kind, day)
      .toArray()[0];
    const used = row?.used ?? 0;
    if (used >= limit) return { ok: false, used, limit, retryAfterSeconds: secondsLeft };
    this.ctx.storage.sql.exec(
      "INSERT INTO quota_counters (kind, day, used) VALUES (?, ?, 1) ON CONFLICT (kind, day) DO UPDATE SET used = used + 1",
      kind,
      day,
    );
    this.ctx.storage.sql.exec("DELETE FROM quota_counters WHERE day < ?", day);
    return { ok: true, used: used + 1, limit };
  }

  async usage(kind: string, now: number = Date.now()): Promise<number> {
    const { day } = utcDay(now);
    const row = this.ctx.storage.sql
      .exec<{ used: number }>("SELECT used FROM quota_counters WHERE kind = ? AND day = ?", kind, day)
      .toArray()[0];
    return row?.used ?? 0;
  }
}

export function tenantQuota(env: Env, tenantId: string) {
  return env.QUOTA.get(env.QUOTA.idFromName(tenantId));
}
