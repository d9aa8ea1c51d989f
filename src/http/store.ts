// One DeploymentStore per request, so routes and services depend on the port and never on how it is stored.
// CONTROL_PLANE picks the adapter (docs/control-plane.md#three-topologies): D1, the HTTP service, or Hyperdrive.

import { callOverHyperdrive } from "control-plane-hyperdrive";
import { signWorkloadToken } from "../auth/workload-token";
import { DEPLOYMENT_ROUTES } from "../control/control-plane-routes";
import type { DeploymentStore } from "../control/deployment-store";
import { AppError, fromDatabase } from "../errors";
import { withD1Mirror } from "../storage/d1/control-plane-mirror";
import { D1DeploymentStore } from "../storage/d1/d1-deployment-store";
import { HttpDeploymentStore } from "../storage/http/http-deployment-store";
import type { AppContext } from "./context";

declare global {
  interface Env {
    /** PostgreSQL through Hyperdrive, with CONTROL_PLANE=hyperdrive only (a `[[hyperdrive]]` binding). */
    HYPERDRIVE?: Hyperdrive;
    /** The control plane's table prefix in PostgreSQL (default `agent_threads_deploy`), for CONTROL_PLANE=hyperdrive. */
    CONTROL_PLANE_PREFIX?: string;
  }
}

export function deploymentStore(c: AppContext): DeploymentStore {
  return deploymentStoreOf(c.env);
}

/** The same store from the Worker's bindings alone, for a service that is handed `env` rather than a request. */
export function deploymentStoreOf(env: Env): DeploymentStore {
  const mode: string = env.CONTROL_PLANE || "d1";
  if (mode === "d1") return new D1DeploymentStore(env.DB);
  if (mode === "http") return withD1Mirror(httpStore(env), env.DB);
  if (mode === "hyperdrive") return withD1Mirror(hyperdriveStore(env), env.DB);
  throw new Error(`CONTROL_PLANE must be "d1", "http" or "hyperdrive", not ${JSON.stringify(mode)}.`);
}

function httpStore(env: Env): DeploymentStore {
  const keys = env.CONTROL_PLANE_TOKEN;
  if (!env.CONTROL_PLANE_URL || keys === undefined || keys === "") {
    throw new Error("CONTROL_PLANE=http needs CONTROL_PLANE_URL and the CONTROL_PLANE_TOKEN secret.");
  }
  return new HttpDeploymentStore({
    baseUrl: env.CONTROL_PLANE_URL,
    token: (scope) => signWorkloadToken(keys, { deployment: `agent-threads:${env.ENVIRONMENT}`, scope }),
  });
}

/**
 * The Postgres adapter over env.HYPERDRIVE. `pg` costs ~40 KB gzip, past the Worker's 450 KB budget, so the default
 * build aliases `control-plane-hyperdrive` to a shim (wrangler.toml) and only a Hyperdrive build, from a config whose
 * alias maps it to ./src/storage/postgres/hyperdrive-store.ts, bundles the real module (docs/control-plane.md#hyperdrive).
 */
function hyperdriveStore(env: Env): DeploymentStore {
  const binding = env.HYPERDRIVE;
  if (binding === undefined)
    throw new Error("CONTROL_PLANE=hyperdrive needs a [[hyperdrive]] binding HYPERDRIVE.");
  const call = (method: keyof DeploymentStore, args: unknown[]) =>
    callOverHyperdrive(binding.connectionString, env.CONTROL_PLANE_PREFIX, method, args).catch(
      (error: unknown) => {
        // The caller sees 503; the operator needs the driver's reason (never the connection string).
        if (!(error instanceof AppError)) {
          console.error(
            JSON.stringify({
              level: "error",
              message: "control plane (hyperdrive) failed",
              method,
              error: String(error),
            }),
          );
        }
        throw error;
      },
    );
  return Object.fromEntries(
    (Object.keys(DEPLOYMENT_ROUTES) as (keyof DeploymentStore)[]).map((method) => [
      method,
      (...args: unknown[]) => fromDatabase(call(method, args)),
    ]),
  ) as unknown as DeploymentStore;
}
