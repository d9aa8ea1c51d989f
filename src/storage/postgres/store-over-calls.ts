// The DeploymentStore a Hyperdrive Worker holds: every port method forwarded to one `call(method, args)`, with the
// driver's failures logged and turned into 503 like D1's (docs/control-plane.md#hyperdrive). No `pg` import here, so
// the default build (which has no driver) answers through the very same proxy.
import { DEPLOYMENT_ROUTES } from "../../control/control-plane-routes";
import type { DeploymentStore } from "../../control/deployment-store";
import { AppError, fromDatabase } from "../../errors";

/** Runs one port call (a fresh connection per call under Hyperdrive) and resolves with the method's own answer. */
export type PortCall = (method: keyof DeploymentStore, args: unknown[]) => Promise<unknown>;

export function deploymentStoreOverCalls(call: PortCall): DeploymentStore {
  const logged = (method: keyof DeploymentStore, args: unknown[]) =>
    call(method, args).catch((error: unknown) => {
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
    });
  return Object.fromEntries(
    (Object.keys(DEPLOYMENT_ROUTES) as (keyof DeploymentStore)[]).map((method) => [
      method,
      (...args: unknown[]) => fromDatabase(logged(method, args)),
    ]),
  ) as unknown as DeploymentStore;
}
