// `npm run control-plane`: the control-plane service on Node over PostgreSQL (docs/control-plane.md#running-the-service).
// Env: DATABASE_URL, CONTROL_PLANE_KEYS, PORT (default 8790), HOST (default 127.0.0.1), CONTROL_PLANE_PREFIX,
// CONTROL_PLANE_AUDIENCE, CONTROL_PLANE_MIGRATE=1 (migrate at start: only for a database the service owns alone).
import { serve } from "@hono/node-server";
import pg from "pg";
import { parseKeySet } from "../auth/signing-keys";
import { createPostgresDeploymentStore, DEFAULT_PREFIX } from "../storage/postgres/postgres-deployment-store";
import { postgresReadiness } from "../storage/postgres/readiness";
import { createControlPlaneApp } from "./app";

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === "") {
    console.error(`control-plane: ${name} is not set (docs/control-plane.md#running-the-service).`);
    process.exit(2);
  }
  return value;
}

async function main() {
  const databaseUrl = required("DATABASE_URL");
  const keys = required("CONTROL_PLANE_KEYS");
  parseKeySet(keys); // a malformed key set stops the service here rather than refusing every request
  const port = Number(process.env.PORT ?? "8790");
  const host = process.env.HOST ?? "127.0.0.1";
  const prefix = process.env.CONTROL_PLANE_PREFIX || DEFAULT_PREFIX;
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: Number(process.env.DATABASE_POOL_MAX ?? "10"),
  });
  pool.on("error", (error) =>
    console.error(`control-plane: idle database connection failed: ${error.message}`),
  );
  const store = createPostgresDeploymentStore({ sql: pool, prefix });
  if (process.env.CONTROL_PLANE_MIGRATE === "1") await store.migrate();

  const app = createControlPlaneApp({
    store,
    keys,
    ...(process.env.CONTROL_PLANE_AUDIENCE ? { audience: process.env.CONTROL_PLANE_AUDIENCE } : {}),
    ready: () => postgresReadiness(pool, prefix),
    // Access logs stay off the hot path; errors and refused tokens are logged.
  });
  const server = serve({ fetch: app.fetch, port, hostname: host }, (info) => {
    console.log(`control-plane: listening on http://${host}:${info.port} (tables ${prefix}_*)`);
  });
  const stop = () => {
    server.close();
    void pool.end().finally(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

void main().catch((error: unknown) => {
  console.error(`control-plane: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
