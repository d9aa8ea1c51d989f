// The throwaway PostgreSQL of `npm run test:control-plane`, as pools and fresh table prefixes for each test file.
import pg from "pg";
import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** postgres://… of the server scripts/test-control-plane.mjs started for this run. */
    databaseUrl: string;
  }
}

/** A pool on the test database; the caller ends it in afterAll. */
export function testPool(max = 20): pg.Pool {
  return new pg.Pool({ connectionString: inject("databaseUrl"), max });
}

/** A table prefix no other test uses (`label`: a few lower-case letters), so tests share one database apart. */
export function freshPrefix(label: string): string {
  return `t_${label}_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}
