// One DeploymentStore per request, so routes depend on the port and never on how it is stored.

import type { DeploymentStore } from "../control/deployment-store";
import { D1DeploymentStore } from "../storage/d1/d1-deployment-store";
import type { AppContext } from "./context";

export function deploymentStore(c: AppContext): DeploymentStore {
  return new D1DeploymentStore(c.env.DB);
}
