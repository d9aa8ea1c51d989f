// The conformance suite against the store a Worker builds with CONTROL_PLANE=hyperdrive (src/http/store.ts): the same
// per-call proxy, a fresh `pg` client per call to a connection string, as Hyperdrive hands the Worker one.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AppError } from "../../src/errors";
import { hyperdriveDeploymentStore as absentStore } from "../../src/storage/postgres/hyperdrive-absent";
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

describe("the Hyperdrive store when PostgreSQL or the driver is missing", () => {
  const unavailable = async (call: Promise<unknown>) => {
    const error = await call.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "upstream_unavailable", status: 503 });
  };

  it("answers 503 upstream_unavailable when nothing listens at the connection string, and logs why", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const url = new URL(testDatabaseUrl());
      url.port = "1";
      await unavailable(hyperdriveDeploymentStore(url.toString(), prefix).getPin("ten_x", "thr_x"));
      expect(String(logged.mock.calls[0]?.[0])).toContain('"method":"getPin"');
    } finally {
      logged.mockRestore();
    }
  });

  it("answers 503 in the default build, whose alias has no driver, naming the fix in the log", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await unavailable(
        absentStore().assignThread("ten_x", {
          agentId: "agt_x",
          environment: "production",
          threadId: "thr_x",
        }),
      );
      expect(String(logged.mock.calls[0]?.[0])).toContain("build:hyperdrive-config");
    } finally {
      logged.mockRestore();
    }
  });
});
