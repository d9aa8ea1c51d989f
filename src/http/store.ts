// One DeploymentStore per request, so routes and services depend on the port and never on how it is stored.
// CONTROL_PLANE picks the adapter (docs/control-plane.md#three-topologies): D1, the HTTP service, or Hyperdrive.

import { hyperdriveDeploymentStore } from "control-plane-hyperdrive";
import { signWorkloadToken } from "../auth/workload-token";
import type { DeploymentStore } from "../control/deployment-store";
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
 * The Postgres adapter over env.HYPERDRIVE. `pg` costs ~35 KB gzip, past the Worker's 450 KB budget, so the default
 * build aliases `control-plane-hyperdrive` to src/storage/postgres/hyperdrive-absent.ts (wrangler.toml) and only the
 * Hyperdrive build (`npm run build:hyperdrive-config`) bundles the real module (docs/control-plane.md#hyperdrive).
 */
function hyperdriveStore(env: Env): DeploymentStore {
  const binding = env.HYPERDRIVE;
  if (binding === undefined)
    throw new Error("CONTROL_PLANE=hyperdrive needs a [[hyperdrive]] binding HYPERDRIVE.");
  return hyperdriveDeploymentStore(binding.connectionString, env.CONTROL_PLANE_PREFIX);
}
