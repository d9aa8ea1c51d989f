// The conformance suite against the store a Worker builds with CONTROL_PLANE=hyperdrive (src/http/store.ts): the same
// per-call proxy, a fresh `pg` client per call to a connection string, as Hyperdrive hands the Worker one.
import { afterAll, beforeAll } from "vitest";
import { hyperdriveDeploymentStore } from "../../src/storage/postgres/hyperdrive-store";
import { createPostgresDeploymentStore } from "../../src/storage/postgres/postgres-deployment-store";
import { describeDeploymentStore } from "../helpers/deployment-store-conformance";
import { freshPrefix, testDatabaseUrl, testPool } from "./pg-harness";

const pool = testPool();
const prefix = freshPrefix("hyper");

beforeAll(async () => {
  await createPostgresDeploymentStore({ sql: pool, prefix }).migrate();
});

afterAll(async () => {
  await pool.end();
});

describeDeploymentStore("hyperdrive → postgres", (clock) => ({
  store: hyperdriveDeploymentStore(testDatabaseUrl(), prefix, { now: clock.now }),
  async tamperArtifact(tenantId, versionId, artifactText) {
    const result = await pool.query(
      `UPDATE ${prefix}_agent_versions SET artifact = $1 WHERE tenant_id = $2 AND id = $3`,
      [artifactText, tenantId, versionId],
    );
    if (result.rowCount !== 1) throw new Error("No version row to tamper with.");
  },
}));
