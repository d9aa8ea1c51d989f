// The DeploymentStore conformance suite in Node against the in-memory reference and a real PostgreSQL: the same
// rules as D1 in workerd (test/integration/deployment-store.test.ts), held by the same tests.
import { afterAll, beforeAll } from "vitest";
import { createPostgresDeploymentStore } from "../../src/storage/postgres/postgres-deployment-store";
import { describeDeploymentStore } from "../helpers/deployment-store-conformance";
import { memoryStoreUnderTest } from "../helpers/memory-deployment-store";
import { freshPrefix, testPool } from "./pg-harness";

describeDeploymentStore("memory", memoryStoreUnderTest);

const pool = testPool();
const prefix = freshPrefix("conf");

beforeAll(async () => {
  await createPostgresDeploymentStore({ sql: pool, prefix }).migrate();
});

afterAll(async () => {
  await pool.end();
});

describeDeploymentStore("postgres", (clock) => ({
  store: createPostgresDeploymentStore({ sql: pool, prefix, now: clock.now }),
  async tamperArtifact(tenantId, versionId, artifactText) {
    const result = await pool.query(
      `UPDATE ${prefix}_agent_versions SET artifact = $1 WHERE tenant_id = $2 AND id = $3`,
      [artifactText, tenantId, versionId],
    );
    if (result.rowCount !== 1) throw new Error("No version row to tamper with.");
  },
}));
