// The throwaway PostgreSQL of `npm run test:control-plane`, as pools and fresh table prefixes for each test file.
import pg from "pg";
import { inject } from "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** postgres://… of the server scripts/test-control-plane.mjs started for this run. */
    databaseUrl: string;
  }
}

/** The test server's URL, on its own database or on `database` (one a test created). */
export function testDatabaseUrl(database?: string): string {
  const url = new URL(inject("databaseUrl"));
  if (database !== undefined) url.pathname = `/${database}`;
  return url.toString();
}

/** A pool on the test database; the caller ends it in afterAll. */
export function testPool(max = 20): pg.Pool {
  return new pg.Pool({ connectionString: testDatabaseUrl(), max });
}

/** A table prefix no other test uses (`label`: a few lower-case letters), so tests share one database apart. */
export function freshPrefix(label: string): string {
  return `t_${label}_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}
