// What `control-plane-hyperdrive` resolves to in the default build: no `pg`, no Postgres adapter (~35 KB gzip past
// the Worker's budget). `npm run build:hyperdrive-config` writes a config whose alias maps the real module in
// (docs/control-plane.md#hyperdrive); here every call fails as 503 and logs why, through the same proxy.
import type { DeploymentStore } from "../../control/deployment-store";
import { deploymentStoreOverCalls } from "./store-over-calls";

export function hyperdriveDeploymentStore(): DeploymentStore {
  return deploymentStoreOverCalls(() =>
    Promise.reject(
      new Error(
        "This Worker was built without the Hyperdrive adapter: build with `npm run build:hyperdrive-config` and " +
          "`wrangler deploy -c wrangler.hyperdrive.toml` (docs/control-plane.md#hyperdrive).",
      ),
    ),
  );
}
