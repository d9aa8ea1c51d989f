// Runs the DeploymentStore conformance suite against D1 (real, in workerd) and the in-memory reference.
import { env } from "cloudflare:workers";
import { D1DeploymentStore } from "../../src/storage/d1/d1-deployment-store";
import { describeDeploymentStore } from "../helpers/deployment-store-conformance";
import { memoryStoreUnderTest } from "../helpers/memory-deployment-store";

describeDeploymentStore("D1", (clock) => ({
  store: new D1DeploymentStore(env.DB, { now: clock.now }),
  async tamperArtifact(tenantId, versionId, artifactText) {
    const result = await env.DB.prepare(
      "UPDATE agent_versions SET artifact = ? WHERE tenant_id = ? AND id = ?",
    )
      .bind(artifactText, tenantId, versionId)
      .run();
    if (result.meta.changes !== 1) throw new Error("No version row to tamper with.");
  },
}));

describeDeploymentStore("memory", memoryStoreUnderTest);
