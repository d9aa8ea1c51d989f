// Bench-only entry for B7 (never deployed): the product Worker and its objects, with every D1 call made to wait a
// simulated round trip first. The bench sets the wait with POST /__bench/d1-delay?ms=N and measures the same server
// with and without it, so only the distance to D1 differs between the two figures.
import { app } from "../../../src/app";
import { TenantQuota as ProductTenantQuota } from "../../../src/objects/tenant-quota";
import { ThreadAgent as ProductThreadAgent } from "../../../src/objects/thread-agent";

export { TenantEvals } from "../../../src/objects/tenant-evals";
export { TenantEvents } from "../../../src/objects/tenant-events";

/** The simulated one-way-and-back time to D1's primary, in ms; module state, shared by the Worker and its objects. */
let delayMs = 0;

const wait = () =>
  delayMs > 0 ? new Promise<void>((resolve) => setTimeout(resolve, delayMs)) : Promise.resolve();

const RUNS = new Set(["first", "run", "all", "raw"]);

/** `statement` whose executions wait first; `bind` keeps the wrapper. */
function delayedStatement(statement: D1PreparedStatement): D1PreparedStatement {
  return new Proxy(statement, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      if (property === "bind") return (...args: unknown[]) => delayedStatement(target.bind(...args));
      if (typeof property === "string" && RUNS.has(property))
        return async (...args: unknown[]) => {
          await wait();
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

/** A batch's statements go to D1 unwrapped (one round trip for the batch). */
const unwrapped = new WeakMap<object, D1PreparedStatement>();

function delayed(db: D1Database): D1Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === "prepare")
        return (sql: string) => {
          const raw = target.prepare(sql);
          const wrapped = delayedStatement(raw);
          unwrapped.set(wrapped, raw);
          return wrapped;
        };
      if (property === "batch")
        return async (statements: D1PreparedStatement[]) => {
          await wait();
          return target.batch(statements.map((s) => unwrapped.get(s) ?? s));
        };
      if (property === "exec")
        return async (sql: string) => {
          await wait();
          return target.exec(sql);
        };
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export class ThreadAgent extends ProductThreadAgent {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, { ...env, DB: delayed(env.DB) });
  }
}

export class TenantQuota extends ProductTenantQuota {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, { ...env, DB: delayed(env.DB) });
  }
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === "/__bench/d1-delay" && request.method === "POST") {
      delayMs = Math.max(0, Math.min(1_000, Number(url.searchParams.get("ms")) || 0));
      return Response.json({ delayMs });
    }
    return app.fetch(request, { ...env, DB: delayed(env.DB) }, ctx);
  },
} satisfies ExportedHandler<Env>;
