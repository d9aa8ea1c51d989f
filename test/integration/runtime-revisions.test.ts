// Runtime revisions (docs/api.md#runtime-revisions): GET /v1/runtime names this deployment's, a release may name a
// registered older one, and a version needing a capability its runtime lacks is refused with 409 runtime_incompatible.
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CURRENT_RUNTIME } from "../../src/control/runtime";
import worker from "../../src/index";
import { releaseResponse, runtimeResponse } from "../../src/shared/api";
import { D1DeploymentStore } from "../../src/storage/d1/d1-deployment-store";
import {
  api,
  countRows,
  createApiKey,
  createPublishedAgent,
  createTenant,
  expectError,
  fieldPaths,
  json,
  publish,
  saveDraft,
  unique,
  validArtifact,
} from "../helpers/tenants";

const store = () => new D1DeploymentStore(env.DB);

/** Registers a revision with this deployment's capabilities minus `without`, as an older build would have. */
async function olderRuntime(without: string[]): Promise<string> {
  const id = unique("runtime-old");
  await store().registerRuntime({
    id,
    supportedSchemaVersions: [1],
    capabilities: CURRENT_RUNTIME.capabilities.filter((c) => !without.includes(c)),
  });
  return id;
}

const clientTool = { name: "pick_color", description: "Asks the page for a colour.", executor: "client" };
const serverTool = (extra: Record<string, unknown> = {}) => ({
  name: "refund",
  description: "Refunds an order.",
  url: "https://tools.example.com/refund",
  signingSecret: "hook-signing",
  ...extra,
});

/** An agent whose version 1 is plain and version 2 is `artifact`. */
async function agentWithVersion2(apiKey: string, artifact: Record<string, unknown>) {
  const { agent } = await createPublishedAgent(apiKey);
  await saveDraft(apiKey, agent.id, 1, validArtifact(artifact));
  await publish(apiKey, agent.id, 2);
  return agent;
}

function postRelease(apiKey: string, agentId: string, version: number, runtimeRevisionId?: string) {
  return api(`/v1/agents/${agentId}/releases`, {
    method: "POST",
    key: apiKey,
    body: {
      environment: "development",
      allocations: [{ version, weight: 10_000 }],
      ...(runtimeRevisionId !== undefined ? { runtimeRevisionId } : {}),
    },
  });
}

const refusalDetails = z.array(
  z.object({ path: z.string(), message: z.string(), missing: z.array(z.string()) }),
);

describe("GET /v1/runtime", () => {
  it("answers this deployment's revision and its capabilities to a tenant key, read scope included", async () => {
    const tenant = await createTenant();
    const read = await createApiKey(tenant, "read");
    const body = await json(await api("/v1/runtime", { key: read.apiKey }), 200, runtimeResponse);
    expect(body).toEqual({ id: CURRENT_RUNTIME.id, capabilities: CURRENT_RUNTIME.capabilities });
    expect(body.capabilities).toEqual(
      expect.arrayContaining(["tools.server", "tools.client", "approvals", "attachments"]),
    );
    await expectError(await api("/v1/runtime"), 401, "unauthenticated");
  });
});

describe("registration", () => {
  it("the scheduled job registers this deployment's revision with its current capabilities", async () => {
    await store().registerRuntime({ ...CURRENT_RUNTIME, capabilities: [] });
    const ctx = createExecutionContext();
    await worker.scheduled(
      createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }),
      env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(await store().getRuntime(CURRENT_RUNTIME.id)).toEqual(CURRENT_RUNTIME);
  });
});

