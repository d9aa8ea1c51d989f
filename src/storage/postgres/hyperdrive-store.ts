// CONTROL_PLANE=hyperdrive: the Postgres adapter inside the Worker over a Hyperdrive binding
// (docs/control-plane.md#hyperdrive). One `pg` client per call, as Hyperdrive pools the real connections.
import pg from "pg";
import type { DeploymentStore } from "../../control/deployment-store";
import { createPostgresDeploymentStore, DEFAULT_PREFIX } from "./postgres-deployment-store";
import { deploymentStoreOverCalls } from "./store-over-calls";

/** Only for tests: the clock the store stamps rows with (the Worker uses the real one). */
export interface HyperdriveStoreOptions {
  now?: () => Date;
}

/**
 * The store the Worker builds with CONTROL_PLANE=hyperdrive (src/http/store.ts): each port call on a fresh client to
 * `connectionString` (the binding's), under `prefix` (CONTROL_PLANE_PREFIX, default agent_threads_deploy).
 */
export function hyperdriveDeploymentStore(
  connectionString: string,
  prefix: string | undefined,
  options: HyperdriveStoreOptions = {},
): DeploymentStore {
  return deploymentStoreOverCalls((method, args) =>
    callOverHyperdrive(connectionString, prefix, method, args, options),
  );
}

/** Runs one port call on a fresh client to `connectionString`, closed afterwards whatever happened. */
export async function callOverHyperdrive(
  connectionString: string,
  prefix: string | undefined,
  method: keyof DeploymentStore,
  args: unknown[],
  options: HyperdriveStoreOptions = {},
): Promise<unknown> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const store = createPostgresDeploymentStore({
      sql: client,
      prefix: prefix || DEFAULT_PREFIX,
      ...(options.now ? { now: options.now } : {}),
    });
    return await (store[method] as (...a: unknown[]) => Promise<unknown>).apply(store, args);
  } finally {
    await client.end().catch(() => undefined);
  }
}
