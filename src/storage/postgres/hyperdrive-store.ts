// CONTROL_PLANE=hyperdrive: the Postgres adapter inside the Worker over a Hyperdrive binding
// (docs/control-plane.md#hyperdrive). One `pg` client per call, as Hyperdrive pools the real connections.
import pg from "pg";
import type { DeploymentStore } from "../../control/deployment-store";
import { createPostgresDeploymentStore, DEFAULT_PREFIX } from "./postgres-deployment-store";

/** Runs one port call on a fresh client to `connectionString`, closed afterwards whatever happened. */
export async function callOverHyperdrive(
  connectionString: string,
  prefix: string | undefined,
  method: keyof DeploymentStore,
  args: unknown[],
): Promise<unknown> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const store = createPostgresDeploymentStore({ sql: client, prefix: prefix || DEFAULT_PREFIX });
    return await (store[method] as (...a: unknown[]) => Promise<unknown>).apply(store, args);
  } finally {
    await client.end().catch(() => undefined);
  }
}
