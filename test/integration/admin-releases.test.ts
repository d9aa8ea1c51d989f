import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { CURRENT_RUNTIME } from "../../src/control/runtime";
import { listResponse, releaseResponse } from "../../src/shared/api";
import {
  api,
  countRows,
  createPublishedAgent,
  createRelease,
  createTenant,
  expectError,
  fieldPaths,
  json,
  publish,
  saveDraft,
  validArtifact,
} from "../helpers/tenants";

const releaseList = listResponse(releaseResponse);

async function agentWithTwoVersions(apiKey: string) {
  const { agent, version: v1 } = await createPublishedAgent(apiKey);
  await saveDraft(apiKey, agent.id, 1, validArtifact({ name: "Second" }));
  const v2 = await publish(apiKey, agent.id, 2);
  return { agent, v1, v2 };
}

function activate(apiKey: string, agentId: string, releaseId: string) {
  return api(`/v1/agents/${agentId}/releases/${releaseId}/activate`, { method: "POST", key: apiKey });
}

describe("releases", () => {
  it("creates a weighted release under the current runtime, inactive until activated", async () => {
    const tenant = await createTenant();
    const { agent, v1, v2 } = await agentWithTwoVersions(tenant.apiKey);
    const release = await createRelease(tenant.apiKey, agent.id, [
      { version: 1, weight: 5000 },
      { version: 2, weight: 5000 },
    ]);
    expect(release).toMatchObject({
      agentId: agent.id,
      environment: "development",
      runtimeRevision: CURRENT_RUNTIME.id,
      allocations: [
        { version: 1, versionId: v1.versionId, weight: 5000 },
        { version: 2, versionId: v2.versionId, weight: 5000 },
      ],
      activatedAt: null,
      active: false,
    });
    expect(release.id).toMatch(/^rel_[a-z2-7]{26}$/);
    const runtime = await env.DB.prepare("SELECT id FROM runtime_revisions WHERE id = ?")
      .bind(CURRENT_RUNTIME.id)
      .first();
    expect(runtime).toEqual({ id: CURRENT_RUNTIME.id });

    const read = await json(
      await api(`/v1/agents/${agent.id}/releases/${release.id}`, { key: tenant.apiKey }),
      200,
      releaseResponse,
    );
    expect(read).toEqual(release);
  });

  it("activating replaces the previously active release of that environment", async () => {
    const tenant = await createTenant();
    const { agent } = await agentWithTwoVersions(tenant.apiKey);
    const first = await createRelease(tenant.apiKey, agent.id, [{ version: 1, weight: 10_000 }]);
    const activated = await json(await activate(tenant.apiKey, agent.id, first.id), 200, releaseResponse);
    expect(activated.active).toBe(true);
    expect(activated.activatedAt).not.toBeNull();

    const second = await createRelease(tenant.apiKey, agent.id, [{ version: 2, weight: 10_000 }]);
    const staging = await createRelease(tenant.apiKey, agent.id, [{ version: 1, weight: 10_000 }], "staging");
    await json(await activate(tenant.apiKey, agent.id, staging.id), 200, releaseResponse);
    await json(await activate(tenant.apiKey, agent.id, second.id), 200, releaseResponse);

    const list = await json(
      await api(`/v1/agents/${agent.id}/releases`, { key: tenant.apiKey }),
      200,
      releaseList,
    );
    const active = Object.fromEntries(list.items.map((r) => [r.id, r.active]));
    expect(active).toEqual({ [first.id]: false, [second.id]: true, [staging.id]: true });
  });

  it.each([
    ["weights not summing to 10,000", [{ version: 1, weight: 5000 }], "allocations"],
    [
      "a zero weight",
      [
        { version: 1, weight: 10_000 },
        { version: 2, weight: 0 },
      ],
      "allocations.1.weight",
    ],
    [
      "a fractional weight",
      [
        { version: 1, weight: 9999.5 },
        { version: 2, weight: 0.5 },
      ],
      "allocations.0.weight",
    ],
    ["a version that does not exist", [{ version: 9, weight: 10_000 }], "allocations.0.version"],
    [
      "a duplicate version",
      [
        { version: 1, weight: 5000 },
        { version: 1, weight: 5000 },
      ],
      "allocations.1.version",
    ],
    ["no allocations", [], "allocations"],
    ["a version id instead of a number", [{ version: "ver_x", weight: 10_000 }], "allocations.0.version"],
  ])("refuses %s with 400 naming the field, storing nothing", async (_label, allocations, path) => {
    const tenant = await createTenant();
    const { agent } = await agentWithTwoVersions(tenant.apiKey);
    const res = await api(`/v1/agents/${agent.id}/releases`, {
      method: "POST",
      key: tenant.apiKey,
      body: { environment: "development", allocations },
    });
    const error = await expectError(res, 400, "bad_request");
    expect(fieldPaths(error)).toContain(path);
    expect(await countRows("releases", tenant.tenantId)).toBe(0);
    expect(await countRows("release_allocations", tenant.tenantId)).toBe(0);
  });

  it.each([
    ["an unknown environment", { environment: "qa", allocations: [{ version: 1, weight: 10_000 }] }],
    [
      "an unknown field",
      { environment: "development", allocations: [{ version: 1, weight: 10_000 }], runtimeRevision: "x" },
    ],
    ["a missing environment", { allocations: [{ version: 1, weight: 10_000 }] }],
  ])("refuses %s with 400, storing nothing", async (_label, body) => {
    const tenant = await createTenant();
    const { agent } = await createPublishedAgent(tenant.apiKey);
    const res = await api(`/v1/agents/${agent.id}/releases`, { method: "POST", key: tenant.apiKey, body });
    await expectError(res, 400, "bad_request");
    expect(await countRows("releases", tenant.tenantId)).toBe(0);
  });

  it("answers an unknown release, or another agent's release, with 404 and activates nothing", async () => {
    const tenant = await createTenant();
    const { agent } = await createPublishedAgent(tenant.apiKey);
    const { agent: sibling } = await createPublishedAgent(tenant.apiKey);
    const release = await createRelease(tenant.apiKey, sibling.id, [{ version: 1, weight: 10_000 }]);
    await expectError(await activate(tenant.apiKey, agent.id, "rel_nothere"), 404, "not_found");
    await expectError(await activate(tenant.apiKey, agent.id, release.id), 404, "not_found");
    await expectError(
      await api(`/v1/agents/${agent.id}/releases/${release.id}`, { key: tenant.apiKey }),
      404,
      "not_found",
    );
    expect(await countRows("active_releases", tenant.tenantId)).toBe(0);
  });
});