describe("releases on a runtime revision", () => {
  it("refuses a version an older revision cannot run with 409 runtime_incompatible naming what it lacks, storing nothing; the current runtime takes it", async () => {
    const tenant = await createTenant();
    const older = await olderRuntime(["attachments", "tools.client", "approvals"]);
    const agent = await agentWithVersion2(tenant.apiKey, {
      tools: [clientTool, serverTool({ approval: "always" })],
    });

    const refused = await expectError(await postRelease(tenant.apiKey, agent.id, 2, older), 409, "conflict");
    expect(refused.reason).toBe("runtime_incompatible");
    expect(refused.message).toBe(`Runtime '${older}' lacks tools.client, approvals, needed by version 2.`);
    expect(refusalDetails.parse(refused.details)).toEqual([
      {
        path: "allocations.0.version",
        message: `version 2 needs tools.client, approvals, which runtime '${older}' lacks`,
        missing: ["tools.client", "approvals"],
      },
    ]);
    expect(await countRows("releases", tenant.tenantId)).toBe(0);

    // What the older revision can run, it runs: the plain version 1 is released on it.
    const onOlder = await json(await postRelease(tenant.apiKey, agent.id, 1, older), 201, releaseResponse);
    expect(onOlder.runtimeRevision).toBe(older);
    // The same version 2 on this deployment's runtime, named or by default, is accepted.
    for (const named of [undefined, CURRENT_RUNTIME.id]) {
      const release = await json(await postRelease(tenant.apiKey, agent.id, 2, named), 201, releaseResponse);
      expect(release.runtimeRevision).toBe(CURRENT_RUNTIME.id);
    }
    const activated = await api(`/v1/agents/${agent.id}/releases/${onOlder.id}/activate`, {
      method: "POST",
      key: tenant.apiKey,
    });
    expect((await json(activated, 200, releaseResponse)).active).toBe(true);
  });

  it.each([
    ["tools.server", { tools: [serverTool()] }],
    ["tools.client", { tools: [clientTool] }],
    [
      "approvals",
      { tools: [serverTool({ approval: { when: [{ pointer: "/amount", op: "gt", value: 50 }] } })] },
    ],
    ["handoff", { handoff: { enabled: true } }],
    ["handoff", { tools: [serverTool({ approval: { onTimeout: "handoff" } })] }],
    ["upgrades", { upgrades: "offer" }],
    ["attachments", { attachments: { enabled: true } }],
    ["context", { greeting: "Hello {{name|there}}!" }],
  ])("a version needing %s is refused by a revision lacking only that (%j)", async (capability, artifact) => {
    const tenant = await createTenant();
    const agent = await agentWithVersion2(tenant.apiKey, artifact);
    const older = await olderRuntime([capability]);
    const refused = await expectError(await postRelease(tenant.apiKey, agent.id, 2, older), 409, "conflict");
    expect(refused.reason).toBe("runtime_incompatible");
    expect(refusalDetails.parse(refused.details).map((d) => d.missing)).toEqual([[capability]]);
  });

  it("refuses an unknown runtimeRevisionId with 400 naming the field, storing nothing", async () => {
    const tenant = await createTenant();
    const { agent } = await createPublishedAgent(tenant.apiKey);
    const error = await expectError(
      await postRelease(tenant.apiKey, agent.id, 1, unique("runtime-never")),
      400,
      "bad_request",
    );
    expect(fieldPaths(error)).toEqual(["runtimeRevisionId"]);
    expect(await countRows("releases", tenant.tenantId)).toBe(0);
  });

  it("refuses to activate a release whose revision was registered again without a capability its version needs", async () => {
    const tenant = await createTenant();
    const agent = await agentWithVersion2(tenant.apiKey, { tools: [clientTool] });
    const runtimeId = await olderRuntime([]);
    const release = await json(
      await postRelease(tenant.apiKey, agent.id, 2, runtimeId),
      201,
      releaseResponse,
    );
    await store().registerRuntime({
      id: runtimeId,
      supportedSchemaVersions: [1],
      capabilities: ["tools.server"],
    });

    const activate = () =>
      api(`/v1/agents/${agent.id}/releases/${release.id}/activate`, { method: "POST", key: tenant.apiKey });
    const refused = await expectError(await activate(), 409, "conflict");
    expect(refused.reason).toBe("runtime_incompatible");
    expect(refusalDetails.parse(refused.details)[0]?.missing).toEqual(["tools.client"]);
    expect(await countRows("active_releases", tenant.tenantId)).toBe(0);

    await store().registerRuntime({
      id: runtimeId,
      supportedSchemaVersions: [1],
      capabilities: ["tools.server", "tools.client"],
    });
    expect((await json(await activate(), 200, releaseResponse)).active).toBe(true);
  });

  it("keeps the revision registered before capability lists (runtime-2026-11) able to run all but attachments", async () => {
    // As that build left it: a row without capabilities, then migration 0020's backfill.
    await env.DB.prepare(
      `INSERT OR REPLACE INTO runtime_revisions (id, supported_schema_versions, created_at)
       VALUES ('runtime-2026-11', '[1]', '2026-11-01T00:00:00.000Z')`,
    ).run();
    const migration = (env.TEST_MIGRATIONS ?? []).find((m) => m.name.startsWith("0020_"));
    const backfill = migration?.queries.filter((q) => q.includes("UPDATE runtime_revisions")) ?? [];
    expect(backfill).toHaveLength(1);
    for (const query of backfill) await env.DB.prepare(query).run();

    const old = await store().getRuntime("runtime-2026-11");
    expect(old?.capabilities).toEqual(CURRENT_RUNTIME.capabilities.filter((c) => c !== "attachments"));
    const tenant = await createTenant();
    const agent = await agentWithVersion2(tenant.apiKey, {
      tools: [clientTool, serverTool({ approval: "always" })],
    });
    const release = await json(
      await postRelease(tenant.apiKey, agent.id, 2, "runtime-2026-11"),
      201,
      releaseResponse,
    );
    expect(release.runtimeRevision).toBe("runtime-2026-11");
  });
});
