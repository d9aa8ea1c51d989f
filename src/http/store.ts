// One DeploymentStore per request, so routes and services depend on the port and never on how it is stored.

import type { DeploymentStore } from "../control/deployment-store";
import { D1DeploymentStore } from "../storage/d1/d1-deployment-store";
import type { AppContext } from "./context";

export function deploymentStore(c: AppContext): DeploymentStore {
  return deploymentStoreOf(c.env);
}

/** The same store from the Worker's bindings alone, for a service that is handed `env` rather than a request. */
export function deploymentStoreOf(env: Env): DeploymentStore {
  return new D1DeploymentStore(env.DB);
}
