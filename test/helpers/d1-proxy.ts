// D1 bindings for edge-path tests: one that counts every use, one that fails every use (an outage), and the Worker's
// fetch under either, so a test can say how many D1 calls a request made or what it does while D1 is down.
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { app } from "../../src/app";
import { API } from "./tenants";

/** Every way into D1: a statement is prepared, a batch or script sent, a session opened. */
const ENTRY_POINTS = new Set(["prepare", "batch", "exec", "withSession", "dump"]);

export interface CountingD1 {
  db: D1Database;
  /** Calls made so far, by entry point and first SQL word (`prepare:SELECT`). */
  readonly calls: string[];
  reset(): void;
}

export function countingD1(db: D1Database = env.DB): CountingD1 {
  const calls: string[] = [];
  const proxy = new Proxy(db, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof property !== "string" || !ENTRY_POINTS.has(property) || typeof value !== "function")
        return value;
      return (...args: unknown[]) => {
        const sql = typeof args[0] === "string" ? args[0].trim().split(/\s+/)[0] : "";
        calls.push(sql === "" ? property : `${property}:${sql}`);
        return value.apply(target, args);
      };
    },
  });
  return {
    db: proxy,
    calls,
    reset: () => {
      calls.length = 0;
    },
  };
}

/** A D1 binding whose every call fails the way an unreachable database does. */
export function failingD1(db: D1Database = env.DB): D1Database {
  const down = () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
  return new Proxy(db, {
    get(target, property, receiver) {
      if (property === "batch" || property === "exec" || property === "dump") return down;
      if (property === "prepare") {
        return (sql: string) => {
          const statement = target.prepare(sql);
          const failing = new Proxy(statement, {
            get(s, p, r) {
              if (p === "first" || p === "run" || p === "all" || p === "raw") return down;
              if (p === "bind") return (...values: unknown[]) => new Proxy(s.bind(...values), this);
              return Reflect.get(s, p, r);
            },
          });
          return failing;
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

/** The Worker's fetch with `db` as its D1 binding (the thread objects keep the real one). */
export async function fetchWithDb(db: D1Database, path: string, init: RequestInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await app.fetch(new Request(`${API}${path}`, init), { ...env, DB: db }, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}
