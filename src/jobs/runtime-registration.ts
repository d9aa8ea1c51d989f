// Each deployment registers its runtime revision on its own, so a release made through another deployment sharing the control plane can name it (docs/api.md#runtime-revisions).
import { CURRENT_RUNTIME } from "../control/runtime";
import { deploymentStoreOf } from "../http/store";

/** Idempotent: the scheduled job runs it every few minutes, so a new build is registered shortly after it goes live. */
export async function registerThisRuntime(env: Env): Promise<void> {
  await deploymentStoreOf(env).registerRuntime(CURRENT_RUNTIME);
}
